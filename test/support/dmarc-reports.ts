/**
 * Generated DMARC aggregate reports (RFC 7489 appendix C and the DMARCbis
 * aggregate format) and the containers they arrive in: gzip, zip, a message
 * with the report attached, an mbox of such messages.
 *
 * The files of test/fixtures/dmarc/ were made with these helpers (and
 * examples/dmarc/ holds copies of the first four):
 * - google.xml: an RFC 7489 report of google.com on example.com: two passing
 *   sources (Google, Microsoft), one failing on every message (198.51.100.7,
 *   rejected), one failing on some (185.230.63.107, forwarded);
 * - yahoo-dmarcbis.xml.gz: a DMARCbis report (its namespace, np, testing,
 *   discovery_method), gzipped;
 * - microsoft.zip: a zip of one report of Enterprise Outlook, with an IPv6 source;
 * - report.eml: a message with that report attached as a zip (a duplicate);
 * - reports.mbox: two messages, the Google report gzipped (a duplicate of
 *   google.xml) and a report on example.org of 2025;
 * - truncated.xml: the Google report cut after 700 bytes;
 * - entities.xml: the Google report with a DOCTYPE declaring entities;
 * - not-a-report.txt: text that is neither XML, gzip, zip nor mail.
 * (The directory holds nothing else: goldens read it whole.)
 */
import { gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';

export interface GeneratedRecord {
  ip: string;
  count: number;
  disposition?: 'none' | 'quarantine' | 'reject';
  dkim?: 'pass' | 'fail';
  spf?: 'pass' | 'fail';
  headerFrom?: string;
  reasons?: string[];
  dkimDomain?: string;
  spfDomain?: string;
}

export interface GeneratedReport {
  org: string;
  id: string;
  domain: string;
  begin?: number;
  end?: number;
  format?: 'rfc7489' | 'dmarcbis';
  records: GeneratedRecord[];
}

export function reportXml(report: GeneratedReport): string {
  const bis = report.format === 'dmarcbis';
  const begin = report.begin ?? 1_767_225_600;
  const end = report.end ?? begin + 86_399;
  const records = report.records
    .map((record) => {
      const from = record.headerFrom ?? report.domain;
      const reasons = (record.reasons ?? []).map((type) => `<reason><type>${type}</type><comment>seen</comment></reason>`).join('');
      return [
        '<record><row>',
        `<source_ip>${record.ip}</source_ip><count>${record.count}</count>`,
        `<policy_evaluated><disposition>${record.disposition ?? 'none'}</disposition><dkim>${record.dkim ?? 'pass'}</dkim><spf>${record.spf ?? 'pass'}</spf>${reasons}</policy_evaluated>`,
        '</row>',
        `<identifiers>${bis ? `<envelope_from>${from}</envelope_from>` : ''}<header_from>${from}</header_from></identifiers>`,
        '<auth_results>',
        `<dkim><domain>${record.dkimDomain ?? from}</domain><selector>s1</selector><result>${record.dkim ?? 'pass'}</result></dkim>`,
        `<spf><domain>${record.spfDomain ?? from}</domain>${bis ? '' : '<scope>mfrom</scope>'}<result>${record.spf ?? 'pass'}</result></spf>`,
        '</auth_results></record>',
      ].join('');
    })
    .join('\n');
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    bis ? '<feedback xmlns="urn:ietf:params:xml:ns:dmarc-2.0">' : '<feedback>',
    '<version>1.0</version>',
    `<report_metadata><org_name>${report.org}</org_name><email>noreply-dmarc@${report.org}</email><report_id>${report.id}</report_id><date_range><begin>${begin}</begin><end>${end}</end></date_range></report_metadata>`,
    `<policy_published><domain>${report.domain}</domain><adkim>r</adkim><aspf>r</aspf><p>reject</p><sp>reject</sp>${bis ? '<np>reject</np><testing>n</testing><discovery_method>treewalk</discovery_method>' : '<pct>100</pct>'}</policy_published>`,
    records,
    '</feedback>',
    '',
  ].join('\n');
}

export function gzipped(text: string): Buffer {
  return gzipSync(Buffer.from(text));
}

export function zipped(entries: Record<string, string | Uint8Array>): Buffer {
  return Buffer.from(zipSync(Object.fromEntries(Object.entries(entries).map(([name, data]) => [name, typeof data === 'string' ? Buffer.from(data) : data]))));
}

/** A report message as receivers send them: the report attached, base64, to a multipart message (RFC 7489 §7.2.1.1). */
export function reportMessage(attachment: Buffer, filename: string, subject = 'Report Domain: example.com'): string {
  const type = filename.endsWith('.zip') ? 'application/zip' : filename.endsWith('.gz') ? 'application/gzip' : 'text/xml';
  const body = attachment.toString('base64').replace(/.{76}/g, '$&\r\n');
  return [
    'From: noreply-dmarc@reporter.example',
    'To: dmarc@example.com',
    `Subject: ${subject}`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain',
    '',
    'This is an aggregate report.',
    '--b1',
    `Content-Type: ${type}; name="${filename}"`,
    `Content-Disposition: attachment; filename="${filename}"`,
    'Content-Transfer-Encoding: base64',
    '',
    body,
    '--b1--',
    '',
  ].join('\r\n');
}

export function mbox(messages: readonly string[]): string {
  return messages.map((message) => `From noreply-dmarc@reporter.example Thu Jan  1 00:00:00 2026\n${message.replace(/\r\n/g, '\n')}\n`).join('\n');
}
