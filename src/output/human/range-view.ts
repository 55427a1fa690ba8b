import type { RangeRecord } from '../../engine/ip/ip-range-record.js';
import { grid } from './asn-view.js';
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
          ['hosts', `${grouped(network.hosts)} (${network.firstHost} - ${network.lastHost})`],
        ] as Fact[])
      : []),
  ];
  const blocks = range.cidrs.length > 1 ? heading(ctx, `CIDR blocks (${range.cidrs.length})`) + grid(ctx, range.cidrs) : '';
  return sections(headline(ctx, range.input, verdict(range), 'plain'), factList(ctx, facts), blocks);
}

export const RANGE_VIEW: HumanView = {
  block: rangeBlock,
  table: {
    columns: [
      { header: 'range', priority: 0 },
      { header: 'first', priority: 1 },
      { header: 'last', priority: 1 },
      { header: 'count', priority: 0 },
      { header: 'CIDR blocks', priority: 2, wrap: true },
    ],
    cells: (value) => {
      const range = value as RangeRecord;
      return [range.input, range.first, range.last, grouped(range.count), range.cidrs.join(' ')];
    },
    key: (value) => (value as RangeRecord).input,
  },
};
