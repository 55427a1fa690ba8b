/**
 * `dmarc-report` never says "no source fails" when it read no report: an
 * empty directory, or a --domain no report is about, exits 3 (not_found)
 * with the reason, in the summary and in the row formats. A link to a
 * report file in a directory is read as the file; an internationalised
 * --domain matches its punycode form, as reports write it.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../support/cli.js';

const GOOGLE = resolve('test/fixtures/dmarc/google.xml');
const scratch = tempDir('netintel-dmarc-none-');
afterAll(() => scratch.remove());

const run = (args: string[]) => runCli(['dmarc-report', ...args, '--no-ptr'], { env: { COLUMNS: '80' } });

describe('dmarc-report with nothing to count', () => {
  it('exits 3 for an empty directory, and says nothing was checked', async () => {
    const empty = join(scratch.path, 'empty');
    mkdirSync(empty);
    const table = await run([empty]);
    expect(table.code).toBe(3);
    expect(table.stdout).toContain('no aggregate report read from 0 files: nothing was checked');
    expect(table.stdout).toContain('dmarc_no_reports');
    expect(table.stdout).not.toContain('no source fails');
    const csv = await run([empty, '-f', 'csv']);
    expect(csv.code).toBe(3);
    // Wrapped to the terminal's 80 columns.
    expect(csv.stderr.replace(/\s+/g, ' ')).toContain('netintel: no aggregate report was read: none in the files given, or none matched --domain or --since');
  });

  it('exits 3 when no report is about the --domain given, in every format', async () => {
    for (const format of ['table', 'json', 'csv', 'ndjson']) {
      const result = await run([GOOGLE, '--domain', 'exmaple.com', '-f', format]);
      expect(result.code, format).toBe(3);
    }
    const json = await run([GOOGLE, '--domain', 'EXAMPLE.com.', '-f', 'json']);
    expect(json.code).toBe(0);
  });

  it('reads a link to a report file in a directory as the file', async () => {
    const dir = join(scratch.path, 'linked');
    mkdirSync(dir);
    symlinkSync(GOOGLE, join(dir, 'report.xml'));
    // A link to a directory is not followed: a loop would never end.
    symlinkSync(dir, join(dir, 'loop'));
    const direct = await run([GOOGLE, '-f', 'json']);
    const linked = await run([dir, '-f', 'json']);
    expect(linked.code).toBe(0);
    expect(linked.stdout.replaceAll(join(dir, 'report.xml'), GOOGLE)).toBe(direct.stdout);
  });

  it('matches an internationalised --domain in the punycode form reports write', async () => {
    const dir = join(scratch.path, 'idn');
    mkdirSync(dir);
    writeFileSync(join(dir, 'idn.xml'), readFileSync(GOOGLE, 'utf8').replace(/<domain>example\.com<\/domain>/, '<domain>xn--bcher-kva.example</domain>'));
    const result = await run([join(dir, 'idn.xml'), '--domain', 'bücher.example', '-f', 'json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).length).toBeGreaterThan(0);
    expect((await run([GOOGLE, '--domain', 'not a domain'])).code).toBe(2);
  });

  it('exits 7 in every format when one file was read and another could not be, though the one read held no record', async () => {
    const dir = join(scratch.path, 'mixed');
    mkdirSync(dir);
    writeFileSync(join(dir, 'empty.xml'), readFileSync(GOOGLE, 'utf8').replace(/<record>[\s\S]*<\/record>/, ''));
    writeFileSync(join(dir, 'trunc.xml'), '<feedback><report_metadata>');
    for (const format of ['table', 'json', 'csv', 'ndjson']) {
      const result = await run([join(dir, 'empty.xml'), join(dir, 'trunc.xml'), '-f', format]);
      expect(result.code, `${format}: ${result.stderr}`).toBe(7);
    }
  });
});
