import type { EngineContext } from '../context.js';
import { normaliseMailDomain } from './mail-domain.js';
import { finding, type Finding } from '../findings.js';
import { createMailDns, type MailDns } from './mail-dns.js';
import { withContext } from './mail-errors.js';

/** The SMTP TLS Reporting check of one domain (RFC 8460). */
export interface TlsRptResult {
  kind: 'tls-rpt';
  domain: string;
  /** The `v=TLSRPTv1` record at `_smtp._tls.<domain>`, null when there is none or several. */
  record: string | null;
  records: string[];
  /** Report destinations (mailto: or https:). */
  rua: string[];
  findings: Finding[];
}

export interface CheckTlsRptOptions {
  dns?: MailDns;
}

/**
 * Checks the TLS-RPT record of `domain`: present, one only, with a rua of
 * mailto: or https: URIs.
 *
 * @throws NetintelError `invalid_input` for a bad domain; `timeout`,
 *   `upstream`, `unreachable` when the lookup fails.
 */
export async function checkTlsRpt(ctx: EngineContext, domain: string, options: CheckTlsRptOptions = {}): Promise<TlsRptResult> {
  const name = normaliseMailDomain(domain).ascii;
  const dns = options.dns ?? createMailDns(ctx);
  const location = `_smtp._tls.${name}`;
  let lookup;
  try {
    lookup = await dns.lookup(location, 'TXT');
  } catch (error) {
    throw withContext(error, `the TLS-RPT lookup of ${location} failed`);
  }
  const findings: Finding[] = [];
  const records = lookup.records.map((record) => record.text).filter((text) => /^v=TLSRPTv1(;|\s|$)/.test(text));
  const result: TlsRptResult = { kind: 'tls-rpt', domain: name, record: null, records, rua: [], findings };
  if (records.length === 0) {
    findings.push(finding('tls_rpt_absent', 'info', `${name} publishes no TLS-RPT record: no one is told when senders fail to set up TLS with its MX hosts`, 'RFC 8460 §3', { location }));
    return result;
  }
  if (records.length > 1) {
    findings.push(finding('tls_rpt_multiple_records', 'error', `${location} holds ${records.length} TLS-RPT records; senders then send no reports`, 'RFC 8460 §3', { records }));
    return result;
  }
  const record = records[0]!;
  result.record = record;
  const rua = record
    .split(';')
    .map((part) => part.trim())
    .find((part) => /^rua\s*=/.test(part));
  if (rua === undefined) {
    findings.push(finding('tls_rpt_invalid', 'error', 'The TLS-RPT record has no rua tag, so reports have nowhere to go', 'RFC 8460 §3', { record }));
    return result;
  }
  result.rua = rua
    .slice(rua.indexOf('=') + 1)
    .split(',')
    .map((uri) => uri.trim())
    .filter((uri) => uri.length > 0);
  const bad = result.rua.filter((uri) => !/^mailto:[^@\s]+@[^@\s]+\.[^@\s]+$/i.test(uri) && !/^https:\/\/[^\s/]+/i.test(uri));
  if (result.rua.length === 0 || bad.length > 0) {
    findings.push(finding('tls_rpt_invalid', 'error', `TLS-RPT rua must list mailto: or https: URIs${bad.length > 0 ? `, not ${bad.join(', ')}` : ''}`, 'RFC 8460 §3', { record, invalid: bad }));
    return result;
  }
  findings.push(finding('tls_rpt_found', 'pass', `TLS-RPT reports go to ${result.rua.join(', ')}`, 'RFC 8460 §3', { record }));
  return result;
}
