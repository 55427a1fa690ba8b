/** `netintel dkim` in-process against a real DNS server on 127.0.0.1 with keys made by the test. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/engine/outcome.js';
import { DKIM_MESSAGE_SCHEMA, DKIM_SCHEMA } from '../../src/output/schemas/dkim-schema.js';
import { render } from '../output/render.js';
import { runCli, tempDir } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { makeDkimZone, mailauthSign } from '../engine/mail/dkim-zone.js';

let server: DnsTestServer;
let dnsFlags: string[];
const zone = makeDkimZone();
const scratch = tempDir('netintel-dkim-');
const MESSAGE = 'From: alice@dkim.test\r\nTo: bob@example.test\r\nSubject: hello\r\n\r\nHello Bob.\r\n';
let signedFile: string;
let tamperedFile: string;

beforeAll(async () => {
  server = await startDnsServer({ records: zone.records, behaviours: { 'broken._domainkey.dkim.test': 'servfail' } });
  dnsFlags = ['--resolver', server.address, '--timeout', '1000', '--retries', '0'];
  const signature = await mailauthSign(MESSAGE, { signatureData: [{ signingDomain: 'dkim.test', selector: 'rsa2048', privateKey: zone.keys.rsa2048.pem }] });
  signedFile = join(scratch.path, 'signed.eml');
  tamperedFile = join(scratch.path, 'tampered.eml');
  writeFileSync(signedFile, signature.signatures + MESSAGE);
  writeFileSync(tamperedFile, signature.signatures + MESSAGE.replace('Hello Bob.', 'Hello Bob, pay this invoice.'));
});

afterAll(async () => {
  await server.close();
  scratch.remove();
});

describe('netintel dkim', () => {
  it('prints the selectors asked with their keys as JSON', async () => {
    const run = await runCli(['dkim', 'dkim.test', '--selector', 'rsa2048,esp,ed', '-f', 'json', ...dnsFlags]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const record = JSON.parse(run.stdout);
    expect(record).toMatchObject({ kind: 'dkim', domain: 'dkim.test', status: 'valid', probed: 'given' });
    expect(record.selectors.map((item: { selector: string; key: unknown; cname?: string }) => [item.selector, item.key, item.cname ?? null])).toEqual([
      ['rsa2048', { type: 'rsa', bits: 2048, encoding: 'spki' }, null],
      ['esp', { type: 'rsa', bits: 2048, encoding: 'spki' }, 's1.domainkey.u123.wl.esp.test'],
      ['ed', { type: 'ed25519', bits: 256, encoding: 'raw' }, null],
    ]);
  });

  it('shows status first, then the selectors, then findings by severity in the table view', async () => {
    const run = await runCli(['dkim', 'dkim.test', '--selector', 'rsa1024,revoked,testing', ...dnsFlags], { env: { COLUMNS: '80' } });
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe('dkim.test DKIM: 3 warnings');
    expect(run.stdout).toMatch(/^status +valid: at least one usable key$/m);
    expect(run.stdout).toContain('rsa1024: RSA 1024 bits');
    expect(run.stdout).toContain('revoked: revoked');
    expect(run.stdout).toContain('testing: RSA 2048 bits, testing');
    expect(run.stdout).toContain('[dkim_key_revoked, RFC 6376 §3.6.1]');
    expect(lines.every((line) => line.length <= 80)).toBe(true);
  });

  it('probes the common selectors without --selector and says that none found is not "no DKIM"', async () => {
    const run = await runCli(['dkim', 'nodkim.test', '-f', 'json', ...dnsFlags]);
    const record = JSON.parse(run.stdout);
    expect(record).toMatchObject({ status: 'none', probed: 'common' });
    expect(record.findings).toEqual([expect.objectContaining({ id: 'dkim_no_common_selector', severity: 'info' })]);
  });

  it('exits 10 under --fail-on for a weak key, and 5 when the only lookup gets SERVFAIL', async () => {
    expect((await runCli(['dkim', 'dkim.test', '--selector', 'rsa512', '--fail-on', 'error', '-f', 'json', ...dnsFlags])).code).toBe(10);
    expect((await runCli(['dkim', 'dkim.test', '--selector', 'rsa2048', '--fail-on', 'warning', '-f', 'json', ...dnsFlags])).code).toBe(0);
    const servfail = await runCli(['dkim', 'dkim.test', '--selector', 'broken', '-f', 'json', ...dnsFlags]);
    expect(servfail.code).toBe(5);
    expect(JSON.parse(servfail.stdout).error.code).toBe('upstream');
  });

  it('exits 7, --fail-on or not, when one selector\'s lookup failed beside others that answered', async () => {
    const run = await runCli(['dkim', 'dkim.test', '--selector', 'broken,rsa2048', '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(7);
    const record = JSON.parse(run.stdout);
    expect(record.status).toBe('valid');
    expect(record.findings.find((item: { id: string }) => item.id === 'dkim_lookup_failed')).toMatchObject({ severity: 'unknown', evidence: { selector: 'broken', error: { code: 'upstream' } } });
    expect((await runCli(['dkim', 'dkim.test', '--selector', 'broken,rsa512', '--fail-on', 'error', '-f', 'json', ...dnsFlags])).code).toBe(7);
    expect((await runCli(['dkim', 'dkim.test', '--selector', 'absent,rsa2048', '-f', 'json', ...dnsFlags])).code).toBe(0);
  });

  it('checks domains piped on stdin, one row each', async () => {
    const run = await runCli(['dkim', '--selector', 'google,selector1', '-f', 'csv', ...dnsFlags], { stdin: 'common.test\nnodkim.test\n' });
    expect(run.code).toBe(0);
    const rows = run.stdout.trim().split('\n');
    expect(rows[0]).toContain('domain');
    expect(rows.slice(1).map((row) => row.split(',')[0])).toEqual(['common.test', 'nodkim.test']);
  });

  it('verifies a saved message with --message, and fails a tampered one', async () => {
    const good = await runCli(['dkim', '--message', signedFile, '-f', 'json', ...dnsFlags]);
    expect(good.code).toBe(0);
    expect(JSON.parse(good.stdout)).toMatchObject({ kind: 'dkim-message', status: 'pass', signatures: [{ domain: 'dkim.test', selector: 'rsa2048', result: 'pass' }] });
    const bad = await runCli(['dkim', '--message', tamperedFile, '--fail-on', 'error', ...dnsFlags], { env: { COLUMNS: '80' } });
    expect(bad.code).toBe(10);
    expect(bad.stdout).toMatch(/^signatures +fail d=dkim\.test s=rsa2048 rsa-sha256 \(body hash did not verify\)$/m);
    const piped = await runCli(['dkim', '--message', '-', '-f', 'json', ...dnsFlags], { stdin: MESSAGE });
    expect(JSON.parse(piped.stdout)).toMatchObject({ source: 'stdin', status: 'none' });
  });

  it('reads no more of an endless --message than the 64 MiB limit, and says so in one line', async () => {
    const run = await runCli(['dkim', '--message', '/dev/zero', ...dnsFlags]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^netintel: \/dev\/zero has 67108865 octets; messages over 64 MiB are not read/);
    expect(run.stderr.split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('gives permerror for an l= beyond the body, warns about l=, and keeps stdout to the record', async () => {
    const signature = await mailauthSign(MESSAGE, { signatureData: [{ signingDomain: 'dkim.test', selector: 'rsa2048', privateKey: zone.keys.rsa2048.pem, maxBodyLength: 5000 }] });
    const file = join(scratch.path, 'limited.eml');
    // The signer caps l= at the body's length; RFC 6376 §3.5 forbids a larger one.
    expect(signature.signatures).toMatch(/l=\d+;/);
    writeFileSync(file, signature.signatures.replace(/l=\d+;/, 'l=5000;') + MESSAGE);
    const run = await runCli(['dkim', '--message', file, '-f', 'json', '-v', ...dnsFlags]);
    const record = JSON.parse(run.stdout);
    expect(record.signatures[0]).toMatchObject({ body_length_limit: 5000, result: 'permerror', reason: expect.stringMatching(/^l=5000 is more than the \d+ octets of the canonicalized body$/) });
    expect(record.findings.map((item: { id: string }) => item.id)).toContain('dkim_signature_body_length');
  });

  it('gives a verdict, not an internal error, for t= and x= past what a date can hold (exit 0)', async () => {
    for (const tag of ['t=99999999999999999', 'x=99999999999999999', 't=8640000000001', 'x=8640000000001']) {
      const stdin = `DKIM-Signature: v=1; a=rsa-sha256; d=x.test; s=s; h=from; ${tag}; bh=AA; b=BB\r\nFrom: a@b.c\r\n\r\nhi\r\n`;
      const run = await runCli(['dkim', '--message', '-', '-f', 'json', ...dnsFlags], { stdin });
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
      expect(JSON.parse(run.stdout).signatures).toEqual([
        expect.objectContaining({ result: 'permerror', reason: `${tag} is not a time (1 to 12 digits of seconds since 1970)`, signed_at: null, expires_at: null }),
      ]);
    }
  });

  it('refuses a message whose header section is over 1 MiB with exit 2, naming the limit', async () => {
    const run = await runCli(['dkim', '--message', '-', ...dnsFlags], { stdin: `X-Big: ${'a'.repeat(1024 * 1024)}\r\n${MESSAGE}` });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('netintel: stdin: the header section is over 1 MiB (the limit on the header fields before the body of a message read for DKIM)\n');
  });

  it('refuses bad input with one line and exit 2', async () => {
    const missing = await runCli(['dkim', '--message', join(scratch.path, 'nope.eml'), ...dnsFlags]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^netintel: cannot read --message ".*nope\.eml": .*\(give the path of a saved \.eml message\)\n$/);
    const both = await runCli(['dkim', 'dkim.test', '--message', signedFile]);
    expect(both.code).toBe(2);
    expect(both.stderr).toBe('netintel: --message verifies a saved message on its own: give no domain or --selector with it\n');
    const selector = await runCli(['dkim', 'dkim.test', '--selector', 'bad selector', ...dnsFlags]);
    expect(selector.code).toBe(2);
    expect(selector.stderr.trim().split('\n')).toHaveLength(1);
    expect(selector.stderr).toContain('invalid DKIM selector "bad selector" (give DNS labels');
  });

  it('refuses to send a saved message to a server, in one line', async () => {
    const run = await runCli(['dkim', '--message', '-', '--server', 'http://127.0.0.1:9'], { stdin: 'Subject: x\r\n\r\nbody\r\n' });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('netintel: remote mode cannot send a message to the server: run netintel dkim --message without --server\n');
  });
});

/** Anything a terminal would act on; LF is allowed where the layout puts it. */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const INJECTIONS = ['\x1b]0;pwned\x07', '\x1b[2J', '\r', '\x00', '\x9b31m', '\u202e', '\t', '\n'];

/** `value` with every string in it replaced by `text`. */
function poison(value: unknown, text: string): unknown {
  if (typeof value === 'string') return text;
  if (Array.isArray(value)) return value.map((item) => poison(item, text));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, poison(child, text)]));
  return value;
}

describe('the dkim views with hostile strings (key records and messages come from outside)', () => {
  it('hold no control or bidi character in the table view, one record or many, every column too', async () => {
    const key = JSON.parse((await runCli(['dkim', 'dkim.test', '--selector', 'rsa1024,esp,revoked,gone', '-f', 'json', ...dnsFlags])).stdout);
    const message = JSON.parse((await runCli(['dkim', '--message', tamperedFile, '-f', 'json', ...dnsFlags])).stdout);
    const hostile = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.tuple(fc.string({ maxLength: 10 }), fc.constantFrom(...INJECTIONS), fc.string({ maxLength: 10 })).map(([a, b, c]) => a + b + c),
    );
    for (const [schema, value] of [[DKIM_SCHEMA, key], [DKIM_MESSAGE_SCHEMA, message]] as const) {
      await fc.assert(
        fc.asyncProperty(hostile, async (text) => {
          const ok: Outcome<unknown> = { ok: true, query: text, value: poison(value, text) };
          for (const output of [
            await render(schema, 'table', [ok], { single: true }),
            await render(schema, 'table', [ok, ok], { single: false }),
            await render(schema, 'table', [ok], { single: true, columns: schema.columns }),
          ]) {
            expect(UNSAFE.exec(output)).toBeNull();
          }
        }),
        { numRuns: 60 },
      );
    }
  });
});
