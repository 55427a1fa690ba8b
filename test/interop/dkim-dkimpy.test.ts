/**
 * Differential test of the DKIM verifier against dkimpy (Debian
 * python3-dkim), the reference verifier: dkimpy signs a generated corpus
 * (RSA 1024 and 2048, Ed25519; the four canonicalizations; l=,
 * oversigning, folding, 8-bit and empty bodies; tampered messages; key
 * records of every variant the key check judges; t= and x= cases), then
 * netintel (keys served by a DNS server on 127.0.0.1) and dkimpy (keys
 * served by its dnsfunc) verify every signature. Their verdicts, pass or
 * not, must agree but for the differences listed in DKIM_DIFFERENCES and
 * in docs/commands/dkim.md, each decided by the RFC section it names.
 *
 * One Python process signs the whole corpus and one verifies it
 * (test/interop/dkim-dkimpy.py reads a JSON batch on stdin).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../src/engine/context.js';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { checkDkimMessage } from '../../src/engine/mail/dkim-message.js';
import { REPO_ROOT } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { dkimTxt } from '../engine/mail/dkim-zone.js';
import { buildCorpus, DKIM_DIFFERENCES, NOW, type CorpusCase, type DifferenceId } from './dkim-corpus.js';
import { findPython, runPythonHelper } from './python-helper.js';

const HELPER = join(REPO_ROOT, 'test', 'interop', 'dkim-dkimpy.py');

// dkimpy and PyNaCl (Ed25519).
const PYTHON = findPython('import dkim, nacl.signing');
if (!PYTHON) {
  console.warn('SKIPPING test/interop/dkim-dkimpy.test.ts: no python3 can import dkim and nacl (Debian packages python3-dkim and python3-nacl)');
}

/** Runs the helper on one JSON request; one process for the whole batch. */
function dkimpy<T>(request: unknown): Promise<T> {
  return runPythonHelper<T>(PYTHON!, HELPER, request);
}

type Verdict = 'pass' | 'fail' | 'error';

let server: DnsTestServer;
let ctx: EngineContext;
let cases: CorpusCase[] = [];
let zone: Record<string, string> = {};

beforeAll(async () => {
  if (!PYTHON) return;
  const corpus = buildCorpus();
  zone = corpus.zone;
  const signed = await dkimpy<{ signed: Array<{ header?: string; error?: string }> }>({
    now: NOW,
    sign: corpus.jobs.map(({ job }) => ({ ...job, message: Buffer.from(job.message, 'latin1').toString('base64') })),
  });
  corpus.jobs.forEach(({ cases: make }, index) => {
    const result = signed.signed[index]!;
    if (result.error !== undefined) throw new Error(`dkimpy could not sign job ${index}: ${result.error}`);
    cases.push(...make(Buffer.from(result.header!, 'base64').toString('latin1')));
  });
  server = await startDnsServer({ records: Object.entries(zone).map(([name, text]) => dkimTxt(name, text)) });
  ctx = createEngineContext({ resolvers: [parseResolverAddress(server.address)], timeoutMs: 2000, dnsRetries: 1, now: () => new Date(NOW * 1000) });
}, 120_000);

afterAll(async () => {
  await ctx?.close();
  await server?.close();
});

/** netintel's result for each case, a few at a time. */
async function verifyWithNetintel(all: readonly CorpusCase[]): Promise<Array<{ result: string; reason: string | null }>> {
  const out: Array<{ result: string; reason: string | null }> = new Array(all.length);
  let next = 0;
  const worker = async () => {
    while (next < all.length) {
      const index = next++;
      const item = all[index]!;
      const checked = await checkDkimMessage(ctx, item.message, item.id);
      const signature = checked.signatures[item.index];
      out[index] = signature ? { result: signature.result, reason: signature.reason } : { result: 'none', reason: 'no such signature' };
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return out;
}

describe.skipIf(!PYTHON)('netintel and dkimpy on a generated corpus', () => {
  it('give the same verdict for every signature but the differences docs/commands/dkim.md lists', async () => {
    const [ours, theirs] = await Promise.all([
      verifyWithNetintel(cases),
      dkimpy<{ verified: Array<{ verdict: Verdict; detail: string }> }>({
        now: NOW,
        zone,
        verify: cases.map((item) => ({ message: item.message.toString('base64'), index: item.index })),
      }).then((reply) => reply.verified),
    ]);

    const agreed: string[] = [];
    const listed = new Map<DifferenceId, string[]>();
    const unlisted: string[] = [];
    const wrongReason: string[] = [];
    cases.forEach((item, index) => {
      const mine = ours[index]!;
      const reference = theirs[index]!;
      const line = `${item.id}: netintel ${mine.result}${mine.reason ? ` (${mine.reason})` : ''}; dkimpy ${reference.verdict}${reference.detail ? ` (${reference.detail})` : ''}`;
      if (item.netintel !== undefined && mine.result !== item.netintel) wrongReason.push(`${line}; expected netintel ${item.netintel}`);
      if ((mine.result === 'pass') === (reference.verdict === 'pass')) {
        agreed.push(line);
        return;
      }
      if (item.difference !== null) listed.set(item.difference, [...(listed.get(item.difference) ?? []), line]);
      else unlisted.push(line);
    });

    const pairs = new Map<string, number>();
    cases.forEach((_, index) => {
      const pair = `netintel ${ours[index]!.result} / dkimpy ${theirs[index]!.verdict}`;
      pairs.set(pair, (pairs.get(pair) ?? 0) + 1);
    });
    const report = [
      `dkimpy differential: ${cases.length} signatures, ${agreed.length} agree, ${[...listed.values()].flat().length} differ as documented, ${unlisted.length} differ otherwise`,
      `  results side by side: ${[...pairs].sort((a, b) => b[1] - a[1]).map(([pair, count]) => `${pair}: ${count}`).join('; ')}`,
      ...[...listed].map(([id, lines]) => `  documented difference ${id} (${lines.length}): ${DKIM_DIFFERENCES[id]}\n${lines.map((line) => `    ${line}`).join('\n')}`),
      ...unlisted.map((line) => `  UNDOCUMENTED: ${line}`),
      ...wrongReason.map((line) => `  WRONG RESULT: ${line}`),
    ].join('\n');
    console.log(report);

    expect(cases.length).toBeGreaterThanOrEqual(300);
    expect(unlisted).toEqual([]);
    expect(wrongReason).toEqual([]);
    // Both sides verify most of the corpus, so agreement is not "both refuse everything".
    expect(ours.filter((item) => item.result === 'pass').length).toBeGreaterThan(cases.length / 3);
  }, 120_000);

  it('documents each difference in docs/commands/dkim.md', () => {
    const docs = readFileSync(join(REPO_ROOT, 'docs', 'commands', 'dkim.md'), 'utf8');
    for (const id of Object.keys(DKIM_DIFFERENCES)) expect(docs).toContain(`\`${id}\``);
  });
});
