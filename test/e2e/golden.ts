/**
 * Golden files of whole runs: the command line, the exit code, stdout and
 * stderr, after the values that change from run to run are replaced by
 * placeholders (ports of the loopback peers, times, durations, keys).
 *
 * After a deliberate change of behaviour, regenerate with
 * `UPDATE_GOLDEN=1 npx vitest run test/e2e` and review the diff.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { stringify } from 'csv-stringify/sync';
import { parseCsv } from '../output/parse-csv.js';
import { REPO_ROOT } from '../support/cli.js';

const GOLDEN_DIR = fileURLToPath(new URL('./golden/', import.meta.url));
const UPDATE = process.env.UPDATE_GOLDEN === '1';

export interface Replacement {
  pattern: RegExp;
  with: string;
}

/** Values that differ between runs, machines and days; each becomes a placeholder. */
const VOLATILE: Replacement[] = [
  { pattern: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})/g, with: '<time>' },
  // JSON and XML durations: keys and elements named ...Ms, and latency figures
  { pattern: /("[A-Za-z_]*(?:Ms|_ms)"\s*:\s*)\d+(?:\.\d+)?/g, with: '$1<ms>' },
  // The age of a dataset grows with the day of the run
  { pattern: /("age_days"\s*:\s*)\d+(?:\.\d+)?/g, with: '$1<days>' },
  { pattern: /\b\d+(?:\.\d+)? days old\b/g, with: '<days> days old' },
  { pattern: /(<([A-Za-z_]*(?:Ms|_ms))>)\d+(?:\.\d+)?(<\/\2>)/g, with: '$1<ms>$3' },
  // Table rows of durations ("timings.connect_ms  12") and human forms ("took 12 ms", "in 0.3 s")
  { pattern: /([A-Za-z_]*(?:Ms|_ms)\b[ │|]+)\d+(?:\.\d+)?/g, with: '$1<ms>' },
  // The SMTP transcript's time column is right-aligned to its widest figure: the padding varies with the times.
  { pattern: /^ +\d+(?:\.\d+)? ms (?====|<-| ->)/gm, with: '    <ms> ms ' },
  { pattern: /\b\d+(?:\.\d+)? ?ms\b/g, with: '<ms> ms' },
  { pattern: /\b\d+\.\d+ s\b/g, with: '<s> s' },
  { pattern: /\bni_[A-Za-z0-9_-]{20,}/g, with: 'ni_<key>' },
  // Certificates are made anew by each run: their fingerprints and serial numbers differ
  { pattern: /\b(?:[0-9A-F]{2}:){19,}[0-9A-F]{2}\b/g, with: '<fingerprint>' },
  // ... and so do the SHA-256 and SHA-512 digests of them that TLSA records carry
  { pattern: /\b(?:[0-9a-f]{64}){1,2}\b/g, with: '<digest>' },
];

const DAY_MS = 86_400_000;

/** Dates from the day of the run on (a key made today, a certificate valid until): not the datasets' dates, which are in the past and fixed. */
function replaceRecentDates(text: string): string {
  return text.replace(/\b\d{4}-\d{2}-\d{2}\b/g, (date) => {
    const offsetDays = (Date.parse(`${date}T00:00:00Z`) - Date.now()) / DAY_MS;
    return offsetDays > -2 && offsetDays < 4000 ? '<date>' : date;
  });
}

export interface Run {
  argv: readonly string[];
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * A diagnostic that tells a dataset's age is unwrapped: where its line
 * breaks moves with the number of the age's digits (99 days, 100 days).
 */
function unwrapAgeDiagnostics(text: string): string {
  return text.replace(/^netintel: [^\n]*(?:\n {2}[^\n]*)+/gm, (diagnostic) => (/\d days old\b/.test(diagnostic) ? diagnostic.replace(/\n {2}/g, ' ') : diagnostic));
}

export function normalise(text: string, extra: readonly Replacement[]): string {
  let out = unwrapAgeDiagnostics(text.split(REPO_ROOT).join('<repo>/'));
  for (const { pattern, with: replacement } of [...extra, ...VOLATILE]) out = out.replace(pattern, replacement);
  return collapseTablePadding(normaliseTableDurations(replaceRecentDates(out)));
}

/** Columns whose values change from run to run: durations, and the age of a dataset. */
const VOLATILE_COLUMN = /(?:Ms|_ms|^\s*age_days)\s*$/;

/** Cells of volatile columns of box-drawn tables become `<n>`. */
function normaliseTableDurations(text: string): string {
  let durations: number[] | null = null;
  let inHeader = false;
  return text
    .split('\n')
    .map((line) => {
      if (line.startsWith('┌')) {
        inHeader = true;
        durations = null;
        return line;
      }
      if (!line.startsWith('│')) {
        inHeader = false;
        return line;
      }
      const cells = line.split('│');
      if (inHeader) {
        inHeader = false;
        durations = cells.flatMap((cell, index) => (VOLATILE_COLUMN.test(cell) ? [index] : []));
        return line;
      }
      if (durations === null || durations.length === 0) return line;
      const columns = durations;
      return cells.map((cell, index) => (columns.includes(index) ? cell.replace(/\d+(?:\.\d+)?/, '<n>') : cell)).join('│');
    })
    .join('\n');
}

/**
 * A placeholder is rarely as wide as the value it stands for, and a table's
 * column width follows its widest cell: so box-drawn lines keep their cells
 * and borders but lose the padding (layouts have goldens of their own in
 * test/output/golden/).
 */
function collapseTablePadding(text: string): string {
  return text
    .split('\n')
    .map((line) => (/^[│┌├└┬┼┴]/.test(line) ? line.replace(/ {2,}/g, ' ').replace(/─{2,}/g, '─') : line))
    .join('\n');
}

/** CSV cells of volatile columns (`latency_ms`, `timings.connect_ms`, `age_days`) become `<n>`; the rest is left as it is. */
export function normaliseCsvDurations(text: string): string {
  if (text === '') return text;
  const rows = parseCsv(text);
  const header = rows[0] ?? [];
  const durations = header.flatMap((name, index) => (VOLATILE_COLUMN.test(name) ? [index] : []));
  if (durations.length === 0) return text;
  const cleaned = rows.map((row, rowIndex) =>
    rowIndex === 0 ? row : row.map((cell, index) => (durations.includes(index) && /^\d+(\.\d+)?$/.test(cell) ? '<n>' : cell)),
  );
  return stringify(cleaned, { eof: true, record_delimiter: 'unix' });
}

/** The golden text of a run: command line, exit code, stdout and stderr. */
export function goldenText(run: Run, extra: readonly Replacement[], digestStdout = false): string {
  const csv = run.argv.includes('csv') && !run.argv.includes('--help');
  const stdout = normalise(csv ? normaliseCsvDurations(run.stdout) : run.stdout, extra);
  const shown = digestStdout
    ? `sha256 ${createHash('sha256').update(stdout).digest('hex')}, ${stdout.split('\n').length - 1} lines, ${Buffer.byteLength(stdout)} bytes\n`
    : stdout;
  return [
    `$ netintel ${normalise(run.argv.map(quote).join(' '), extra)}`,
    `--- exit ${run.code}`,
    '--- stdout',
    shown.endsWith('\n') || shown === '' ? shown : `${shown}\n(no newline at end)\n`,
    '--- stderr',
    normalise(run.stderr, extra),
  ].join('\n');
}

function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Compares `actual` with the golden file `id`.txt, or writes it under UPDATE_GOLDEN=1. */
export function expectGolden(id: string, actual: string): void {
  const path = join(GOLDEN_DIR, `${id}.txt`);
  if (UPDATE) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, actual);
    return;
  }
  if (!existsSync(path)) throw new Error(`missing golden file test/e2e/golden/${id}.txt; run with UPDATE_GOLDEN=1 to create it`);
  expect(actual).toBe(readFileSync(path, 'utf8'));
}
