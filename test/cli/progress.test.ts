/**
 * The words of the progress display: stage text (names from the network
 * escaped), the progress line of a list run, and the silent progress of a
 * run whose stderr is not a terminal.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRunProgress, describeRows, describeStage, SILENT } from '../../src/cli/progress.js';
import type { CliIo } from '../../src/cli/io.js';

describe('describeStage', () => {
  it.each([
    [{ kind: 'dns', target: 'example.com', detail: 'MX' }, 'resolving example.com MX...'],
    [{ kind: 'smtp', target: 'mx1.example.com:25', detail: 'STARTTLS' }, 'probing mx1.example.com:25 (STARTTLS)...'],
    [{ kind: 'mta-sts', target: 'mta-sts.example.com', detail: null }, 'fetching MTA-STS policy from mta-sts.example.com...'],
    [{ kind: 'https', target: 'https://brand.example/logo.svg', detail: 'BIMI logo' }, 'fetching BIMI logo from https://brand.example/logo.svg...'],
    [{ kind: 'blacklist', target: '192.0.2.1', detail: '42' }, 'checking 42 blocklists for 192.0.2.1...'],
    [{ kind: 'blacklist', target: '192.0.2.1', detail: '1' }, 'checking 1 blocklist for 192.0.2.1...'],
  ] as const)('%j reads %s', (stage, text) => {
    expect(describeStage(stage)).toBe(text);
  });

  it('never passes a control character or bidi override of a name through to the terminal', () => {
    fc.assert(
      fc.property(fc.constantFrom('dns', 'smtp', 'mta-sts', 'https', 'blacklist' as const), fc.string({ unit: 'binary' }), fc.option(fc.string({ unit: 'binary' })), (kind, target, detail) => {
        // eslint-disable-next-line no-control-regex
        expect(describeStage({ kind, target, detail })).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
      }),
    );
  });
});

describe('describeRows', () => {
  it('gives rows and rate, and with the share of the input read the percentage and the time left', () => {
    expect(describeRows(0, 0, null)).toBe('0 rows, 0.0/s');
    expect(describeRows(1, 2000, null)).toBe('1 row, 0.5/s');
    expect(describeRows(1500, 1000, null)).toBe('1,500 rows, 1,500/s');
    expect(describeRows(50, 10_000, 0.25)).toBe('50 rows, 5.0/s, 25%, ETA 30s');
    expect(describeRows(10, 100_000, 0.1)).toBe('10 rows, 0.1/s, 10%, ETA 15m00s');
    expect(describeRows(1, 3_600_000, 0.25)).toBe('1 row, 0.0/s, 25%, ETA 3h00m');
  });

  it('never shows more than 100% nor a negative time left', () => {
    expect(describeRows(10, 1000, 1.4)).toBe('10 rows, 10/s, 100%, ETA 0s');
  });
});

describe('createRunProgress', () => {
  const io = (isTTY: boolean): CliIo => ({ stdin: process.stdin, stdout: process.stdout, stderr: { ...process.stderr, isTTY, write: () => true, on: () => {}, off: () => {} }, env: {} }) as unknown as CliIo;

  it('shows nothing when stderr is not a terminal, or under -q', () => {
    expect(createRunProgress(io(false), { quiet: false, remote: null })).toBe(SILENT);
    expect(createRunProgress(io(true), { quiet: true, remote: null })).toBe(SILENT);
  });

  it('passes a silent run\'s list and rows through untouched', async () => {
    const batches = (async function* () {
      yield [1, 2];
    })();
    expect(SILENT.track(batches, true)).toBe(batches);
    expect(SILENT.input(batches as AsyncIterable<never>, () => 1)).toBe(batches);
  });
});
