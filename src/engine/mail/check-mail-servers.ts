import { ipVersionOf } from '../address/ip-text.js';
import type { EngineContext } from '../context.js';
import { finding, type Finding } from '../findings.js';
import { createConnectionBudget, fanOutLimits } from '../fan-out.js';
import { NetintelError } from '../../errors.js';
import type { Authenticate } from '../smtp/dane.js';
import type { SmtpResult } from '../smtp/smtp-result.js';
import { createMailDns, type MailDns } from './mail-dns.js';
import { failureJson, type FailureJson } from './mail-errors.js';
import type { MxResult } from './resolve-mx.js';

/** SMTP connectivity of one mail server: the probe of its first address on the SMTP port with STARTTLS. */
export interface MailServerCheck {
  /** The MX exchange (or the server given, or the domain itself for an implicit MX). */
  host: string;
  /** The MX preference, null for a server given directly or an implicit MX. */
  preference: number | null;
  port: number;
  /** The address probed, null when none was. */
  address: string | null;
  /** The SMTP probe's record (connect, banner, EHLO, STARTTLS), null when the host was not probed. */
  probe: SmtpResult | null;
  /** Why the host was not probed (code `limited`: the check's SMTP connections were spent), or why the probe itself failed; null otherwise. */
  error: FailureJson | null;
  /** The probe's findings, each naming the host, and this check's own. */
  findings: Finding[];
}

export interface MailServerOptions {
  /** SMTP port (default 25). */
  port?: number;
  /** Connect to this address instead of the host's own (tests). */
  address?: string;
  /** The EHLO name to send (default: the probe's). */
  ehloName?: string;
  /** Deadline of each SMTP stage in milliseconds (default: the context's timeout). */
  stageTimeoutMs?: number;
  /** Deadline of the greeting in milliseconds (default: the probe's, at least 30 s: servers delay it on purpose). */
  greetingTimeoutMs?: number;
  /** Extra trusted CA certificates (PEM) for the STARTTLS certificate check. */
  tlsCa?: readonly string[];
  /** Also look up the host's TLSA records and match them with its certificate chain (RFC 7672). */
  dane?: { authenticate?: Authenticate };
}

/**
 * Probes every distinct mail server of an MX result (the domain itself for
 * an implicit MX, none for a null MX) concurrently, in preference order,
 * up to the context's SMTP connections per check (fan-out.ts); a server
 * past it is listed with an `smtp_connections_limited` finding.
 */
export async function checkMailServers(ctx: EngineContext, mx: MxResult, options: MailServerOptions = {}, dns: MailDns = createMailDns(ctx)): Promise<MailServerCheck[]> {
  const port = options.port ?? 25;
  const targets: Array<{ host: string; preference: number | null; addresses: string[] | null }> = [];
  if (mx.status === 'implicit') {
    targets.push({ host: mx.domain, preference: null, addresses: mx.implicit_addresses });
  } else {
    const seen = new Set<string>();
    for (const record of mx.records) {
      const key = record.exchange.toLowerCase();
      if (record.exchange === '.' || seen.has(key)) continue;
      seen.add(key);
      // An IP literal is not probed: senders look it up as a name and find nothing (see mx_ip_literal).
      targets.push({ host: record.exchange, preference: record.preference, addresses: record.ip_literal ? [] : record.error && record.addresses.length === 0 ? null : record.addresses.map((item) => item.address) });
    }
  }
  // One connection per server probed (its first address); the servers past the check's budget are listed, not probed.
  const budget = createConnectionBudget(fanOutLimits(ctx).maxSmtpConnections);
  return Promise.all(
    targets.map((target) => (budget.take() ? checkMailServer(ctx, { ...target, port }, options, dns) : Promise.resolve(notProbed(target, port, budget.limit)))),
  );
}

/** A server the check's SMTP connection budget did not reach: not probed, and `error` (code `limited`) says why. */
function notProbed(target: { host: string; preference: number | null }, port: number, limit: number): MailServerCheck {
  return {
    host: target.host,
    preference: target.preference,
    port,
    address: null,
    probe: null,
    error: { code: 'limited', message: `the check had opened its ${limit} SMTP connections, the limit per check` },
    findings: [
      finding('smtp_connections_limited', 'warning', `${target.host} was not probed: the check had opened its ${limit} SMTP connections (the limit of SMTP connections per check)`, null, {
        host: target.host,
        limit,
      }),
    ],
  };
}

/**
 * Probes one mail server: connect, banner, EHLO, STARTTLS (opportunistic),
 * then QUIT.
 *
 * Never throws for network trouble: a server that cannot be reached is a
 * result with `probe.failure` set and an error finding; an address the
 * context's connect guard refuses (a server probing for others) is not
 * probed, with `error.code` `forbidden` and an `smtp_not_probed` finding.
 */
export async function checkMailServer(
  ctx: EngineContext,
  target: { host: string; preference: number | null; port: number; addresses?: string[] | null },
  options: MailServerOptions = {},
  dns: MailDns = createMailDns(ctx),
): Promise<MailServerCheck> {
  const check: MailServerCheck = { host: target.host, preference: target.preference, port: target.port, address: null, probe: null, error: null, findings: [] };
  let address = options.address ?? null;
  if (address === null) {
    let addresses = target.addresses ?? null;
    if (addresses === null && ipVersionOf(target.host) === 0) {
      try {
        const [a, aaaa] = await Promise.all([dns.lookup(target.host, 'A'), dns.lookup(target.host, 'AAAA')]);
        addresses = [...a.records, ...aaaa.records];
      } catch (error) {
        check.error = failureJson(error);
      }
    } else if (addresses === null) {
      addresses = [target.host];
    }
    address = addresses?.[0] ?? null;
    if (address === null) {
      // A host without an address is the domain's problem; one whose lookup failed was not checked.
      const severity = check.error === null ? 'warning' : 'unknown';
      check.error ??= { code: 'not_found', message: `${target.host} has no address to connect to` };
      check.findings.push(finding('smtp_not_probed', severity, `${target.host} was not probed: ${check.error.message}`, 'RFC 5321 §5.1', { host: target.host, error: check.error }));
      return check;
    }
  }
  check.address = address;
  const { probeSmtp } = await import('../smtp/probe-smtp.js');
  let probe: SmtpResult;
  try {
    probe = await probeSmtp(ctx, {
      host: target.host,
      port: target.port,
      address,
      tls: 'opportunistic',
      quitAfter: 'tls',
      // The MX check already looks at each address's PTR and FCrDNS.
      reverseDns: false,
      ...(options.ehloName === undefined ? {} : { ehloName: options.ehloName }),
      ...(options.stageTimeoutMs === undefined ? {} : { stageTimeoutMs: options.stageTimeoutMs }),
      ...(options.greetingTimeoutMs === undefined ? {} : { greetingTimeoutMs: options.greetingTimeoutMs }),
      ...(options.tlsCa === undefined ? {} : { tlsCa: options.tlsCa }),
      ...(options.dane === undefined ? {} : { dane: options.dane }),
    });
  } catch (error) {
    check.error = failureJson(error);
    if (error instanceof NetintelError && error.code === 'forbidden') {
      // The context's connect guard (a server probing for others) refused the address: nothing was sent.
      check.address = null;
      check.findings.push(finding('smtp_not_probed', 'info', `${target.host} was not probed: ${error.message}`, null, { host: target.host, address }));
      return check;
    }
    check.findings.push(
      finding('smtp_unreachable', 'error', `Could not hold an SMTP conversation with ${target.host} (${address}:${target.port}): ${check.error.code} (${check.error.message})`, 'RFC 5321 §3.1', {
        host: target.host,
        address,
        port: target.port,
        error: check.error,
      }),
    );
    return check;
  }
  check.probe = probe;
  for (const item of probe.findings) {
    check.findings.push({ ...item, message: `${target.host}: ${item.message}`, evidence: { host: target.host, ...(item.evidence ?? {}) } });
  }
  if (probe.failure !== null && !probe.findings.some((item) => item.severity === 'error')) {
    check.findings.push(
      finding('smtp_unreachable', 'error', `Could not hold an SMTP conversation with ${target.host} (${address}:${target.port}): ${probe.failure.message}`, 'RFC 5321 §3.1', {
        host: target.host,
        address,
        port: target.port,
        stage: probe.failure.stage,
      }),
    );
  }
  return check;
}
