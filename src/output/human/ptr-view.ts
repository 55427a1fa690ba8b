import type { PtrResult } from '../../engine/dns/reverse-names.js';
import { factList, headline, heading, safe, sections } from './blocks.js';
import type { ViewContext } from './style.js';
import { plural, type HumanView } from './view.js';

/** The headline's verdict: the names, or why there are none. */
function verdict(ptr: PtrResult): string {
  if (ptr.status === 'nxdomain') return `no reverse DNS (${ptr.reverse_name} does not exist)`;
  if (ptr.names.length === 0) return 'no PTR record';
  return ptr.names.length === 1 ? ptr.names[0]!.name : plural(ptr.names.length, 'name');
}

/** Each name with its TTL, one line each. */
function nameLines(ctx: ViewContext, ptr: PtrResult): string {
  if (ptr.names.length < 2) return '';
  return heading(ctx, 'names') + ptr.names.map((each) => `  ${safe(each.name)}  ${each.ttl_seconds} s\n`).join('');
}

function ptrBlock(ctx: ViewContext, value: unknown): string {
  const ptr = value as PtrResult;
  const only = ptr.names.length === 1 ? ptr.names[0]! : null;
  return sections(
    headline(ctx, ptr.ip, verdict(ptr), ptr.names.length > 0 ? 'plain' : 'warn'),
    factList(ctx, [
      ['asked', ptr.reverse_name],
      ['TTL', only ? `${only.ttl_seconds} s` : null],
      ['resolver', ptr.resolver],
    ]),
    nameLines(ctx, ptr),
  );
}

/** `netintel ptr`: one address as its names, many as a table of addresses and their names. */
export const PTR_VIEW: HumanView = {
  block: ptrBlock,
  table: {
    columns: [
      { header: 'address', priority: 0 },
      { header: 'names', priority: 0, wrap: true },
      { header: 'TTL', priority: 1, align: 'right' },
    ],
    cells: (value) => {
      const ptr = value as PtrResult;
      const names = ptr.names.length > 0 ? ptr.names.map((each) => each.name).join(' ') : ptr.status === 'nxdomain' ? '(nxdomain)' : '(no PTR)';
      return [ptr.ip, names, ptr.names.length > 0 ? String(Math.min(...ptr.names.map((each) => each.ttl_seconds))) : ''];
    },
    key: (value) => (value as PtrResult).ip,
  },
};
