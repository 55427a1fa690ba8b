import { csvCell, type CsvCell } from './csv-row.js';
import type { Utf8Chunk } from './utf8-chunk.js';

type Part =
  | { kind: 'leaf'; keys: readonly string[] }
  | { kind: 'group'; key: string; subKeys: ReadonlyArray<readonly string[]> };

function read(value: unknown, keys: readonly string[]): unknown {
  for (const key of keys) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * Compiles the CSV encoding of a record's columns (dot paths) once per run.
 * Consecutive columns under one key (`location.*`) form a group whose
 * encoded text is cached per sub-object: the engine shares one location
 * object among every address of a city and one network object per ASN
 * range, so a bulk run encodes each of them once. Records are read-only,
 * which makes caching by identity safe.
 *
 * Returns the row's cells joined with commas (no line ending); the bytes
 * equal `csvRow` of the same cells.
 */
export function createCsvRecordEncoder(columns: readonly string[]): (record: unknown) => string {
  const parts = compileParts(columns);
  const caches = parts.map(() => new WeakMap<object, string>());
  const encodeGroup = (i: number, part: Extract<Part, { kind: 'group' }>, value: unknown): string => {
    if (value === null || typeof value !== 'object') return part.subKeys.map(() => '').join(',');
    const cache = caches[i]!;
    let text = cache.get(value);
    if (text === undefined) {
      text = part.subKeys.map((keys) => csvCell(read(value, keys) as CsvCell)).join(',');
      cache.set(value, text);
    }
    return text;
  };
  return (record) => {
    let row = '';
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      const text =
        part.kind === 'leaf'
          ? csvCell(read(record, part.keys) as CsvCell)
          : encodeGroup(i, part, (record as Record<string, unknown> | null)?.[part.key]);
      row += i === 0 ? text : `,${text}`;
    }
    return row;
  };
}

/** The columns (dot paths) in order; consecutive columns under one key (`location.*`) form a group. */
function compileParts(columns: readonly string[]): Part[] {
  const parts: Part[] = [];
  for (const column of columns) {
    const keys = column.split('.');
    const last = parts[parts.length - 1];
    if (keys.length > 1 && last?.kind === 'group' && last.key === keys[0]) {
      (last.subKeys as Array<readonly string[]>).push(keys.slice(1));
    } else if (keys.length > 1) {
      parts.push({ kind: 'group', key: keys[0]!, subKeys: [keys.slice(1)] });
    } else {
      parts.push({ kind: 'leaf', keys });
    }
  }
  return parts;
}

const COMMA = 0x2c;

/**
 * The same encoding written straight into a chunk of UTF-8 bytes, for the
 * rows of a bulk run: no row is built as a string first (V8 would make a
 * rope of its pieces and flatten it before encoding), and a group's cached
 * form is its bytes, copied as they are. The bytes equal
 * createCsvRecordEncoder's text, UTF-8 encoded.
 *
 * The cache is kept on the shared sub-objects themselves, under a symbol of
 * this writer's own, not enumerable: invisible to JSON, structured clone
 * and equality checks. A WeakMap holding a long run's few hundred thousand
 * location objects costs a cache miss on every row; a property of an
 * object the row has just read costs nothing. Objects that cannot take a
 * property (the engine's frozen "empty" ones) use a WeakMap.
 */
export function createCsvRecordWriter(columns: readonly string[]): (record: unknown, out: Utf8Chunk) => void {
  type Group = Extract<ReturnType<typeof compileParts>[number], { kind: 'group' }>;
  const parts = compileParts(columns).map((part) =>
    part.kind === 'leaf' ? part : { ...part, key: part.key, memo: Symbol(`csv:${part.key}`), frozen: new WeakMap<object, Uint8Array>() },
  );
  const empties = parts.map((part) => (part.kind === 'group' ? Buffer.from(part.subKeys.map(() => '').join(',')) : null));
  const encode = (part: Group & { memo: symbol; frozen: WeakMap<object, Uint8Array> }, value: object): Uint8Array => {
    const bytes = Buffer.from(part.subKeys.map((keys) => csvCell(read(value, keys) as CsvCell)).join(','));
    if (Object.isExtensible(value)) Object.defineProperty(value, part.memo, { value: bytes });
    else part.frozen.set(value, bytes);
    return bytes;
  };
  return (record, out) => {
    for (let i = 0; i < parts.length; i++) {
      if (i > 0) out.appendByte(COMMA);
      const part = parts[i]!;
      if (part.kind === 'leaf') {
        out.appendShort(csvCell(read(record, part.keys) as CsvCell));
        continue;
      }
      const value = (record as Record<string, unknown> | null)?.[part.key];
      if (value === null || typeof value !== 'object') {
        out.appendBytes(empties[i]!);
        continue;
      }
      const cached = (value as Record<symbol, Uint8Array | undefined>)[part.memo] ?? part.frozen.get(value);
      out.appendBytes(cached ?? encode(part, value));
    }
  };
}
