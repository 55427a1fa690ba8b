import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createBulkLookup } from '../../../src/engine/bulk/bulk-lookup.js';
import { createEngineContext } from '../../../src/engine/context.js';
import { NetintelError } from '../../../src/errors.js';
import type { Outcome } from '../../../src/engine/outcome.js';
import { addressTargets } from '../../../src/engine/summarize/summarize-input.js';
import type { RankedTable, SummaryReport } from '../../../src/engine/summarize/summary-report.js';
import { SummaryTally } from '../../../src/engine/summarize/summary-tally.js';

const ctx = createEngineContext();
const lookup = createBulkLookup(ctx, { evidence: false });

async function* once(text: string): AsyncGenerator<string> {
  if (text.length > 0) yield text;
}

/** The report of `text` read as one input, each address looked up in the local datasets. */
async function summarize(text: string, top = 10, uniqueCap?: number): Promise<{ report: SummaryReport; tally: SummaryTally }> {
  const tally = new SummaryTally({ uniqueCap });
  for await (const batch of addressTargets(once(text), null, tally.input)) for (const target of batch) tally.add(lookup(target));
  return { report: tally.report(top), tally };
}

function tableSum(table: RankedTable): number {
  return table.rows.reduce((sum, row) => sum + row.count, 0) + table.other.count + table.no_data.count;
}

function percentSum(table: RankedTable): number {
  return table.rows.reduce((sum, row) => sum + row.percent, 0) + table.other.percent + table.no_data.percent;
}

/** Everything a report must hold for any input. */
function expectConsistent(report: SummaryReport): void {
  const { totals } = report;
  expect(totals.addresses).toBe(totals.ipv4 + totals.ipv6);
  expect(totals.unique).toBeLessThanOrEqual(totals.addresses);
  expect(totals.reserved + totals.lookup_failures).toBeLessThanOrEqual(totals.addresses);
  expect(totals.invalid_lines).toBeLessThanOrEqual(totals.lines);
  for (const table of [report.countries, report.asns, report.cities, report.threat_levels]) {
    expect(tableSum(table)).toBe(totals.addresses);
    expect(table.rows.length).toBeLessThanOrEqual(report.top);
    // Each percentage is rounded to two decimals: the sum may be off by half a hundredth per row.
    if (totals.addresses > 0) expect(Math.abs(percentSum(table) - 100)).toBeLessThanOrEqual(0.005 * (table.rows.length + 2) + 1e-9);
    for (let i = 1; i < table.rows.length; i++) {
      const [a, b] = [table.rows[i - 1]!, table.rows[i]!];
      expect(a.count > b.count || (a.count === b.count && a.key !== b.key)).toBe(true);
    }
  }
  for (const row of report.flags.rows) expect(row.count).toBeLessThanOrEqual(totals.addresses - report.flags.no_data.count);
}

const LINE_UNITS = ['1', '2', '5', '8', '0', '.', ':', 'a', 'f', 'x', ' ', '#', '%', '[', ']', '/', ',', '\t', '\r', 'é'];
const ADDRESSES = ['8.8.8.8', '1.1.1.1', '10.0.0.1', '2001:4860:4860::8888', '::1', 'fe80::1%eth0', '185.220.101.1', '203.0.113.9', '999.1.1.1'];
const line = fc.oneof(
  fc.string({ unit: fc.constantFrom(...LINE_UNITS), maxLength: 40 }),
  fc.array(fc.constantFrom(...ADDRESSES, ' ', 'GET /', '#', '"', ', '), { maxLength: 8 }).map((parts) => parts.join('')),
);

describe('summarize: the tally', () => {
  it('never throws on any text, and its totals and tables add up', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 30 }), fc.integer({ min: 1, max: 5 }), fc.boolean(), async (lines, top, finalNewline) => {
        const text = lines.join('\n') + (finalNewline && lines.length > 0 ? '\n' : '');
        const { report } = await summarize(text, top);
        expectConsistent(report);
        // A last line without its newline counts; the empty piece after a final newline is no line.
        expect(report.totals.lines).toBe(text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0));
      }),
      { numRuns: 300 },
    );
  });

  it('orders the top rows the same whatever the order of the input', async () => {
    const lines = ['8.8.8.8', '1.1.1.1', '9.9.9.9', '8.8.4.4', '1.0.0.1', '185.220.101.1', '2001:4860:4860::8888', '10.0.0.1'];
    await fc.assert(
      fc.asyncProperty(fc.shuffledSubarray(lines, { minLength: lines.length, maxLength: lines.length }), fc.integer({ min: 1, max: 4 }), async (shuffled, top) => {
        const [a, b] = [await summarize(`${lines.join('\n')}\n`, top), await summarize(`${shuffled.join('\n')}\n`, top)];
        expect(b.report).toEqual(a.report);
      }),
      { numRuns: 50 },
    );
  });

  it('counts per occurrence; ties go by key; other and no data make up the rest', async () => {
    const text = ['8.8.8.8', '8.8.8.8 and 1.1.1.1', '# comment', '', '   ', 'no address here', '10.0.0.1', '185.220.101.1', '2001:4860:4860::8888'].join('\n');
    const { report } = await summarize(text, 1);
    expect(report.totals).toEqual({
      lines: 9,
      addresses: 6,
      ipv4: 5,
      ipv6: 1,
      unique: 5,
      unique_capped: false,
      reserved: 1,
      invalid_lines: 1,
      lookup_failures: 0,
    });
    // 8.8.8.8 twice; 1.1.1.1 (AU), 185.220.101.1 (DE) and the IPv6 address (CA) once each.
    expect(report.countries.rows).toEqual([{ rank: 1, key: 'US', name: 'United States', count: 2, percent: 33.33 }]);
    expect(report.countries.other).toEqual({ count: 3, percent: 50 });
    expect(report.countries.no_data).toEqual({ count: 1, percent: 16.67 });
    expect(report.countries.distinct).toBe(4);
    expect((await summarize(text, 4)).report.countries.rows.map((row) => row.key)).toEqual(['US', 'AU', 'CA', 'DE']);
    expect(report.asns.rows[0]).toMatchObject({ key: 'AS15169', name: 'Google LLC', count: 3 });
  });

  it('keeps reserved addresses out of every table but no data, and never names a country for them', async () => {
    const { report, tally } = await summarize('10.0.0.1\n127.0.0.1\n192.168.1.1 ::1 fe80::1%eth0\n198.51.100.7\n');
    expect(report.totals.reserved).toBe(6);
    expect(report.totals.lookup_failures).toBe(0);
    expect(report.countries.rows).toEqual([]);
    expect(report.countries.no_data.count).toBe(6);
    expect(report.flags.no_data.count).toBe(6);
    expect(report.threat_levels.no_data.count).toBe(6);
    expect(tally.countryCounts().size).toBe(0);
  });

  it('counts the same with two tallies over the same shared records, and leaves the records as they print', () => {
    const texts = ['8.8.8.8', '8.8.4.4', '1.1.1.1', '8.8.8.8', '185.220.101.1', '2001:4860:4860::8888', '1.0.0.1', '8.8.8.8'];
    const outcomes = texts.map((text, i) => lookup({ text, line: i + 1, source: null }));
    const printed = JSON.stringify(outcomes);
    const [a, b] = [new SummaryTally(), new SummaryTally()];
    for (const tally of [a, b]) {
      tally.input.ipv4 = 7;
      tally.input.ipv6 = 1;
    }
    // Interleaved: each tally finds the other's counters on a location object and must not use them.
    for (const outcome of outcomes) {
      a.add(outcome);
      b.add(outcome);
    }
    for (const outcome of outcomes) a.add(outcome);
    a.input.ipv4 *= 2;
    a.input.ipv6 *= 2;
    expect(b.report(10).countries.rows.map((row) => [row.key, row.count])).toEqual([['US', 4], ['AU', 2], ['CA', 1], ['DE', 1]]);
    expect(a.report(10).countries.rows.map((row) => [row.key, row.count])).toEqual([['US', 8], ['AU', 4], ['CA', 2], ['DE', 2]]);
    expect(b.report(10).cities.rows[0]).toMatchObject({ key: 'US/California/Mountain View', count: 4 });
    expect(JSON.stringify(outcomes)).toBe(printed);
  });

  it('gives the count of every country, not only the top rows, for the world map', async () => {
    const { tally } = await summarize('8.8.8.8\n8.8.4.4\n1.1.1.1\n185.220.101.1\n2001:4860:4860::8888\n', 1);
    expect(Object.fromEntries(tally.countryCounts())).toEqual({ US: 2, AU: 1, DE: 1, CA: 1 });
  });

  it('stops counting distinct addresses at the cap and says so', async () => {
    const text = Array.from({ length: 50 }, (_, i) => `8.8.${i}.1\n8.8.${i}.1`).join('\n');
    const { report } = await summarize(text, 10, 20);
    expect(report.totals.addresses).toBe(100);
    expect(report.totals.unique).toBe(20);
    expect(report.totals.unique_capped).toBe(true);
    const exact = await summarize(text, 10, 50);
    expect(exact.report.totals).toMatchObject({ unique: 50, unique_capped: false });
  });

  it('counts a failed lookup as a failure, in no data, its address still distinct', async () => {
    const tally = new SummaryTally();
    tally.input.ipv4 = 2;
    tally.add({ ok: false, query: '8.8.8.8', error: new NetintelError('rate_limited', 'too many requests') } as Outcome<unknown>);
    tally.add(lookup({ text: '8.8.8.8', line: 2, source: null }));
    const report = tally.report(10);
    expect(report.totals).toMatchObject({ addresses: 2, unique: 1, lookup_failures: 1 });
    expect(report.countries.no_data.count).toBe(1);
    expect(tally.failuresByCode.get('rate_limited')).toBe(1);
    expect(tally.firstFailure).toBe('too many requests');
    expectConsistent(report);
  });

  it('reads records whose groups a plan withheld (remote mode) as no data for those tables', () => {
    const tally = new SummaryTally();
    tally.input.ipv4 = 1;
    tally.add({ ok: true, query: '8.8.8.8', value: { ip: '8.8.8.8', reserved: null, location: { country_code: 'US', country: 'United States', region: null, city: null } } });
    const report = tally.report(10);
    expect(report.countries.rows).toHaveLength(1);
    expect(report.asns.no_data.count).toBe(1);
    expect(report.flags.no_data.count).toBe(1);
    expect(report.threat_levels.no_data.count).toBe(1);
    expectConsistent(report);
  });
});

describe('summarize: the input', () => {
  it('skips blank and # lines, counts lines without an address, drops a zone index, numbers lines', async () => {
    const counts = { lines: 0, invalidLines: 0, ipv4: 0, ipv6: 0 };
    const text = '#Fields: c-ip\n\n  # indented comment\nfe80::1%eth0 1.2.3.4:80\r\nnothing\n\t\n[2001:db8::1]:443';
    const batches = [];
    for await (const batch of addressTargets(once(text), 'log', counts)) batches.push(...batch);
    expect(batches).toEqual([
      { text: 'fe80::1', line: 4, source: 'log' },
      { text: '1.2.3.4', line: 4, source: 'log' },
      { text: '2001:db8::1', line: 7, source: 'log' },
    ]);
    expect(counts).toEqual({ lines: 7, invalidLines: 1, ipv4: 1, ipv6: 2 });
  });
});
