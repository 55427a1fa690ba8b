import type { FeedEntries } from './feed-formats.js';
import { startSectionFile, StringTable } from '../dataset/section-file.js';
import {
  ASN_ENTRY_BYTES,
  NO_SET,
  Section,
  SECTION_COUNT,
  SIGNAL_INDEX_FORMAT,
  type SignalIndexMeta,
  type SignalSourceMeta,
  V4_ENTRY_BYTES,
  V6_ENTRY_BYTES,
} from './signal-index-format.js';

/** One source to compile: what it means, and its parsed entries. */
export interface SignalSourceInput {
  meta: Omit<SignalSourceMeta, 'entries'>;
  entries: FeedEntries;
}

export interface CompiledSignalIndex {
  bytes: Uint8Array;
  meta: SignalIndexMeta;
}

const MAX_SOURCES = 0xffff;
const V4_LIMIT = 2 ** 32;
const V6_LIMIT = 1n << 128n;

/**
 * Merges the entries of every source into the signal index (layout in
 * `signal-index-format.ts`). Overlapping entries (a /24 inside a /16, an
 * address on two lists) are cut into disjoint segments, each naming every
 * entry that holds it; exact duplicates within a source (a prefix listed
 * under two services) are kept once. Sorting dominates: O(n log n) for n
 * entries, typed arrays throughout, so a million ranges compile in a few
 * seconds in a few tens of megabytes.
 */
export function compileSignalIndex(sources: readonly SignalSourceInput[], builtAt: Date): CompiledSignalIndex {
  if (sources.length > MAX_SOURCES) throw new RangeError(`at most ${MAX_SOURCES} sources`);
  const labels = new StringTable();
  const sourceLabelMaps = sources.map((source) => source.entries.labels.map((text) => labels.id(text)));
  const globalLabel = (sourceIndex: number, label: number) => (label < 0 ? -1 : sourceLabelMaps[sourceIndex]![label]!);

  const v4 = collectV4(sources, globalLabel);
  const v6 = collectV6(sources, globalLabel);
  const sets = new SetTable();
  const v4Segments = sweepV4(v4, sets);
  const v6Segments = sweepV6(v6, sets, v4.count);
  const asn = collectAsns(sources, globalLabel);

  const meta: SignalIndexMeta = {
    builtAt: builtAt.toISOString(),
    sources: sources.map((source, i) => ({
      ...source.meta,
      entries: v4.countBySource[i]! + v6.countBySource[i]! + asn.countBySource[i]!,
    })),
    v4Entries: v4.count,
    v6Entries: v6.count,
    asnEntries: asn.count,
    v4Segments: v4Segments.count,
    v6Segments: v6Segments.count,
    sets: sets.count,
  };
  const metaBytes = Buffer.from(JSON.stringify(meta), 'utf8');
  const labelStrings = labels.encode();

  const lengths: number[] = new Array<number>(SECTION_COUNT);
  lengths[Section.META] = metaBytes.length;
  lengths[Section.V4_STARTS] = 4 * v4Segments.count;
  lengths[Section.V4_SETS] = 4 * v4Segments.count;
  lengths[Section.V6_STARTS] = 16 * v6Segments.count;
  lengths[Section.V6_SETS] = 4 * v6Segments.count;
  lengths[Section.SET_OFFSETS] = 4 * (sets.count + 1);
  lengths[Section.SET_ENTRIES] = 4 * sets.entries.length;
  lengths[Section.V4_ENTRIES] = V4_ENTRY_BYTES * v4.count;
  lengths[Section.V6_ENTRIES] = V6_ENTRY_BYTES * v6.count;
  lengths[Section.ASN_ENTRIES] = ASN_ENTRY_BYTES * asn.count;
  lengths[Section.LABEL_OFFSETS] = 4 * labelStrings.offsets.length;
  lengths[Section.LABEL_DATA] = labelStrings.data.length;
  const file = startSectionFile(SIGNAL_INDEX_FORMAT, lengths, {}, () => new RangeError('signal index over 4 GiB'));
  const { bytes, view, offsets } = file;
  file.putBytes(Section.META, metaBytes);

  let o = offsets[Section.V4_STARTS]!;
  let s = offsets[Section.V4_SETS]!;
  for (let i = 0; i < v4Segments.count; i++) {
    view.setUint32(o + 4 * i, v4Segments.starts[i]!, true);
    view.setInt32(s + 4 * i, v4Segments.sets[i]!, true);
  }
  o = offsets[Section.V6_STARTS]!;
  s = offsets[Section.V6_SETS]!;
  for (let i = 0; i < v6Segments.count; i++) {
    writeV6(view, o + 16 * i, v6Segments.starts[i]!);
    view.setInt32(s + 4 * i, v6Segments.sets[i]!, true);
  }
  file.putU32s(Section.SET_OFFSETS, sets.offsets);
  file.putU32s(Section.SET_ENTRIES, sets.entries);

  o = offsets[Section.V4_ENTRIES]!;
  for (let i = 0; i < v4.count; i++, o += V4_ENTRY_BYTES) {
    view.setUint32(o, v4.starts[i]!, true);
    view.setUint32(o + 4, v4.ends[i]!, true);
    view.setUint16(o + 8, v4.sources[i]!, true);
    view.setUint16(o + 10, v4.ports[i]!, true);
    view.setInt32(o + 12, v4.labels[i]!, true);
  }
  o = offsets[Section.V6_ENTRIES]!;
  for (let i = 0; i < v6.count; i++, o += V6_ENTRY_BYTES) {
    writeV6(view, o, v6.starts[i]!);
    writeV6(view, o + 16, v6.ends[i]!);
    view.setUint16(o + 32, v6.sources[i]!, true);
    view.setUint16(o + 34, v6.ports[i]!, true);
    view.setInt32(o + 36, v6.labels[i]!, true);
  }
  o = offsets[Section.ASN_ENTRIES]!;
  for (let i = 0; i < asn.count; i++, o += ASN_ENTRY_BYTES) {
    view.setUint32(o, asn.asns[i]!, true);
    view.setUint16(o + 4, asn.sources[i]!, true);
    view.setInt32(o + 8, asn.labels[i]!, true);
  }
  file.putStrings(Section.LABEL_OFFSETS, Section.LABEL_DATA, labelStrings);
  return { bytes, meta };
}

function writeV6(view: DataView, offset: number, value: bigint): void {
  view.setUint32(offset, Number((value >> 96n) & 0xffff_ffffn), true);
  view.setUint32(offset + 4, Number((value >> 64n) & 0xffff_ffffn), true);
  view.setUint32(offset + 8, Number((value >> 32n) & 0xffff_ffffn), true);
  view.setUint32(offset + 12, Number(value & 0xffff_ffffn), true);
}

/** Interned multi-entry sets; single entries are coded in the segment itself. */
class SetTable {
  readonly offsets: number[] = [0];
  readonly entries: number[] = [];
  private readonly ids = new Map<string, number>();

  get count(): number {
    return this.offsets.length - 1;
  }

  /** The segment value of a set of entry ids (ascending). */
  code(active: readonly number[]): number {
    if (active.length === 0) return NO_SET;
    if (active.length === 1) return -2 - active[0]!;
    const key = active.join(',');
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.count;
      for (const entry of active) this.entries.push(entry);
      this.offsets.push(this.entries.length);
      this.ids.set(key, id);
    }
    return id;
  }
}

// ---------------------------------------------------------------- IPv4

interface V4Entries {
  count: number;
  starts: Uint32Array;
  ends: Uint32Array;
  sources: Uint16Array;
  ports: Uint16Array;
  labels: Int32Array;
  countBySource: number[];
}

/** Every IPv4 entry of every source, sorted by (start, end, source, port), exact duplicates dropped. */
function collectV4(sources: readonly SignalSourceInput[], globalLabel: (source: number, label: number) => number): V4Entries {
  let total = 0;
  for (const source of sources) total += source.entries.v4Count;
  const starts = new Uint32Array(total);
  const ends = new Uint32Array(total);
  const src = new Uint16Array(total);
  const ports = new Uint16Array(total);
  const labels = new Int32Array(total);
  let n = 0;
  sources.forEach((source, s) => {
    const e = source.entries;
    for (let i = 0; i < e.v4Count; i++, n++) {
      starts[n] = e.v4Starts[i]!;
      ends[n] = e.v4Ends[i]!;
      src[n] = s;
      ports[n] = e.v4Ports[i]!;
      labels[n] = globalLabel(s, e.v4Labels[i]!);
    }
  });

  // Sort by start through numeric keys (see sortedOrder).
  const order = sortedOrder(starts, total);
  // Within runs of equal starts, order by end, source, port (runs are short).
  const compare = (a: number, b: number) => ends[a]! - ends[b]! || src[a]! - src[b]! || ports[a]! - ports[b]!;
  for (let i = 0; i < total; ) {
    let j = i + 1;
    while (j < total && starts[order[j]!] === starts[order[i]!]) j++;
    if (j - i > 1) order.subarray(i, j).sort(compare);
    i = j;
  }

  const out: V4Entries = {
    count: 0,
    starts: new Uint32Array(total),
    ends: new Uint32Array(total),
    sources: new Uint16Array(total),
    ports: new Uint16Array(total),
    labels: new Int32Array(total),
    countBySource: sources.map(() => 0),
  };
  let previous = -1;
  for (let k = 0; k < total; k++) {
    const i = order[k]!;
    if (previous >= 0 && starts[i] === starts[previous] && ends[i] === ends[previous] && src[i] === src[previous] && ports[i] === ports[previous]) continue;
    const c = out.count++;
    out.starts[c] = starts[i]!;
    out.ends[c] = ends[i]!;
    out.sources[c] = src[i]!;
    out.ports[c] = ports[i]!;
    out.labels[c] = labels[i]!;
    out.countBySource[src[i]!]!++;
    previous = i;
  }
  return out;
}

/**
 * Positions 0..n-1 ordered by `starts` (stable). Below 2^21 entries a
 * Float64Array of `start * 2^21 + position` (exact: under 2^53) sorts
 * natively, several times faster than a comparator sort.
 */
function sortedOrder(starts: Uint32Array, n: number): Uint32Array {
  const order = new Uint32Array(n);
  if (n < 2 ** 21) {
    const keys = new Float64Array(n);
    for (let i = 0; i < n; i++) keys[i] = starts[i]! * 2 ** 21 + i;
    keys.sort();
    for (let i = 0; i < n; i++) order[i] = keys[i]! % 2 ** 21;
    return order;
  }
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((a, b) => starts[a]! - starts[b]! || a - b);
  return order;
}

interface Segments<T> {
  count: number;
  starts: ArrayLike<T>;
  sets: ArrayLike<number>;
}

/**
 * Cuts the sorted entries into disjoint segments: walks every start and every
 * end + 1 in order, keeping the set of entries that hold the current address.
 */
function sweepV4(entries: V4Entries, sets: SetTable): Segments<number> {
  const n = entries.count;
  const endsPlus = new Float64Array(n);
  for (let i = 0; i < n; i++) endsPlus[i] = entries.ends[i]! + 1;
  endsPlus.sort();
  let m = n;
  while (m > 0 && endsPlus[m - 1]! >= V4_LIMIT) m--;

  let capacity = 2 * n + 1;
  let segStarts = new Uint32Array(capacity);
  let segSets = new Int32Array(capacity);
  let count = 1;
  segStarts[0] = 0;
  segSets[0] = NO_SET;
  let active: number[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    const p = i < n && (j >= m || entries.starts[i]! <= endsPlus[j]!) ? entries.starts[i]! : endsPlus[j]!;
    let removed = false;
    while (j < m && endsPlus[j] === p) {
      j++;
      removed = true;
    }
    if (removed) active = active.filter((id) => entries.ends[id]! >= p);
    while (i < n && entries.starts[i] === p) active.push(i++);
    const code = sets.code(active);
    if (code === segSets[count - 1]) continue;
    if (segStarts[count - 1] === p) {
      segSets[count - 1] = code;
      if (count > 1 && segSets[count - 2] === code) count--;
      continue;
    }
    if (count === capacity) {
      capacity *= 2;
      const grownStarts = new Uint32Array(capacity);
      grownStarts.set(segStarts);
      segStarts = grownStarts;
      const grownSets = new Int32Array(capacity);
      grownSets.set(segSets);
      segSets = grownSets;
    }
    segStarts[count] = p;
    segSets[count] = code;
    count++;
  }
  return { count, starts: segStarts, sets: segSets };
}

// ---------------------------------------------------------------- IPv6

interface V6Entries {
  count: number;
  starts: bigint[];
  ends: bigint[];
  sources: number[];
  ports: number[];
  labels: number[];
  countBySource: number[];
}

function collectV6(sources: readonly SignalSourceInput[], globalLabel: (source: number, label: number) => number): V6Entries {
  const all: Array<{ start: bigint; end: bigint; source: number; port: number; label: number }> = [];
  sources.forEach((source, s) => {
    const e = source.entries;
    for (let i = 0; i < e.v6Starts.length; i++) {
      all.push({ start: e.v6Starts[i]!, end: e.v6Ends[i]!, source: s, port: e.v6Ports[i]!, label: globalLabel(s, e.v6Labels[i]!) });
    }
  });
  const cmp = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);
  all.sort((a, b) => cmp(a.start, b.start) || cmp(a.end, b.end) || a.source - b.source || a.port - b.port);
  const out: V6Entries = { count: 0, starts: [], ends: [], sources: [], ports: [], labels: [], countBySource: sources.map(() => 0) };
  let previous: (typeof all)[number] | null = null;
  for (const entry of all) {
    if (previous && entry.start === previous.start && entry.end === previous.end && entry.source === previous.source && entry.port === previous.port) continue;
    out.starts.push(entry.start);
    out.ends.push(entry.end);
    out.sources.push(entry.source);
    out.ports.push(entry.port);
    out.labels.push(entry.label);
    out.countBySource[entry.source]!++;
    out.count++;
    previous = entry;
  }
  return out;
}

/** As sweepV4; entry ids are offset by the IPv4 entry count. */
function sweepV6(entries: V6Entries, sets: SetTable, idBase: number): Segments<bigint> {
  const n = entries.count;
  const endsPlus = entries.ends.map((end) => end + 1n).filter((value) => value < V6_LIMIT);
  endsPlus.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const m = endsPlus.length;
  const starts: bigint[] = [0n];
  const codes: number[] = [NO_SET];
  let active: number[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    const p = i < n && (j >= m || entries.starts[i]! <= endsPlus[j]!) ? entries.starts[i]! : endsPlus[j]!;
    let removed = false;
    while (j < m && endsPlus[j] === p) {
      j++;
      removed = true;
    }
    if (removed) active = active.filter((id) => entries.ends[id - idBase]! >= p);
    while (i < n && entries.starts[i] === p) active.push(idBase + i++);
    const code = sets.code(active);
    if (code === codes[codes.length - 1]) continue;
    if (starts[starts.length - 1] === p) {
      codes[codes.length - 1] = code;
      if (codes.length > 1 && codes[codes.length - 2] === code) {
        starts.pop();
        codes.pop();
      }
      continue;
    }
    starts.push(p);
    codes.push(code);
  }
  return { count: starts.length, starts, sets: codes };
}

// ---------------------------------------------------------------- AS numbers

interface AsnEntries {
  count: number;
  asns: number[];
  sources: number[];
  labels: number[];
  countBySource: number[];
}

function collectAsns(sources: readonly SignalSourceInput[], globalLabel: (source: number, label: number) => number): AsnEntries {
  const all: Array<{ asn: number; source: number; label: number }> = [];
  sources.forEach((source, s) => {
    const e = source.entries;
    for (let i = 0; i < e.asns.length; i++) all.push({ asn: e.asns[i]!, source: s, label: globalLabel(s, e.asnLabels[i]!) });
  });
  all.sort((a, b) => a.asn - b.asn || a.source - b.source);
  const out: AsnEntries = { count: 0, asns: [], sources: [], labels: [], countBySource: sources.map(() => 0) };
  for (let k = 0; k < all.length; k++) {
    const entry = all[k]!;
    const previous = all[k - 1];
    if (previous && previous.asn === entry.asn && previous.source === entry.source) continue;
    out.asns.push(entry.asn);
    out.sources.push(entry.source);
    out.labels.push(entry.label);
    out.countBySource[entry.source]!++;
    out.count++;
  }
  return out;
}
