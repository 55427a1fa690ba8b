import { describe, expect, it } from 'vitest';
import { csvCell, csvRow, csvRowViaLibrary, type CsvCell } from '../../src/output/csv-row.js';
import { parseCsv } from './parse-csv.js';
import { seededRandom } from '../support/seeded-random.js';

const PIECES = ['a', 'Z', '8.8.8.8', ' ', ',', '"', '""', '\r', '\n', '\r\n', '=', '+', '-', '@', '\t', "'", ';', '|', 'é', 'Zürich', '東京', '😀', '\u0000', '\u2028', '1', '0', '.', '#', '\\', '\uff1d', '\uff0b', '\uff0d', '\uff20'];

function randomCell(random: () => number): CsvCell {
  const pick = random();
  if (pick < 0.06) return null;
  if (pick < 0.08) return undefined;
  if (pick < 0.12) return random() < 0.5;
  if (pick < 0.2) return Math.round((random() - 0.5) * 2e6) / (random() < 0.5 ? 1 : 1000);
  if (pick < 0.22) return [-0, Number.MAX_SAFE_INTEGER, -1e21, 1e-7][Math.floor(random() * 4)]!;
  if (pick < 0.24) return random() < 0.5 ? ['8.8.8.0/24', '8.8.4.0/24'] : [];
  const length = Math.floor(random() * 6);
  let text = '';
  for (let i = 0; i < length; i++) text += PIECES[Math.floor(random() * PIECES.length)];
  return text;
}

describe('csvRow', () => {
  it('gives exactly the bytes of csv-stringify for a seeded random corpus of 20,000 rows', () => {
    const random = seededRandom(20260101);
    const mismatches: string[] = [];
    let fastPathRows = 0;
    for (let i = 0; i < 20_000; i++) {
      const row = Array.from({ length: 1 + Math.floor(random() * 6) }, () => randomCell(random));
      const fast = csvRow(row);
      const reference = csvRowViaLibrary(row);
      if (fast !== reference) mismatches.push(`${JSON.stringify(row)} -> ${JSON.stringify(fast)} vs ${JSON.stringify(reference)}`);
      if (row.every((cell) => typeof cell !== 'string' || /^[a-zA-Z0-9.]*$/.test(cell))) fastPathRows += 1;
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
    expect(fastPathRows).toBeGreaterThan(500);
  });

  it('encodes each cell of that corpus as the library encodes it alone', () => {
    const random = seededRandom(20261125);
    const mismatches: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const cell = randomCell(random);
      const reference = csvRowViaLibrary([cell]).slice(0, -1);
      if (csvCell(cell) !== reference) mismatches.push(`${JSON.stringify(cell)} -> ${JSON.stringify(csvCell(cell))} vs ${JSON.stringify(reference)}`);
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
  });

  it.each<[string, CsvCell[], string]>([
    ['plain cells joined with commas', ['8.8.8.8', 'US', 15169], '8.8.8.8,US,15169\n'],
    ['null and undefined as empty cells', [null, 'x', undefined], ',x,\n'],
    ['booleans as true and false', [true, false], 'true,false\n'],
    ['negative numbers with their sign', [-122.085, -0, 0], '-122.085,0,0\n'],
    ['a comma by quoting', ['Cloudflare, Inc.'], '"Cloudflare, Inc."\n'],
    ['a quote by doubling it', ['say "hi"'], '"say ""hi"""\n'],
    ['a line feed folded to one line', ['a\nb'], 'a | b\n'],
    ['a carriage return folded to one line', ['a\rb'], 'a | b\n'],
    ['line breaks at either end dropped', ['\r\nx\n'], 'x\n'],
    ['a folded line that still needs quoting', ['a,\n"b"'], '"a, | ""b"""\n'],
    ['a leading = with an apostrophe', ['=1+1'], "'=1+1\n"],
    ['a leading + with an apostrophe', ['+49 30'], "'+49 30\n"],
    ['a leading - in text with an apostrophe', ['-5'], "'-5\n"],
    ['a leading @ with an apostrophe', ['@SUM(A1)'], "'@SUM(A1)\n"],
    ['a leading tab with an apostrophe', ['\tx'], "'\tx\n"],
    ['a leading full-width = with an apostrophe', ['\uff1dcmd'], "'\uff1dcmd\n"],
    ['a TXT record in zone-file form by quoting', ['"v=spf1 -all"'], '"""v=spf1 -all"""\n'],
    ['a formula that also needs quoting', ['=HYPERLINK("x")'], '"\'=HYPERLINK(""x"")"\n'],
    ['unicode untouched', ['Zürich', '東京'], 'Zürich,東京\n'],
    ['an array cell as quoted JSON', ['AS1', ['8.8.8.0/24', '8.8.4.0/24']], 'AS1,"[""8.8.8.0/24"",""8.8.4.0/24""]"\n'],
    ['an empty array cell as []', [[], 'x'], '[],x\n'],
  ])('encodes %s', (_label, cells, expected) => {
    expect(csvRow(cells)).toBe(expected);
    expect(csvRowViaLibrary(cells)).toBe(expected);
  });

  it('writes rows that a CSV parser reads back cell for cell (line breaks folded)', () => {
    const rows: CsvCell[][] = [
      ['query', 'organization', 'prefixes'],
      ['8.8.8.8', 'Google LLC', ['8.8.8.0/24']],
      ['1.1.1.1', 'Cloudflare, Inc.', []],
      ['x', 'multi\r\nline "quoted"', null],
    ];
    const text = rows.map(csvRow).join('');
    expect(parseCsv(text)).toEqual([
      ['query', 'organization', 'prefixes'],
      ['8.8.8.8', 'Google LLC', '["8.8.8.0/24"]'],
      ['1.1.1.1', 'Cloudflare, Inc.', '[]'],
      ['x', 'multi | line "quoted"', ''],
    ]);
  });
});
