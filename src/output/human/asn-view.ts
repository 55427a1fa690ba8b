import type { AsnResult } from '../../engine/asn/lookup-asn.js';
import { factList, headline, heading, safe, sections, type Fact } from './blocks.js';
import { displayWidth } from './display-width.js';
import type { ViewContext } from './style.js';
import { grouped, plural, type HumanView } from './view.js';
import { rpkiText } from './rpki-text.js';

/** Prefixes shown per family: an AS announces up to thousands; json and csv carry every one. */
export const SHOWN_PREFIXES = 24;

/** Items in as many columns as fit the width, filled row by row (as `ls` does). */
export function grid(ctx: ViewContext, items: readonly string[], indent = '  '): string {
  if (items.length === 0) return '';
  const texts = items.map(safe);
  const cell = Math.max(...texts.map(displayWidth)) + 2;
  const perLine = Math.max(1, Math.floor((ctx.width - indent.length + 2) / cell));
  const lines: string[] = [];
  for (let i = 0; i < texts.length; i += perLine) {
    const row = texts.slice(i, i + perLine);
    lines.push(`${indent}${row.map((text, index) => (index === row.length - 1 ? text : text + ' '.repeat(cell - displayWidth(text)))).join('')}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Addresses in one IPv6 block of each length the space is counted in, largest first. */
const IPV6_UNITS: ReadonlyArray<readonly [length: number, size: bigint]> = [32, 48, 64].map((length) => [length, 1n << BigInt(128 - length)] as const);

/**
 * IPv6 space as a count of blocks, since a count of addresses has up to 39
 * digits: /48s (a site's assignment), /32s once it is a /32 or more (an
 * ISP's allocation), /64s below a /48 (a subnet); the unit is named.
 * `574,288 /48s` reads better as `about 8.8 /32s`.
 */
export function ipv6Space(addresses: bigint): string {
  if (addresses === 0n) return 'no addresses';
  const [length, size] = IPV6_UNITS.find(([, unitSize]) => addresses >= unitSize) ?? [128, 1n];
  if (length === 128) return `${grouped(addresses.toString())} ${addresses === 1n ? 'address' : 'addresses'}`;
  const whole = addresses / size;
  if (addresses % size === 0n) return `${grouped(whole.toString())} /${length}${whole === 1n ? '' : 's'}`;
  // Tenths, rounded down, so that "about 1.0" never stands for a whole block that is not there.
  const tenths = (addresses * 10n) / size;
  return `about ${grouped((tenths / 10n).toString())}.${tenths % 10n} /${length}s`;
}

function prefixSection(ctx: ViewContext, family: string, prefixes: readonly string[]): string {
  if (prefixes.length === 0) return '';
  const shown = ctx.all ? prefixes : prefixes.slice(0, SHOWN_PREFIXES);
  const more = prefixes.length - shown.length;
  const title = `${family} prefixes (${grouped(prefixes.length)}${more > 0 ? `, first ${shown.length} shown; -f json or -f csv for all` : ''})`;
  return heading(ctx, title) + grid(ctx, shown);
}

function asnBlock(ctx: ViewContext, value: unknown): string {
  const asn = value as AsnResult;
  const name = `AS${asn.asn}${asn.organization ? ` ${asn.organization}` : ''}`;
  if (asn.ip !== null) {
    const invalid = asn.rpki?.status === 'invalid';
    return sections(
      headline(ctx, asn.ip, `${asn.route ? `in ${asn.route} · ` : ''}${name}${invalid ? ' · RPKI invalid' : ''}`, invalid ? 'bad' : 'plain'),
      factList(ctx, [['RPKI', rpkiText(asn.rpki)]]),
    );
  }
  const counts = asn.counts;
  const facts: Fact[] = counts
    ? [
        ['IPv4', `${plural(counts.ipv4_prefixes, 'prefix', 'prefixes')}, ${grouped(counts.ipv4_addresses)} addresses`],
        ['IPv6', `${plural(counts.ipv6_prefixes, 'prefix', 'prefixes')}, ${/^\d+$/.test(counts.ipv6_addresses) ? ipv6Space(BigInt(counts.ipv6_addresses)) : `${counts.ipv6_addresses} addresses`}`],
      ]
    : [];
  return sections(
    headline(ctx, `AS${asn.asn}`, asn.organization ?? 'organization unknown', 'plain'),
    factList(ctx, facts),
    prefixSection(ctx, 'IPv4', asn.prefixes?.ipv4 ?? []),
    prefixSection(ctx, 'IPv6', asn.prefixes?.ipv6 ?? []),
  );
}

export const ASN_VIEW: HumanView = {
  block: asnBlock,
  table: {
    columns: [
      { header: 'query', priority: 0 },
      { header: 'AS', priority: 0 },
      { header: 'organization', priority: 1, wrap: true },
      { header: 'route', priority: 2 },
      { header: 'RPKI', priority: 3 },
      { header: 'prefixes', priority: 4, wrap: true },
    ],
    cells: (value) => {
      const asn = value as AsnResult;
      const prefixes = asn.counts ? `${grouped(asn.counts.ipv4_prefixes)} IPv4, ${grouped(asn.counts.ipv6_prefixes)} IPv6` : '';
      const rpki = asn.rpki ? asn.rpki.status.replace('_', ' ') : '';
      return [asn.ip ?? asn.query ?? `AS${asn.asn}`, `AS${asn.asn}`, asn.organization ?? '', asn.route ?? '', rpki, prefixes];
    },
    key: (value) => (value as AsnResult).query,
  },
};
