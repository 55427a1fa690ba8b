/**
 * The CSV record writer: rows of records by column path, groups of columns
 * cached per shared sub-object, exactly the bytes csvRow gives the same
 * cells.
 */
import { describe, expect, it } from 'vitest';
import { createCsvRecordWriter, csvRecordText, writeCsvCell } from '../../src/output/csv-encoder.js';
import { csvCell, csvRow, type CsvCell } from '../../src/output/csv-row.js';
import { getPath } from '../../src/output/record-schema.js';
import { Utf8Chunk } from '../../src/output/utf8-chunk.js';
import { seededRandom } from '../support/seeded-random.js';

const COLUMNS = ['kind', 'ip', 'location.country', 'location.city', 'location.latitude', 'network.asn', 'network.organization', 'security.is_vpn', 'security.threat_level', 'reserved'];
const TEXTS = ['8.8.8.8', 'Zürich', '東京', 'a,b', 'say "hi"', '=SUM(A1)', '-1', '@x', 'line\nbreak', '', '😀', 'Mountain View', 'carriage\rreturn', '+49 30', '\ttab', 'x'.repeat(60), 'AS15169'];

/** Records whose sub-objects are shared, some frozen, some null, like the engine's. */
function corpus(count: number): Record<string, unknown>[] {
  const random = seededRandom(0xc5f);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const locations = Array.from({ length: 40 }, (_, i) => {
    const location = { country: pick(TEXTS), city: random() < 0.2 ? null : pick(TEXTS), latitude: Math.round((random() - 0.5) * 1800000) / 10000 };
    return i % 10 === 0 ? Object.freeze(location) : location;
  });
  const networks = Array.from({ length: 20 }, (_, i) => {
    const network = { asn: random() < 0.1 ? null : Math.floor(random() * 400000), organization: pick(TEXTS) };
    return i === 0 ? Object.freeze(network) : network;
  });
  const securities = [Object.freeze({ is_vpn: null, threat_level: null }), { is_vpn: false, threat_level: 'low' }, { is_vpn: true, threat_level: 'medium' }];
  return Array.from({ length: count }, () => ({
    kind: 'ip',
    ip: pick(TEXTS),
    location: random() < 0.05 ? null : pick(locations),
    network: pick(networks),
    security: pick(securities),
    reserved: random() < 0.9 ? null : pick(TEXTS),
  }));
}

/** The reference: csvRow of the columns' values, without its line ending. */
const referenceRow = (columns: readonly string[], record: unknown) => csvRow(columns.map((column) => getPath(record, column) as CsvCell)).slice(0, -1);

describe('createCsvRecordWriter', () => {
  it('writes the bytes of csvRow for 20,000 records of shared, frozen and missing sub-objects', () => {
    const records = corpus(20_000);
    const write = createCsvRecordWriter(COLUMNS);
    const chunk = new Utf8Chunk();
    for (const record of records) {
      write(record, chunk);
      chunk.appendByte(0x0a);
    }
    const expected = records.map((record) => `${referenceRow(COLUMNS, record)}\n`).join('');
    expect(records.map((record) => csvRecordText(write, record))).toEqual(records.map((record) => referenceRow(COLUMNS, record)));
    expect(Buffer.from(chunk.take()).toString('utf8')).toBe(expected);
  });

  it('keeps its cache out of sight: the records read, print and compare as before', () => {
    const records = corpus(200);
    const before = JSON.stringify(records);
    const keys = records.map((record) => Object.keys(record.location ?? {}).join());
    const write = createCsvRecordWriter(COLUMNS);
    for (const record of records) write(record, new Utf8Chunk());
    expect(JSON.stringify(records)).toBe(before);
    expect(records.map((record) => Object.keys(record.location ?? {}).join())).toEqual(keys);
    expect(records).toEqual(JSON.parse(before));
    expect(structuredClone(records)).toEqual(JSON.parse(before));
  });

  it('writes a changed encoding per writer, not a stale one: two writers of different columns share the objects', () => {
    const record = corpus(1)[0]!;
    const [a, b] = [createCsvRecordWriter(['location.country']), createCsvRecordWriter(['location.city', 'location.country'])];
    const [one, two] = [new Utf8Chunk(), new Utf8Chunk()];
    a(record, one);
    b(record, two);
    expect(Buffer.from(one.take()).toString()).toBe(referenceRow(['location.country'], record));
    expect(Buffer.from(two.take()).toString()).toBe(referenceRow(['location.city', 'location.country'], record));
  });

  it('keeps one memo per column set on a shared object, however many writers meet it', () => {
    const location = { country: 'Zürich', city: 'Zürich', latitude: 1 };
    for (let i = 0; i < 100; i++) csvRecordText(createCsvRecordWriter(['location.country']), { location });
    csvRecordText(createCsvRecordWriter(['location.city', 'location.country']), { location });
    expect(Object.getOwnPropertySymbols(location)).toHaveLength(2);
  });
});

describe('writeCsvCell', () => {
  it('writes the bytes of csvCell for every kind of cell, the quick ASCII path and the others', () => {
    const cells: CsvCell[] = [...TEXTS, 'a'.repeat(48), 'a'.repeat(49), '2001:db8::1', 0, -1.5, 15169, true, false, null, undefined, ['1.0.0.0/24'], { a: 1 }];
    const chunk = new Utf8Chunk();
    for (const cell of cells) {
      writeCsvCell(cell, chunk);
      chunk.appendByte(0x7c);
    }
    expect(Buffer.from(chunk.take()).toString('utf8')).toBe(cells.map((cell) => `${csvCell(cell)}|`).join(''));
  });
});

