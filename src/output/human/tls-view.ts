import type { TlsChainCertificate, TlsResult } from '../../engine/tls/tls-result.js';
import { factList, findingCounts, findingsBlock, headline, heading, safe, sections } from './blocks.js';
import type { Tone, ViewContext } from './style.js';
import { plural, type HumanView } from './view.js';

const VERSION_NAMES: ReadonlyArray<[keyof NonNullable<TlsResult['protocols']>, string]> = [
  ['tls1_0', '1.0'],
  ['tls1_1', '1.1'],
  ['tls1_2', '1.2'],
  ['tls1_3', '1.3'],
];

/** `1.2 1.3 (1.0, 1.1 refused)`: the versions accepted first, then the others by what became of them. */
export function versionsText(protocols: TlsResult['protocols']): string | null {
  if (!protocols) return null;
  const by = (support: string) => VERSION_NAMES.filter(([member]) => protocols[member] === support).map(([, name]) => name);
  const accepted = by('accepted');
  const others = (['refused', 'not_tried', 'failed'] as const)
    .map((support) => [by(support), support.replace('_', ' ')] as const)
    .filter(([names]) => names.length > 0)
    .map(([names, word]) => `${names.join(', ')} ${word === 'not tried' ? 'could not be tried' : word}`);
  return [accepted.length > 0 ? accepted.join(' ') : 'none accepted', ...(others.length > 0 ? [`(${others.join('; ')})`] : [])].join(' ');
}

/** The headline's verdict and its tone: the failure, or the finding counts. */
function verdict(result: TlsResult): { text: string; tone: Tone } {
  if (result.failure) return { text: result.failure.code === 'tls' ? 'TLS handshake failed' : result.connected ? 'no TLS session' : 'no connection', tone: 'bad' };
  const counts = findingCounts(result.findings);
  const certificate = result.certificate;
  const days = certificate ? `, ${plural(certificate.days_left, 'day')} left` : '';
  return { text: `${result.protocol ?? 'TLS'}${days}${counts.text === '' ? '' : `  ${counts.text}`}`, tone: counts.tone };
}

function chainLines(ctx: ViewContext, chain: readonly TlsChainCertificate[]): string {
  if (chain.length === 0) return '';
  const lines = chain.map((certificate, index) => {
    const key = certificate.key_type === null ? '?' : `${certificate.key_type.toUpperCase()} ${certificate.key_bits ?? '?'}`;
    const anchor = certificate.trust_anchor ? ', trust anchor' : '';
    return `  ${index}  ${safe(certificate.subject)}\n     ${key}, ${certificate.signature_algorithm}, until ${certificate.valid_to.slice(0, 10)} (${plural(certificate.days_left, 'day')})${anchor}\n`;
  });
  return heading(ctx, 'chain') + lines.join('');
}

function tlsBlock(ctx: ViewContext, value: unknown): string {
  const result = value as TlsResult;
  const { text, tone } = verdict(result);
  const certificate = result.certificate;
  const subject = `${result.host} port ${result.port}${result.starttls ? ` (${result.starttls} STARTTLS)` : ''}`;
  return sections(
    headline(ctx, subject, text, tone),
    factList(ctx, [
      ['address', result.address],
      ['failure', result.failure?.message],
      ['cipher', result.cipher],
      ['versions', versionsText(result.protocols)],
      ['subject', certificate?.subject],
      ['issuer', certificate?.issuer],
      ['names', result.chain[0]?.san.join(', ')],
      ['expires', certificate ? `${certificate.valid_to.slice(0, 10)} (${plural(certificate.days_left, 'day')})` : null],
      ['name match', certificate ? `${certificate.hostname_match ? 'yes' : 'no'} (${certificate.checked_name})` : null],
      ['trusted', certificate ? `${certificate.trusted ? 'yes' : 'no'}${certificate.verify_error ? ` (${certificate.verify_error})` : ''}` : null],
      ['OCSP stapled', certificate ? (certificate.ocsp_stapled ? `yes (${certificate.ocsp_status})` : 'no') : null],
      ['embedded SCTs', certificate ? certificate.embedded_scts : null],
      ['DANE', result.dane ? `${result.dane.verdict} (${result.dane.tlsa_name}, ${result.dane.records} TLSA)` : null],
    ]),
    chainLines(ctx, result.chain),
    findingsBlock(ctx, result.findings),
  );
}

/** `netintel tls`: one target in full (facts, chain, findings), many as a table of one row each. */
export const TLS_VIEW: HumanView = {
  block: tlsBlock,
  table: {
    columns: [
      { header: 'target', priority: 0 },
      { header: 'version', priority: 1 },
      { header: 'expires', priority: 0 },
      { header: 'days', priority: 0, align: 'right' },
      { header: 'issuer', priority: 2, wrap: true },
      { header: 'findings', priority: 0, wrap: true, wholeWords: true },
    ],
    cells: (value) => {
      const result = value as TlsResult;
      const certificate = result.certificate;
      const problems = result.findings.filter((finding) => finding.severity === 'error' || finding.severity === 'warning').map((finding) => finding.id);
      return [
        `${result.host}:${result.port}`,
        result.protocol ?? '',
        certificate?.valid_to.slice(0, 10) ?? '',
        certificate ? String(certificate.days_left) : '',
        certificate?.issuer ?? '',
        result.failure ? `${result.failure.code}: ${result.failure.message}` : problems.length > 0 ? problems.join(' ') : 'ok',
      ];
    },
    key: (value) => (value as TlsResult).target,
  },
};
