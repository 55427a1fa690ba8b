import { startSectionFile, StringTable } from '../dataset/section-file.js';
import { NO_TA, Section, SECTION_COUNT, RPKI_INDEX_FORMAT, V4_PREFIX_BYTES, V6_PREFIX_BYTES, VRP_BYTES, type RpkiIndexMeta } from './rpki-index-format.js';
import type { Vrp } from './vrp-json.js';

export interface CompiledRpkiIndex {
  bytes: Buffer;
  meta: RpkiIndexMeta;
}

/** A distinct prefix of one family and its payloads, before layout. */
interface PrefixNode {
  start: bigint;
  length: number;
  parent: number;
  first: number;
  count: number;
}

/**
 * Compiles validated ROA payloads into the RPKI index (layout in
 * `rpki-index-format.ts`). Identical payloads (same prefix, maxLength and AS,
 * listed under two trust anchors) are kept once. O(n log n) for the sort.
 */
export function compileRpkiIndex(vrps: readonly Vrp[], info: { builtAt: Date; updated: string | null; source: string | null }): CompiledRpkiIndex {
  const tas = new StringTable();
  const payloads: Array<{ asn: number; maxLength: number; ta: number }> = [];
  const families = ([4, 6] as const).map((version) => {
    const width = version === 4 ? 32 : 128;
    // Starts compare as they are (numbers for IPv4, BigInt for IPv6): the sort is most of the work.
    const sorted = vrps
      .filter((vrp) => vrp.version === version)
      .sort((a, b) => (a.start !== b.start ? (a.start < b.start ? -1 : 1) : a.length - b.length || a.asn - b.asn || a.maxLength - b.maxLength));
    const nodes: PrefixNode[] = [];
    // The prefixes holding the current one, innermost last.
    const open: Array<{ node: number; end: bigint }> = [];
    for (const vrp of sorted) {
      let node = nodes[nodes.length - 1];
      const start = BigInt(vrp.start);
      if (node === undefined || node.start !== start || node.length !== vrp.length) {
        while (open.length > 0 && open[open.length - 1]!.end < start) open.pop();
        node = { start, length: vrp.length, parent: open.length > 0 ? open[open.length - 1]!.node : -1, first: payloads.length, count: 0 };
        nodes.push(node);
        open.push({ node: nodes.length - 1, end: start + (1n << BigInt(width - vrp.length)) - 1n });
      } else {
        const last = payloads[payloads.length - 1]!;
        if (last.asn === vrp.asn && last.maxLength === vrp.maxLength) continue;
      }
      payloads.push({ asn: vrp.asn, maxLength: vrp.maxLength, ta: vrp.ta === null ? NO_TA : tas.id(vrp.ta) });
      node.count++;
    }
    return nodes;
  });
  if (tas.texts.length >= NO_TA) throw new RangeError(`more than ${NO_TA - 1} trust anchors`);
  const [v4, v6] = families as [PrefixNode[], PrefixNode[]];
  const meta: RpkiIndexMeta = { builtAt: info.builtAt.toISOString(), updated: info.updated, source: info.source, vrps: payloads.length, v4Prefixes: v4.length, v6Prefixes: v6.length };
  const metaBytes = Buffer.from(JSON.stringify(meta), 'utf8');
  const taStrings = tas.encode();
  const lengths = new Array<number>(SECTION_COUNT);
  lengths[Section.META] = metaBytes.length;
  lengths[Section.V4_PREFIXES] = V4_PREFIX_BYTES * v4.length;
  lengths[Section.V6_PREFIXES] = V6_PREFIX_BYTES * v6.length;
  lengths[Section.VRPS] = VRP_BYTES * payloads.length;
  lengths[Section.TA_OFFSETS] = 4 * taStrings.offsets.length;
  lengths[Section.TA_DATA] = taStrings.data.length;
  const file = startSectionFile(RPKI_INDEX_FORMAT, lengths, {}, () => new RangeError('RPKI index over 4 GiB'));
  const { view, offsets } = file;
  file.putBytes(Section.META, metaBytes);
  let at = offsets[Section.V4_PREFIXES]!;
  for (const node of v4) {
    view.setUint32(at, Number(node.start), true);
    at = putTail(view, at + 4, node);
  }
  at = offsets[Section.V6_PREFIXES]!;
  for (const node of v6) {
    for (let k = 0; k < 4; k++) view.setUint32(at + 4 * k, Number((node.start >> BigInt(96 - 32 * k)) & 0xffff_ffffn), true);
    at = putTail(view, at + 16, node);
  }
  at = offsets[Section.VRPS]!;
  for (const payload of payloads) {
    view.setUint32(at, payload.asn, true);
    view.setUint16(at + 4, payload.maxLength, true);
    view.setUint16(at + 6, payload.ta, true);
    at += VRP_BYTES;
  }
  file.putStrings(Section.TA_OFFSETS, Section.TA_DATA, taStrings);
  return { bytes: file.bytes, meta };
}

/** Writes a prefix's length, parent, first payload and payload count; returns where the next entry starts. */
function putTail(view: DataView, at: number, node: PrefixNode): number {
  view.setUint32(at, node.length, true);
  view.setInt32(at + 4, node.parent, true);
  view.setUint32(at + 8, node.first, true);
  view.setUint32(at + 12, node.count, true);
  return at + 16;
}
