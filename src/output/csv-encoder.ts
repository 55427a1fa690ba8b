import { csvCell, type CsvCell } from './csv-row.js';

type Part =
  | { kind: 'leaf'; keys: readonly string[] }
  | { kind: 'group'; key: string; subKeys: ReadonlyArray<readonly string[]>; cache: WeakMap<object, string> };

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
  const parts: Part[] = [];
  for (const column of columns) {
    const keys = column.split('.');
    const last = parts[parts.length - 1];
    if (keys.length > 1 && last?.kind === 'group' && last.key === keys[0]) {
      (last.subKeys as Array<readonly string[]>).push(keys.slice(1));
    } else if (keys.length > 1) {
      parts.push({ kind: 'group', key: keys[0]!, subKeys: [keys.slice(1)], cache: new WeakMap() });
    } else {
      parts.push({ kind: 'leaf', keys });
    }
  }
  const encodeGroup = (part: Extract<Part, { kind: 'group' }>, value: unknown): string => {
    if (value === null || typeof value !== 'object') return part.subKeys.map(() => '').join(',');
    let text = part.cache.get(value);
    if (text === undefined) {
      text = part.subKeys.map((keys) => csvCell(read(value, keys) as CsvCell)).join(',');
      part.cache.set(value, text);
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
          : encodeGroup(part, (record as Record<string, unknown> | null)?.[part.key]);
      row += i === 0 ? text : `,${text}`;
    }
    return row;
  };
}
