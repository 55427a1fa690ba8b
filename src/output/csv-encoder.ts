import { csvCell, startsLikeFormula, type CsvCell } from './csv-row.js';
import { Utf8Chunk } from './utf8-chunk.js';

/** Writes one record's cells, comma-separated (no line ending), into a chunk. */
export type CsvRecordWriter = (record: unknown, out: Utf8Chunk) => void;

type Part = { kind: 'leaf'; keys: readonly string[] } | { kind: 'group'; key: string; group: CsvGroup };

const COMMA = 0x2c;

/**
 * ASCII codes that keep a text cell off the fast path: those that need
 * quoting (RFC 4180 §2.6: the delimiter, the quote, line breaks) and the
 * control characters csvCell escapes (all of C0 but TAB, and DEL).
 */
const QUOTED = new Uint8Array(128);
for (const char of [',', '"', '\r', '\n']) QUOTED[char.charCodeAt(0)] = 1;
for (let code = 0; code < 0x20; code++) if (code !== 0x09) QUOTED[code] = 1;
QUOTED[0x7f] = 1;

/**
 * Writes one cell as `csvCell` encodes it. Most text cells of a bulk row
 * (the query, the address, its type) are short ASCII that needs neither
 * quotes nor the formula guard: those are copied straight into the chunk,
 * without building the cell's text first.
 */
export function writeCsvCell(cell: CsvCell, out: Utf8Chunk): void {
  if (cell === null || cell === undefined) return;
  if (typeof cell === 'string' && cell.length > 0 && !startsLikeFormula(cell.charCodeAt(0)) && out.appendAsciiUnmarked(cell, QUOTED)) return;
  out.appendShort(csvCell(cell));
}

/**
 * The key a group's encoded bytes are kept under, one per group of columns
 * (`location` with its sub-paths): writers of the same columns share it, so
 * a shared object carries one memo per column set however many writers
 * meet it (an API request each, say).
 */
const memos = new Map<string, symbol>();
/** Bytes of the objects that cannot take a property (the engine's frozen "empty" ones), by memo. */
const frozenMemos = new WeakMap<object, Map<symbol, Uint8Array>>();

function read(value: unknown, keys: readonly string[]): unknown {
  for (const key of keys) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * Consecutive columns under one key (`location.country`, `location.city`,
 * ...) of a record, encoded once per shared sub-object: the bytes are kept
 * on the object under `memo`, so a writer reads them as
 * `value[group.memo] ?? group.bytesOf(value)`.
 */
export class CsvGroup {
  /** The key the encoded bytes are kept under on each object (not enumerable). */
  readonly memo: symbol;
  /** The bytes of the group when the record has no object under its key: the separators alone. */
  readonly empty: Uint8Array;
  // The engine's frozen "empty" objects are few and come again and again
  // (every special-purpose address): the last one is remembered.
  private lastFrozen: object | null = null;
  private lastFrozenBytes: Uint8Array = new Uint8Array();

  /**
   * @param key the record's key the group's object is under (`location`)
   * @param subKeys the path of each column below that key, in column order
   */
  constructor(key: string, private readonly subKeys: ReadonlyArray<readonly string[]>) {
    const signature = `${key}:${subKeys.map((keys) => keys.join('.')).join(',')}`;
    let memo = memos.get(signature);
    if (memo === undefined) memos.set(signature, (memo = Symbol(`csv ${signature}`)));
    this.memo = memo;
    this.empty = Buffer.from(','.repeat(subKeys.length - 1));
  }

  /** The bytes of the group's cells of `value` that are not kept on it yet: encoded and kept, or those of a frozen object. */
  bytesOf(value: object): Uint8Array {
    if (Object.isExtensible(value)) {
      const bytes = this.encode(value);
      Object.defineProperty(value, this.memo, { value: bytes });
      return bytes;
    }
    if (value === this.lastFrozen) return this.lastFrozenBytes;
    let byMemo = frozenMemos.get(value);
    if (byMemo === undefined) frozenMemos.set(value, (byMemo = new Map()));
    let bytes = byMemo.get(this.memo);
    if (bytes === undefined) byMemo.set(this.memo, (bytes = this.encode(value)));
    this.lastFrozen = value;
    this.lastFrozenBytes = bytes;
    return bytes;
  }

  private encode(value: object): Uint8Array {
    const subKeys = this.subKeys;
    let text = csvCell(read(value, subKeys[0]!) as CsvCell);
    for (let i = 1; i < subKeys.length; i++) text += `,${csvCell(read(value, subKeys[i]!) as CsvCell)}`;
    return Buffer.from(text);
  }
}

/** The columns (dot paths) in order; consecutive columns under one key (`location.*`) form a group. */
function compileParts(columns: readonly string[]): Part[] {
  const parts: Array<{ kind: 'leaf'; keys: readonly string[] } | { kind: 'group'; key: string; subKeys: Array<readonly string[]> }> = [];
  for (const column of columns) {
    const keys = column.split('.');
    const last = parts[parts.length - 1];
    if (keys.length > 1 && last?.kind === 'group' && last.key === keys[0]) last.subKeys.push(keys.slice(1));
    else if (keys.length > 1) parts.push({ kind: 'group', key: keys[0]!, subKeys: [keys.slice(1)] });
    else parts.push({ kind: 'leaf', keys });
  }
  return parts.map((part) => (part.kind === 'group' ? { kind: 'group', key: part.key, group: new CsvGroup(part.key, part.subKeys) } : part));
}

/**
 * Compiles the CSV encoding of a record's columns (dot paths) once per run,
 * written straight into a chunk of UTF-8 bytes: a bulk run builds no row as
 * a string (V8 would make a rope of its pieces and flatten it before
 * encoding). The bytes equal `csvRow` of the same cells, without its line
 * ending.
 *
 * Consecutive columns under one key (`location.*`) form a group whose
 * encoded bytes are cached per sub-object (CsvGroup): the engine shares one
 * location object among every address of a city and one network object per
 * ASN range, so a bulk run encodes each of them once. Records are
 * read-only, which makes caching by identity safe. The cache is kept on the
 * shared objects themselves, under a symbol, not enumerable: invisible to
 * JSON, structured clone and equality checks. A WeakMap holding a long
 * run's few hundred thousand location objects costs a cache miss on every
 * row; a property of an object the row has just read costs nothing.
 */
export function createCsvRecordWriter(columns: readonly string[]): CsvRecordWriter {
  const parts = compileParts(columns);
  return (record, out) => {
    for (let i = 0; i < parts.length; i++) {
      if (i > 0) out.appendByte(COMMA);
      const part = parts[i]!;
      if (part.kind === 'leaf') {
        writeCsvCell(read(record, part.keys) as CsvCell, out);
        continue;
      }
      const { group } = part;
      const value = (record as Record<string, unknown> | null)?.[part.key];
      if (value === null || typeof value !== 'object') out.appendBytes(group.empty);
      else out.appendBytes((value as Record<symbol, Uint8Array | undefined>)[group.memo] ?? group.bytesOf(value));
    }
  };
}

/** The text a writer writes for one record: for output built as text (one-off runs, the API). */
export function csvRecordText(write: CsvRecordWriter, record: unknown): string {
  const chunk = new Utf8Chunk();
  write(record, chunk);
  return Buffer.from(chunk.take()).toString('utf8');
}
