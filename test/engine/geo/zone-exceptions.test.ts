/**
 * The zone exception list (data/build/zones.idx): its format on its own, and
 * on the installed data that every record's zone is what tz-lookup says at
 * its point, as the lookup asked before the list existed.
 */
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngineContext } from '../../../src/engine/context.js';
import { dataFilePath } from '../../../src/engine/data/data-files.js';
import { MmdbFile } from '../../../src/engine/geo/mmdb-file.js';
import { loadRegionTable } from '../../../src/engine/geo/region-codes.js';
import { timezoneAt } from '../../../src/engine/geo/timezones.js';
import { compileZoneExceptions, ZoneExceptions } from '../../../src/engine/geo/zone-exceptions.js';
import { ipDatabasesFor } from '../../../src/engine/ip/ip-databases.js';
import { coordinate, createIpTextLookup } from '../../../src/engine/ip/lookup-ip.js';
import { NetintelError } from '../../../src/errors.js';
import { tempDir } from '../../support/cli.js';
import { seededRandom } from '../../support/seeded-random.js';

const scratch = tempDir('netintel-zones-');
afterAll(() => scratch.remove());

const V4 = { buildEpochSeconds: 1_700_000_000, nodeCount: 1234 };
const V6 = { buildEpochSeconds: 1_700_000_001, nodeCount: 5678 };
const metadata = (ipVersion: 4 | 6, identity: typeof V4) => ({ ipVersion, buildEpoch: new Date(identity.buildEpochSeconds * 1000), nodeCount: identity.nodeCount });

function written(name: string, bytes: Uint8Array): string {
  const path = join(scratch.path, name);
  writeFileSync(path, bytes);
  return path;
}

describe('zone exception files', () => {
  // Offsets spread over many buckets, one far beyond the rest, and one of each bucket edge.
  const v4: Array<[number, string | null]> = [
    [0, 'Europe/Vienna'],
    [255, 'America/Phoenix'],
    [256, null],
    [70_000, 'America/Chicago'],
    [70_001, 'America/Chicago'],
    [9_999_999, 'Pacific/Chatham'],
  ];
  const v6: Array<[number, string | null]> = [[42, 'Asia/Kolkata']];
  const path = written('zones.idx', compileZoneExceptions({ v4: { identity: V4, exceptions: [...v4].reverse() }, v6: { identity: V6, exceptions: v6 } }));

  for (const mode of ['pread', 'memory'] as const) {
    it(`answers listed offsets with their zone or none, others undefined (${mode})`, () => {
      const file = ZoneExceptions.open(path, mode);
      try {
        const list = file.forDatabase(metadata(4, V4))!;
        for (const [offset, zone] of v4) expect(list.zoneAt(offset)).toBe(zone);
        for (const offset of [1, 254, 257, 69_999, 70_002, 9_999_998, 10_000_000, 2 ** 32 - 1, -1]) expect(list.zoneAt(offset)).toBeUndefined();
        const list6 = file.forDatabase(metadata(6, V6))!;
        expect(list6.zoneAt(42)).toBe('Asia/Kolkata');
        expect(list6.zoneAt(0)).toBeUndefined();
      } finally {
        file.close();
      }
    });
  }

  it('gives no list for a database it was not built from', () => {
    const file = ZoneExceptions.open(path, 'pread');
    try {
      expect(file.forDatabase(metadata(4, { ...V4, nodeCount: V4.nodeCount + 1 }))).toBeNull();
      expect(file.forDatabase(metadata(6, { ...V6, buildEpochSeconds: V6.buildEpochSeconds + 1 }))).toBeNull();
      expect(file.forDatabase(metadata(6, V4))).toBeNull();
    } finally {
      file.close();
    }
  });

  it('holds empty lists', () => {
    const empty = written('empty.idx', compileZoneExceptions({ v4: { identity: V4, exceptions: [] }, v6: { identity: V6, exceptions: [] } }));
    const file = ZoneExceptions.open(empty, 'memory');
    expect(file.forDatabase(metadata(4, V4))!.zoneAt(0)).toBeUndefined();
  });

  it('refuses a missing, foreign or truncated file as data_unavailable, naming it', () => {
    const bytes = compileZoneExceptions({ v4: { identity: V4, exceptions: v4 }, v6: { identity: V6, exceptions: v6 } });
    const cases = {
      'missing.idx': null,
      'foreign.idx': written('foreign.idx', Buffer.from('# not an index\n'.repeat(200))),
      'short.idx': written('short.idx', bytes.subarray(0, 100)),
    };
    for (const [name, file] of Object.entries(cases)) {
      for (const mode of ['pread', 'memory'] as const) {
        const attempt = () => ZoneExceptions.open(file ?? join(scratch.path, name), mode);
        expect(attempt).toThrow(NetintelError);
        expect(attempt).toThrow(new RegExp(`${name.replace('.', '\\.')}.*build:data`));
      }
    }
  });

  it('refuses entries cut off at the end when a lookup reaches them', () => {
    const bytes = compileZoneExceptions({ v4: { identity: V4, exceptions: v4 }, v6: { identity: V6, exceptions: v6 } });
    // The names section and the last entries gone: the header still reads.
    const cut = written('cut.idx', bytes.subarray(0, bytes.length - 80));
    const file = ZoneExceptions.open(cut, 'pread');
    expect(() => file.forDatabase(metadata(6, V6))!.zoneAt(42)).toThrow(/cut\.idx.*truncated/);
    file.close();
  });
});

describe('record zones on the installed data', () => {
  const ctx = createEngineContext();
  afterAll(() => ctx.close());
  const regions = loadRegionTable(dataFilePath('regions', null));
  const city = { 4: MmdbFile.open(dataFilePath('cityV4', null)), 6: MmdbFile.open(dataFilePath('cityV6', null)) };
  afterAll(() => {
    city[4].close();
    city[6].close();
  });

  /** What the lookup answered before the exception list: the region's single zone, else tz-lookup at the record's point. */
  function zoneBefore(version: 4 | 6, offset: number): string | null {
    const record = city[version].decode(offset) as { country_code?: string; state1?: string; latitude?: number; longitude?: number };
    const country = record.country_code || null;
    return regions.timezone(country, record.state1 || null) ?? timezoneAt(coordinate(record.latitude), coordinate(record.longitude));
  }

  /**
   * Random IPv4 addresses; IPv6 ones at the start of random routed ranges
   * (random IPv6 addresses land in a few huge blocks of one record each).
   */
  function randomAddresses(version: 4 | 6, count: number): string[] {
    const random = seededRandom(version === 4 ? 20261126 : 20261127);
    const asn = ipDatabasesFor(ctx, 'memory').asn;
    return Array.from({ length: count }, () => {
      if (version === 4) return Array.from({ length: 4 }, () => Math.floor(random() * 256)).join('.');
      const start = asn.v6StartAt(Math.floor(random() * asn.metadata.v6Ranges));
      return Array.from({ length: 8 }, (_, i) => ((start[2 * i]! << 8) | start[2 * i + 1]!).toString(16)).join(':');
    });
  }

  for (const mode of ['pread', 'memory'] as const) {
    for (const version of [4, 6] as const) {
      it(`gives every IPv${version} record tz-lookup's zone at its point (${mode})`, () => {
        const lookup = createIpTextLookup(ipDatabasesFor(ctx, mode));
        let compared = 0;
        let fromList = 0;
        for (const address of randomAddresses(version, mode === 'pread' ? 1500 : 6000)) {
          const record = lookup(address);
          const offset = version === 4 ? city[4].findOffsetV4(ipToNumber(address)) : city[6].findOffset(ipv6Bytes(address));
          if (record.reserved !== null || offset < 0) continue;
          compared += 1;
          const before = zoneBefore(version, offset);
          if (regions.timezone(record.location.country_code, record.location.region) === null) fromList += 1;
          expect({ address, timezone: record.location.timezone }).toEqual({ address, timezone: before });
        }
        // Enough records, and enough of them in regions spanning several zones, to mean something.
        expect(compared).toBeGreaterThan(mode === 'pread' ? 300 : 1000);
        expect(fromList).toBeGreaterThan(mode === 'pread' ? 20 : 100);
      });
    }
  }

  it('falls back to tz-lookup for a city database the list was not built from', () => {
    // A data dir whose zones.idx lists 8.8.8.8's record with a zone tz-lookup would never give,
    // built once for the installed database and once for another.
    const offset = city[4].findOffsetV4(ipToNumber('8.8.8.8'));
    const identity = (file: MmdbFile) => ({ buildEpochSeconds: file.metadata.buildEpoch.getTime() / 1000, nodeCount: file.metadata.nodeCount });
    const tz = (v4Identity: typeof V4) => {
      const dir = tempDir('netintel-zones-dir-');
      try {
        writeFileSync(join(dir.path, 'zones.idx'), compileZoneExceptions({ v4: { identity: v4Identity, exceptions: [[offset, 'Etc/GMT-14']] }, v6: { identity: identity(city[6]), exceptions: [] } }));
        copyFileSync(dataFilePath('regions', null), join(dir.path, 'regions.tsv'));
        const dirCtx = createEngineContext({ dataDir: dir.path });
        try {
          return createIpTextLookup(ipDatabasesFor(dirCtx, 'pread'))('8.8.8.8').location.timezone;
        } finally {
          dirCtx.close();
        }
      } finally {
        dir.remove();
      }
    };
    expect(tz(identity(city[4]))).toBe('Etc/GMT-14');
    expect(tz({ ...identity(city[4]), nodeCount: 1 })).toBe(zoneBefore(4, offset));
  });
});

function ipToNumber(address: string): number {
  return address.split('.').reduce((value, part) => value * 256 + Number(part), 0);
}

function ipv6Bytes(address: string): Uint8Array {
  const bytes = new Uint8Array(16);
  address.split(':').forEach((group, i) => {
    const value = Number.parseInt(group, 16);
    bytes[2 * i] = value >> 8;
    bytes[2 * i + 1] = value & 0xff;
  });
  return bytes;
}
