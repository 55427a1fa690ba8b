/**
 * The CSV writer specialised for full bulk rows: the same bytes as the
 * generic writer over the bulk schema's adapted rows, for IP records with
 * shared, frozen and missing sub-objects, and for AS-number records.
 */
import { describe, expect, it } from 'vitest';
import { createCsvRecordWriter, type CsvRecordWriter } from '../../src/output/csv-encoder.js';
import { BULK_SCHEMA } from '../../src/output/schemas/bulk-schema.js';
import { createBulkCsvWriter, FULL_BULK_COLUMNS } from '../../src/output/schemas/bulk-csv-writer.js';
import { Utf8Chunk } from '../../src/output/utf8-chunk.js';
import { seededRandom } from '../support/seeded-random.js';

const TEXTS = ['Zürich', '東京', 'a,b', 'say "hi"', '=SUM(A1)', '-1', '@x', 'line\nbreak', '', 'Mountain View', '+49 30', 'x'.repeat(60)];

function corpus(count: number): unknown[] {
  const random = seededRandom(0xb01c);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const maybe = <T>(value: T) => (random() < 0.2 ? null : value);
  const locations = Array.from({ length: 30 }, (_, i) => {
    const location = {
      country: maybe(pick(TEXTS)),
      country_code: maybe('DE'),
      region: maybe(pick(TEXTS)),
      region_code: maybe('DE-BE'),
      city: maybe(pick(TEXTS)),
      latitude: maybe(Math.round((random() - 0.5) * 1800000) / 10000),
      longitude: maybe(-122.0841),
      timezone: maybe('Europe/Berlin'),
      zip: maybe(pick(TEXTS)),
    };
    return i % 10 === 0 ? Object.freeze(location) : location;
  });
  const networks = Array.from({ length: 10 }, (_, i) => {
    const organization = maybe(pick(TEXTS));
    const network = { isp: organization, organization, asn: maybe(Math.floor(random() * 400000)), domain: null };
    return i === 0 ? Object.freeze(network) : network;
  });
  const securities = [
    Object.freeze({ is_vpn: null, is_proxy: null, is_tor: null, is_hosting: null, threat_level: null, threat_rule: null, provider: null, evidence: [] }),
    { is_vpn: false, is_proxy: false, is_tor: false, is_hosting: true, threat_level: 'low', threat_rule: 'r', provider: null, evidence: [] },
  ];
  return Array.from({ length: count }, () => {
    if (random() < 0.1) return { kind: 'asn', asn: maybe(15169), organization: maybe(pick(TEXTS)), route: maybe(['8.8.8.0/24']) };
    return {
      ip: pick(['8.8.8.8', '2001:db8::1', '=1', 'a,b']),
      type: pick(['ipv4', 'ipv6']),
      location: random() < 0.05 ? null : pick(locations),
      network: random() < 0.05 ? null : pick(networks),
      security: random() < 0.05 ? null : pick(securities),
      reserved: random() < 0.9 ? null : pick(['private (RFC 1918)', '-x', 'a"b']),
      meta: { data: {} },
    };
  });
}

function textOf(write: CsvRecordWriter, records: readonly unknown[]): string {
  const chunk = new Utf8Chunk();
  for (const record of records) {
    write(record, chunk);
    chunk.appendByte(0x0a);
  }
  return Buffer.from(chunk.take()).toString('utf8');
}

describe('createBulkCsvWriter', () => {
  it('writes the generic writer\'s bytes of the adapted rows, for 10,000 IP and AS-number records', () => {
    // Two copies of the records: each writer encodes the shared objects itself.
    const [records, copies] = [corpus(10_000), corpus(10_000)];
    const specialised = createBulkCsvWriter(BULK_SCHEMA.columns, BULK_SCHEMA.adapt!)!;
    const generic = createCsvRecordWriter(BULK_SCHEMA.columns);
    expect(specialised).not.toBeNull();
    expect(textOf(specialised, records)).toBe(textOf((record, out) => generic(BULK_SCHEMA.adapt!(record), out), copies));
  });

  it('is made for the full bulk columns only', () => {
    expect(FULL_BULK_COLUMNS).toEqual(BULK_SCHEMA.columns);
    expect(createBulkCsvWriter(BULK_SCHEMA.columns.slice(0, -1), BULK_SCHEMA.adapt!)).toBeNull();
    expect(createBulkCsvWriter(['kind', 'ip'], BULK_SCHEMA.adapt!)).toBeNull();
  });
});
