import type { DaneHost, EmailCheckError } from '../../engine/mail/check-email.js';
import type { MailServerCheck } from '../../engine/mail/check-mail-servers.js';
import type { MxHost } from '../../engine/mail/resolve-mx.js';
import type { SpfNode } from '../../engine/mail/check-spf.js';
import type { Finding } from '../../engine/findings.js';
import { presentFindings } from '../findings-table.js';
import type { RecordSchema } from '../record-schema.js';
import { getPath } from '../record-schema.js';
import { presentMxHosts } from './mx-schema.js';
import { presentSpfTree } from './spf-schema.js';
import { FINDINGS_CSV } from '../findings-columns.js';
import type { DkimSelectorResult } from '../../engine/mail/check-dkim.js';
import { presentDkimSelectors } from './dkim-schema.js';
import type { MailDnssecCheck } from '../../engine/mail/check-mail-dnssec.js';

/** One mail server per line: where it was probed and how far the conversation got. */
export function presentMailServers(servers: readonly MailServerCheck[]): string {
  if (servers.length === 0) return 'none';
  return servers
    .map((server) => {
      const where = `${server.host}${server.address ? ` ${server.address.includes(':') ? `[${server.address}]` : server.address}:${server.port}` : ''}`;
      if (!server.probe) return `${where}: not probed (${server.error?.message ?? 'no address'})`;
      const probe = server.probe;
      if (probe.failure) return `${where}: ${probe.failure.code} at ${probe.failure.stage} (${probe.failure.message})`;
      const banner = probe.banner ? `${probe.banner.code}${probe.banner.hostname ? ` ${probe.banner.hostname}` : ''}` : 'no banner';
      const tls = probe.tls.established
        ? `STARTTLS ${probe.tls.protocol ?? ''}`.trim()
        : probe.tls.offered === null
          ? 'STARTTLS not learnt (no EHLO reply)'
          : probe.tls.offered
            ? `STARTTLS failed${probe.tls.error ? ` (${probe.tls.error})` : ''}`
            : 'no STARTTLS';
      return `${where}: banner ${banner}, ${tls}`;
    })
    .join('\n');
}

const CHECK_GROUPS = {
  mx: ['mx.status', 'mx.records'],
  spf: ['spf.status', 'spf.record', 'spf.lookups', 'spf.void_lookups', 'spf.tree'],
  dmarc: ['dmarc.location', 'dmarc.record', 'dmarc.policy'],
  mta_sts: ['mta_sts.record', 'mta_sts.policy.mode', 'mta_sts.policy_error.message'],
  tls_rpt: ['tls_rpt.record'],
  dkim: ['dkim.status', 'dkim.selectors'],
  bimi: ['bimi.status', 'bimi.record', 'bimi.dmarc.met'],
  dnssec: ['dnssec.domain.status', 'dnssec.mx'],
  smtp: ['smtp'],
  dane: ['dane'],
  summary: ['summary.error', 'summary.warning', 'summary.unknown', 'summary.info', 'summary.pass'],
  // Whether the checks could run, and why not: a CSV row carries it as the json record does.
  failure: ['failure.code', 'failure.reason', 'failure.message'],
} as const;

/**
 * Columns of the e-mail test report (`netintel email`, GET /api/email-tests,
 * both forms). Table and CSV views carry one line per MX host, per mail
 * server and per finding (grouped by severity); json, ndjson and xml keep
 * the whole report, every check's record included.
 */
export const EMAIL_SCHEMA: RecordSchema = {
  kind: 'email',
  mainValue: ['summary.error'],
  columns: [
    'test',
    'domain',
    'domain_unicode',
    'server',
    'port',
    ...CHECK_GROUPS.mx,
    ...CHECK_GROUPS.spf,
    ...CHECK_GROUPS.dmarc,
    ...CHECK_GROUPS.mta_sts,
    ...CHECK_GROUPS.tls_rpt,
    ...CHECK_GROUPS.dkim,
    ...CHECK_GROUPS.bimi,
    ...CHECK_GROUPS.dnssec,
    ...CHECK_GROUPS.smtp,
    ...CHECK_GROUPS.dane,
    'errors',
    'checked',
    ...CHECK_GROUPS.failure,
    ...CHECK_GROUPS.summary,
    'findings',
    'checked_at',
  ],
  groups: CHECK_GROUPS,
  identity: ['domain', 'test'],
  tableColumns: ['test', 'checked', 'mx.status', 'spf.status', 'dmarc.policy', 'mta_sts.policy.mode', 'summary.error', 'summary.warning', 'summary.unknown', 'summary.info', 'summary.pass'],
  csvFlat: FINDINGS_CSV,
  presentColumn: (record, column) => {
    const value = getPath(record, column);
    if (value === null || value === undefined) return value;
    switch (column) {
      case 'mx.records':
        return presentMxHosts(value as MxHost[]);
      case 'spf.tree':
        return presentSpfTree(value as SpfNode);
      case 'smtp':
        return presentMailServers(value as MailServerCheck[]);
      case 'dkim.selectors':
        return presentDkimSelectors(value as DkimSelectorResult[], getPath(record, 'dkim.probed') as 'given' | 'common');
      case 'dnssec.mx':
        return (value as MailDnssecCheck[]).map((check) => `${check.name}: ${check.status}`).join('\n');
      case 'dane':
        return (value as DaneHost[]).map((host) => `${host.host}: ${host.verdict}${host.tlsa.records.length > 0 ? ` (${host.tlsa.records.length} TLSA, DNSSEC ${host.dnssec.status})` : ''}`).join('\n');
      case 'errors':
        return (value as EmailCheckError[]).length === 0 ? null : (value as EmailCheckError[]).map((error) => `${error.check}: ${error.code} (${error.message})`).join('\n');
      case 'findings':
        return presentFindings(value as Finding[]);
      default:
        return value;
    }
  },
};
