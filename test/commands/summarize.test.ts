import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import stringWidth from 'string-width';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SummaryReport } from '../../src/engine/summarize/summary-report.js';
import { BIN, runCli, spawnCli, tempDir } from '../support/cli.js';
import { startTestServer, type TestServer } from '../server/harness.js';
import { generateAccessLog } from '../fixtures/summarize/access-log.js';

const scratch = tempDir('netintel-summarize-');
afterAll(() => scratch.remove());

interface BulkRecord {
  ip: string;
  reserved: string | null;
  location: { country_code: string | null; city: string | null; region: string | null };
  network: { asn: number | null };
  security: { is_vpn: boolean | null; is_proxy: boolean | null; is_tor: boolean | null; is_hosting: boolean | null; threat_level: string | null };
}

/** Counts by key, ranked as the report ranks them: count descending, then key ascending. */
function ranked(keys: ReadonlyArray<string | null>, compare: (a: string, b: string) => number = (a, b) => (a < b ? -1 : a > b ? 1 : 0)): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const key of keys) if (key !== null) counts.set(key, (counts.get(key) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || compare(a[0], b[0]));
}

/**
 * What the report must say about `addresses`, worked out from `netintel bulk
 * -f json` over the same addresses (one per line): a different command and
 * its own counting.
 */
async function expectedFrom(addresses: readonly string[]) {
  const run = await runCli(['bulk', '-f', 'json'], { stdin: `${addresses.join('\n')}\n` });
  expect(run.code).toBe(0);
  const records = JSON.parse(run.stdout) as BulkRecord[];
  expect(records).toHaveLength(addresses.length);
  const looked = records.filter((record) => record.reserved === null);
  const byAsn = (a: string, b: string) => Number(a.slice(2)) - Number(b.slice(2));
  return {
    totals: {
      addresses: addresses.length,
      ipv4: addresses.filter((address) => !address.includes(':')).length,
      ipv6: addresses.filter((address) => address.includes(':')).length,
      unique: new Set(records.map((record) => record.ip)).size,
      reserved: records.length - looked.length,
    },
    countries: ranked(looked.map((record) => record.location.country_code)),
    asns: ranked(looked.map((record) => (record.network.asn === null ? null : `AS${record.network.asn}`)), byAsn),
    cities: ranked(looked.map((record) => (record.location.city === null ? null : `${record.location.country_code ?? ''}/${record.location.region ?? ''}/${record.location.city}`))),
    hosting: looked.filter((record) => record.security.is_hosting === true).length,
    vpn: looked.filter((record) => record.security.is_vpn === true).length,
    threat: ranked(looked.map((record) => record.security.threat_level)),
  };
}

function expectReportMatches(report: SummaryReport, expected: Awaited<ReturnType<typeof expectedFrom>>): void {
  expect(report.totals).toMatchObject({ ...expected.totals, unique_capped: false, lookup_failures: 0 });
  const rows = (table: SummaryReport['countries']) => table.rows.map((row) => [row.key, row.count]);
  expect(rows(report.countries)).toEqual(expected.countries.slice(0, report.top));
  expect(rows(report.asns)).toEqual(expected.asns.slice(0, report.top));
  expect(rows(report.cities)).toEqual(expected.cities.slice(0, report.top));
  expect(rows(report.threat_levels)).toEqual(expected.threat.slice(0, report.top));
  expect(report.countries.distinct).toBe(expected.countries.length);
  expect(report.countries.no_data.count).toBe(expected.totals.addresses - expected.countries.reduce((sum, [, count]) => sum + count, 0));
  expect(report.flags.rows.find((row) => row.key === 'hosting')?.count).toBe(expected.hosting);
  expect(report.flags.rows.find((row) => row.key === 'vpn')?.count).toBe(expected.vpn);
  expect(report.flags.no_data.count).toBe(expected.totals.reserved);
}

describe('netintel summarize', () => {
  const log = generateAccessLog(3000);
  const logPath = join(scratch.path, 'access.log');
  writeFileSync(logPath, log.text);

  it('reports on a generated access log what bulk says of the same addresses', async () => {
    const run = await runCli(['summarize', logPath, '-f', 'json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as SummaryReport;
    expect(report.totals.lines).toBe(log.lines);
    expect(report.totals.invalid_lines).toBe(log.invalidLines);
    expect(report.top).toBe(10);
    const expected = await expectedFrom(log.addresses);
    // The log has IPv6 clients, private hops and garbage: each total counts.
    expect(expected.totals.ipv6).toBeGreaterThan(100);
    expect(expected.totals.reserved).toBeGreaterThan(100);
    expect(log.invalidLines).toBeGreaterThan(10);
    expectReportMatches(report, expected);
    const top3 = await runCli(['summarize', logPath, '--top', '3', '-f', 'json']);
    const cut = JSON.parse(top3.stdout) as SummaryReport;
    expect(cut.countries.rows.map((row) => row.key)).toEqual(report.countries.rows.slice(0, 3).map((row) => row.key));
    expect(cut.countries.other.count).toBe(report.countries.rows.slice(3).reduce((sum, row) => sum + row.count, 0) + report.countries.other.count);
  }, 60_000);

  it('reports on real mail headers what bulk says of the addresses grep finds in them', async () => {
    const headers = new URL('../fixtures/grep/mail-headers.txt', import.meta.url);
    // grep's expected output: `line:address`, one per occurrence.
    const addresses = readFileSync(new URL('../fixtures/grep/mail-headers.expected', import.meta.url), 'utf8').trimEnd().split('\n').map((line) => line.replace(/^\d+:/, ''));
    expect(addresses.length).toBeGreaterThan(10);
    const run = await runCli(['summarize', headers.pathname, '-f', 'json']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as SummaryReport;
    // A zone index names the logging host's interface: the lookup gets the address without it.
    expectReportMatches(report, await expectedFrom(addresses.map((address) => address.replace(/%.*$/, ''))));
    expect(report.totals.lines).toBe(readFileSync(headers, 'utf8').trimEnd().split('\n').length);
  }, 60_000);

  it('counts several inputs and stdin ("-") as one report', async () => {
    const other = join(scratch.path, 'more.txt');
    writeFileSync(other, '8.8.8.8\n1.1.1.1\n');
    const run = await runCli(['summarize', other, '-', other, '-f', 'json'], { stdin: '9.9.9.9\nnothing\n' });
    const report = JSON.parse(run.stdout) as SummaryReport;
    expect(report.totals).toMatchObject({ lines: 6, addresses: 5, unique: 3, invalid_lines: 1 });
    expect(report.asns.rows.map((row) => [row.key, row.count])).toEqual([['AS13335', 2], ['AS15169', 2], ['AS19281', 1]]);
  });

  it('writes the long form as csv and ndjson, the report as one xml document', async () => {
    const input = '8.8.8.8\n8.8.8.8\n10.0.0.1\n2001:4860:4860::8888\nbogus\n';
    const csv = await runCli(['summarize', '-f', 'csv'], { stdin: input });
    const lines = csv.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('section,rank,key,name,count,percent');
    expect(lines).toContain('total,,addresses,addresses found,4,100');
    expect(lines).toContain('total,,reserved,reserved addresses,1,25');
    expect(lines).toContain('total,,invalid_lines,lines without an address,1,');
    expect(lines).toContain('countries,1,US,United States,2,50');
    expect(lines).toContain('countries,,(no data),no data,1,25');
    expect(lines).toContain('flags,4,hosting,hosting,3,75');
    const noHeader = await runCli(['summarize', '-f', 'csv', '--no-header'], { stdin: input });
    expect(noHeader.stdout).toBe(`${lines.slice(1).join('\n')}\n`);
    const ndjson = await runCli(['summarize', '-f', 'ndjson'], { stdin: input });
    const rows = ndjson.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rows).toHaveLength(lines.length - 1);
    expect(rows[1]).toEqual({ section: 'total', rank: null, key: 'addresses', name: 'addresses found', count: 4, percent: 100 });
    const xml = await runCli(['summarize', '-f', 'xml'], { stdin: input });
    expect(xml.stdout).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<netintel kind="summarize">\n {2}<record>\n/);
    expect(xml.stdout).toContain('<addresses>4</addresses>');
    expect(xml.stdout.trimEnd().endsWith('</netintel>')).toBe(true);
  });

  it('refuses bad usage in one line with exit 2', async () => {
    for (const [args, message] of [
      [['--top', '0'], '--top must be an integer from 1 to 1000, not "0"'],
      [['--top', '1001'], '--top must be an integer from 1 to 1000'],
      [['--top', 'ten'], '--top must be an integer'],
      [['--svg', ''], '--svg needs a file name, such as map.svg'],
      [['-f', 'value'], 'summarize has no -f value output'],
      [['--fields', 'country'], 'summarize has no --fields'],
      [[join(scratch.path, 'missing.log')], `cannot read ${join(scratch.path, 'missing.log')}: no such file or directory (check the path and its permissions)`],
    ] as const) {
      const run = await runCli(['summarize', ...args], { stdin: '8.8.8.8\n' });
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.split('\n')).toHaveLength(2);
      expect(run.stderr).toContain(message);
    }
    const tty = await runCli(['summarize']);
    expect(tty.code).toBe(2);
    expect(tty.stderr).toBe('netintel: summarize reads addresses or logs from files or stdin: give a file, or pipe the text in\n');
  });

  it('prints the all-zero report for an input without addresses, and exits 3 (not found) as grep does', async () => {
    for (const input of ['', '# only a comment\n\nno address\n']) {
      const run = await runCli(['summarize', '-f', 'json'], { stdin: input });
      expect(run.code).toBe(3);
      expect(run.stderr).toBe('netintel: no IPv4 or IPv6 address in the input (see netintel grep --help for what counts as one)\n');
      const report = JSON.parse(run.stdout) as SummaryReport;
      expect(report.totals.addresses).toBe(0);
      expect(report.countries).toEqual({ rows: [], other: { count: 0, percent: 0 }, no_data: { count: 0, percent: 0 }, distinct: 0 });
    }
  });

  it('writes with --svg a world map whose countries carry the counts of the report', async () => {
    const mapPath = join(scratch.path, 'visitors.svg');
    const run = await runCli(['summarize', logPath, '-f', 'json', '--svg', mapPath]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as SummaryReport;
    const svg = readFileSync(mapPath, 'utf8');
    const shapes = [...svg.matchAll(/<(?:path|circle) data-country="([A-Z]{2})"[^>]*? fill="(#[0-9a-f]{6})"[^>]*><title>([^<]*)<\/title>/g)].map((match) => ({
      code: match[1]!,
      fill: match[2]!,
      title: match[3]!,
    }));
    const noData = shapes.find((shape) => shape.title.endsWith(': no data'))!.fill;
    // Every country of the report's table is on the map, with its count and a shade that is not no-data's.
    for (const row of report.countries.rows) {
      const shape = shapes.find((candidate) => candidate.code === row.key);
      if (shape === undefined) continue; // a country too small for the atlas without a dot is reported on stderr
      expect(shape.title).toMatch(new RegExp(`\\(${row.key}\\): ${row.count.toLocaleString('en-US')}$`));
      expect(shape.fill).not.toBe(noData);
    }
    expect(report.countries.rows.filter((row) => shapes.some((shape) => shape.code === row.key)).length).toBeGreaterThanOrEqual(report.countries.rows.length - 1);
    expect(svg).toContain('Addresses by country: ');
    expect(svg).toContain('Data: DB-IP');
    const drawn = new Set(shapes.filter((shape) => shape.fill !== noData).map((shape) => shape.code)).size;
    expect(run.stderr).toMatch(new RegExp(`^netintel: map of ${drawn} countries written to ${mapPath.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(; not on the map: [A-Z, ]+)?\n$`));
  }, 60_000);

  it('keeps the report when the map cannot be written, and exits 11 (output failed) naming the file', async () => {
    const mapPath = join(scratch.path, 'no-such-dir', 'map.svg');
    const run = await runCli(['summarize', logPath, '-f', 'json', '--svg', mapPath]);
    expect(run.code).toBe(11);
    expect(JSON.parse(run.stdout)).toHaveProperty('totals');
    expect(run.stderr).toBe(`netintel: cannot write the map to ${mapPath}: ENOENT (check that the directory exists and is writable, and the disk has room)\n`);
  }, 60_000);

  it('stops quietly when the reader goes away', async () => {
    const mapPath = join(scratch.path, 'after-head.svg');
    const run = await spawnCli(['summarize', logPath, '-q', '--svg', mapPath], { stdout: 'close-after-first-chunk', timeoutMs: 30_000 });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // The map is a file of its own: written though stdout's reader left.
    expect(readFileSync(mapPath, 'utf8')).toMatch(/<\/svg>\n$/);
  }, 30_000);
});

const hasScript = spawnSync('sh', ['-c', 'command -v script']).status === 0;

describe('netintel summarize on a terminal', () => {
  it.skipIf(!hasScript)('draws bars that fit 60 and 120 columns, and credits DB-IP on stderr', () => {
    const path = join(scratch.path, 'terminal.log');
    writeFileSync(path, generateAccessLog(500, 7).text);
    const errors = join(scratch.path, 'terminal.err');
    // stdout on the terminal; stderr (the credit, the missing feeds' hint) in a file.
    const draw = (columns: number) =>
      spawnSync('script', ['-qfec', `stty cols ${columns} rows 40; NO_COLOR=1 '${process.execPath}' '${BIN}' summarize '${path}' 2>'${errors}'`, '/dev/null'], { encoding: 'utf8' }).stdout.replaceAll('\r', '');
    for (const columns of [60, 120]) {
      const out = draw(columns);
      const stderr = readFileSync(errors, 'utf8');
      const lines = out.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^[\d,]+ addresses from [\d,]+ lines · [\d,]+ unique · \d+ countries$/);
      expect(lines.filter((line) => stringWidth(line) > columns), `${columns} columns`).toEqual([]);
      expect(out).toContain('█');
      expect(stderr).toContain('IP geolocation by DB-IP (https://db-ip.com), CC BY 4.0');
      expect(out).not.toContain('DB-IP');
      // The widest bar row reaches the table's right edge at most.
      expect(Math.max(...lines.map((line) => stringWidth(line)))).toBeGreaterThan(columns - 25);
    }
  }, 60_000);
});

describe('netintel summarize progress', () => {
  it.skipIf(!hasScript)('shows the progress line on a terminal\'s stderr, the report on stdout untouched', () => {
    const path = join(scratch.path, 'long.log');
    writeFileSync(path, Array.from({ length: 400_000 }, (_, i) => `${11 + (i % 80)}.${(i >>> 8) & 255}.${i & 255}.9`).join('\n'));
    const out = join(scratch.path, 'long.json');
    const terminal = spawnSync('script', ['-qfec', `stty cols 100 rows 40; '${process.execPath}' '${BIN}' summarize -f json '${path}' > '${out}'`, '/dev/null'], { encoding: 'utf8' }).stdout;
    expect(terminal).toMatch(/[\d,]+ rows, [\d,]+\/s/);
    const report = JSON.parse(readFileSync(out, 'utf8')) as SummaryReport;
    expect(report.totals.addresses).toBe(400_000);
  }, 60_000);
});

describe('netintel summarize --server', () => {
  let server: TestServer;
  let url: string;
  let pro: string;

  beforeAll(async () => {
    server = await startTestServer({ clock: { now: Date.now, advance: () => {}, set: () => {} } });
    url = await server.app.listen({ host: '127.0.0.1', port: 0 });
    // A plan whose burst holds the three runs' lookups.
    pro = await server.key('enterprise');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('prints the report local lookups give, the lookups asked of a real netintel server', async () => {
    const input = generateAccessLog(400, 11).text;
    for (const format of ['json', 'table', 'csv']) {
      const local = await runCli(['summarize', '-f', format], { stdin: input });
      const remote = await runCli(['summarize', '-f', format, '--server', url, '--api-key', pro], { stdin: input });
      expect(remote.stderr, format).toBe(local.stderr);
      expect(remote.stdout, format).toBe(local.stdout);
      expect(remote.code).toBe(0);
    }
  }, 60_000);

  it('fails as bulk fails when the server refuses the key: one line, nothing on stdout', async () => {
    const args = ['-f', 'json', '--server', url, '--api-key', 'ni_live_not-a-key'];
    const [run, bulk] = [await runCli(['summarize', ...args], { stdin: '8.8.8.8\n1.1.1.1\n' }), await runCli(['bulk', ...args], { stdin: '8.8.8.8\n1.1.1.1\n' })];
    expect(run.code).toBe(bulk.code);
    expect(run.code).not.toBe(0);
    expect(run.stderr.split('\n')).toHaveLength(2);
    expect(run.stderr).toBe(bulk.stderr);
  }, 30_000);
});

describe('the summarize view', () => {
  it('fits every width from 20 to 200 columns, long names wrapped, whatever the counts', async () => {
    const { summarizeView } = await import('../../src/output/human/summarize-view.js');
    const run = await runCli(['summarize', '-f', 'json', '--top', '20'], { stdin: generateAccessLog(800, 3).text });
    const report = JSON.parse(run.stdout) as SummaryReport;
    // A name longer than any terminal: the organisation column must wrap it.
    report.asns.rows[0]!.name = 'Ｗｉｄｅ Ｎａｍｅ '.repeat(20);
    fc.assert(
      fc.property(fc.integer({ min: 20, max: 200 }), (width) => {
        const text = summarizeView(report, { width, color: false });
        const over = text.split('\n').filter((line) => stringWidth(line) > width);
        expect(over).toEqual([]);
        expect(text).toContain('Top countries');
      }),
      { numRuns: 60 },
    );
  });

  it('right-aligns the counts and percentages, so that their digits line up', async () => {
    const { summarizeView } = await import('../../src/output/human/summarize-view.js');
    const run = await runCli(['summarize', '-f', 'json', '--top', '5'], { stdin: generateAccessLog(800, 3).text });
    const report = JSON.parse(run.stdout) as SummaryReport;
    const text = summarizeView(report, { width: 100, color: false });
    const table = text.split('Top countries\n')[1]!.split('\n\n')[0]!.split('\n');
    const cellsOf = (line: string) => line.split('│').slice(1, -1);
    const rows = table.filter((line) => line.startsWith('│')).map(cellsOf);
    expect(rows.length).toBeGreaterThan(3);
    const [header, ...body] = rows;
    expect(header!.map((cell) => cell.trim()).slice(0, 4)).toEqual(['#', 'country', 'count', '%']);
    for (const column of [0, 2, 3]) {
      // Every filled cell of the column ends one space before its rule: right-aligned, whatever its length.
      for (const row of [header!, ...body]) if (row[column]!.trim() !== '') expect(row[column]).toMatch(/\S $/);
    }
    expect(new Set(body.map((row) => row[2]!.trim().length)).size).toBeGreaterThan(1);
  });
});
