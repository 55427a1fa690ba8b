/**
 * A stdout that cannot be written (a full disk, an I/O error, a descriptor
 * not open for writing) ends every run with one `netintel: cannot write to
 * stdout: ...` line and exit 11 (`output_failed`), for every command and
 * every kind of output; a reader that went away (`| head`) stays quiet.
 */
import { closeSync, createWriteStream, existsSync, openSync } from 'node:fs';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/app/main.js';
import { ERROR_CODES } from '../../src/errors.js';
import { isolatedEnv, runEntry, spawnCli } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { Readable } from 'node:stream';
import { closedPort } from '../support/peers.js';

const OUTPUT_FAILED = ERROR_CODES.output_failed.exit;
const hasDevFull = existsSync('/dev/full');

let dns: DnsTestServer;
beforeAll(async () => {
  dns = await startDnsServer({ records: [{ name: 'example.test', type: 'A', data: '192.0.2.1' }, { name: 'example.test', type: 'TXT', data: ['v=spf1 -all'] }] });
});
afterAll(async () => {
  await dns?.close();
});

const many = (count: number) => Array.from({ length: count }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`).join('\n');

interface Case {
  name: string;
  argv: () => string[];
  input?: string;
}

const CASES: Case[] = [
  { name: 'asn AS16509 -f json', argv: () => ['asn', 'AS16509', '-f', 'json'] },
  { name: 'ip 8.8.8.8', argv: () => ['ip', '8.8.8.8'] },
  { name: 'vpn 1.1.1.1 -f csv', argv: () => ['vpn', '1.1.1.1', '-f', 'csv'] },
  { name: 'ip 8.8.8.8 -t 1000 -f xml', argv: () => ['ip', '8.8.8.8', '-t', '1000', '-f', 'xml'] },
  { name: 'asn AS13335 -t 1000', argv: () => ['asn', 'AS13335', '-t', '1000'] },
  { name: 'bulk', argv: () => ['bulk'], input: '8.8.8.8\n1.1.1.1\n' },
  { name: 'bulk -f csv', argv: () => ['bulk', '-f', 'csv'], input: many(20_000) },
  { name: 'bulk -f ndjson', argv: () => ['bulk', '-f', 'ndjson'], input: many(3000) },
  { name: 'dns example.test --resolver <resolver> -f json', argv: () => ['dns', 'example.test', '--resolver', dns.address, '-f', 'json'] },
  { name: 'spf example.test --resolver <resolver> -t 1000', argv: () => ['spf', 'example.test', '--resolver', dns.address, '-t', '1000'] },
  { name: 'data status', argv: () => ['data', 'status'] },
  { name: '--help', argv: () => ['--help'] },
];

function expectOneLineFailure(stderr: string): void {
  const lines = stderr.trimEnd().split('\n');
  for (const line of lines) expect(line).toMatch(/^netintel: /);
  expect(lines.filter((line) => line.startsWith('netintel: cannot write to stdout: '))).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at |node:internal|__export|Node\.js v/);
}

describe.skipIf(!hasDevFull)('a full disk (stdout is /dev/full)', () => {
  for (const testCase of CASES) {
    it(`exits ${OUTPUT_FAILED} with one "cannot write to stdout" line: netintel ${testCase.name}`, async () => {
      const argv = testCase.argv();
      const result = await spawnCli(argv, { stdout: { path: '/dev/full' }, input: testCase.input });
      expect(result.code, result.stderr).toBe(OUTPUT_FAILED);
      expect(result.stderr).toContain('cannot write to stdout: ENOSPC');
      expectOneLineFailure(result.stderr);
    });
  }

  it('reports the write failure after the run\'s own error, and exits 11', async () => {
    const result = await spawnCli(['dns', 'example.test', '--resolver', `127.0.0.1:${await closedPort()}`, '-t', '300', '--retries', '0', '-f', 'json'], { stdout: { path: '/dev/full' } });
    expect(result.code).toBe(OUTPUT_FAILED);
    expectOneLineFailure(result.stderr);
  });
});

describe('a reader that goes away (EPIPE)', () => {
  it('ends a long bulk run quietly, with its usual exit code', async () => {
    const result = await spawnCli(['bulk', '-f', 'csv'], { stdout: 'close-after-first-chunk', input: many(50_000) });
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain('cannot write');
    expect(result.stderr).not.toMatch(/\n\s+at |EPIPE/);
  });

  it('ends a one-off lookup quietly', async () => {
    for (const argv of [['asn', 'AS16509', '-f', 'json'], ['asn', 'AS16509', '-f', 'json', '-t', '1000']]) {
      const result = await spawnCli(argv, { stdout: 'close-after-first-chunk' });
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
    }
  });
});

/** A stdout whose every write fails with `code`, as a Node stream reports it (an 'error' event). */
class FailingStream extends Writable {
  override _write(_chunk: unknown, _encoding: string, callback: (error?: Error | null) => void): void {
    callback(Object.assign(new Error(`${this.code}: i/o error, write`), { code: this.code }));
  }
  constructor(private readonly code: string) {
    super();
  }
}

describe('other write errors, in-process', () => {
  it('turns EIO of a Node stream into exit 11 and one line', async () => {
    const stderr: Buffer[] = [];
    const code = await main(['ip', '8.8.8.8', '-f', 'json'], {
      stdin: Readable.from([]),
      stdout: new FailingStream('EIO'),
      stderr: new Writable({ write: (chunk: Buffer, _e, done) => (stderr.push(chunk), done()) }),
      env: isolatedEnv(),
    });
    expect(code).toBe(OUTPUT_FAILED);
    expect(Buffer.concat(stderr).toString()).toBe('netintel: cannot write to stdout: EIO: i/o error, write\n');
  });

  it('turns EBADF of a descriptor not open for writing into exit 11, for a one-off lookup and for a bulk run', async () => {
    for (const [argv, stdin] of [
      [['asn', 'AS16509', '-f', 'json'], undefined],
      [['bulk', '-f', 'csv'], many(5000)],
    ] as const) {
      const fd = openSync('/dev/null', 'r');
      try {
        const stderr: Buffer[] = [];
        const code = await main([...argv], {
          stdin: Readable.from(stdin === undefined ? [] : [Buffer.from(stdin)]),
          stdout: createWriteStream('', { fd, autoClose: false }),
          stderr: new Writable({ write: (chunk: Buffer, _e, done) => (stderr.push(chunk), done()) }),
          env: isolatedEnv(),
        });
        const text = Buffer.concat(stderr).toString();
        expect(code, text).toBe(OUTPUT_FAILED);
        expectOneLineFailure(text);
        expect(text).toContain('EBADF');
      } finally {
        closeSync(fd);
      }
    }
  });

  it('still reports a run that writes nothing to stdout as usual', async () => {
    const result = await runEntry(main, ['ip', 'not-an-ip', '--fields', 'constructor']);
    expect(result.code).toBe(2);
  });
});
