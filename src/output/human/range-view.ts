import type { RangeRecord } from '../../engine/ip/ip-range-record.js';
import { grid, SHOWN_PREFIXES } from './asn-view.js';
import { factList, headline, heading, sections, type Fact } from './blocks.js';
import type { ViewContext } from './style.js';
import { grouped, plural, type HumanView } from './view.js';

/** `256 addresses`, the count grouped in thousands. */
function countText(range: RangeRecord): string {
  return `${grouped(range.count)} ${range.count === '1' ? 'address' : 'addresses'}`;
}

/** The headline's verdict: how many addresses, and in how many blocks when that is not one. */
function verdict(range: RangeRecord): string {
  // A CIDR names its own block unless it was given with host bits set.
  if (range.cidrs.length === 1) return range.cidrs[0] === range.input ? countText(range) : `${countText(range)} · ${range.cidrs[0]}`;
  return `${countText(range)} · ${plural(range.cidrs.length, 'CIDR block')}`;
}

/** Digits a table cell shows before a count is written shorter (an IPv6 count has up to 39). */
const TABLE_COUNT_DIGITS = 13;

/** A count for a table cell: grouped, or `2^96` for a power of two, or `~7.92e+28`, when it is long. */
export function compactCount(count: string): string {
  if (count.length <= TABLE_COUNT_DIGITS) return grouped(count);
  const value = BigInt(count);
  if ((value & (value - 1n)) === 0n) return `2^${value.toString(2).length - 1}`;
  return `~${Number(value).toExponential(2)}`;
}

function rangeBlock(ctx: ViewContext, value: unknown): string {
  const range = value as RangeRecord;
  const network = range.network;
  const facts: Fact[] = [
    ['first', range.first],
    ['last', range.last],
    ['count', grouped(range.count)],
    ...(network
      ? ([
          ['network', network.cidr],
          ['netmask', network.netmask],
          ['hostmask', network.hostmask],
          ['broadcast', network.broadcast ?? (range.version === 6 ? 'none (IPv6)' : 'none')],
          ['hosts', `${grouped(network.hosts)} (${network.first_host} - ${network.last_host})`],
        ] as Fact[])
      : []),
  ];
  return sections(headline(ctx, range.input, verdict(range), 'plain'), factList(ctx, facts), blockList(ctx, range.cidrs));
}

/** The CIDR blocks of an `a-b` range: an IPv6 one has up to 254, so the view shows the first few unless --all. */
function blockList(ctx: ViewContext, cidrs: readonly string[]): string {
  if (cidrs.length <= 1) return '';
  const shown = ctx.all ? cidrs : cidrs.slice(0, SHOWN_PREFIXES);
  const more = shown.length < cidrs.length ? `, first ${shown.length} shown; -f json or --all for all` : '';
  return heading(ctx, `CIDR blocks (${cidrs.length}${more})`) + grid(ctx, shown);
}

export const RANGE_VIEW: HumanView = {
  block: rangeBlock,
  table: {
    // The count is the answer and stays; first and last share a column that wraps between them, never inside an address.
    columns: [
      { header: 'range', priority: 0 },
      { header: 'count', priority: 0, align: 'right' },
      { header: 'first - last', priority: 1, wrap: true, wholeWords: true },
      { header: 'CIDR blocks', priority: 2, wrap: true, wholeWords: true },
    ],
    cells: (value) => {
      const range = value as RangeRecord;
      return [range.input, compactCount(range.count), `${range.first} - ${range.last}`, range.cidrs.join(' ')];
    },
    key: (value) => (value as RangeRecord).input,
  },
};
