/**
 * Differential test of ARC chain validation (RFC 8617 §5.2) against dkimpy
 * (Debian python3-dkim), the reference: mailauth's sealer seals messages
 * once or twice (dkimpy's arc_sign() needs the authres package, which
 * Debian does not install with it), the chains are then broken in the ways a relay breaks them
 * (a changed body, a changed ARC-Authentication-Results, a seal's cv=
 * rewritten, a set removed), and netintel (keys served by a DNS server on
 * 127.0.0.1) and dkimpy's arc_verify() (keys served by its dnsfunc)
 * validate every chain. Their verdicts must be the same. One Python process
 * verifies them all (test/interop/arc-dkimpy.py).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../src/engine/context.js';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { analyzeHeaders } from '../../src/engine/mail/headers/analyze-headers.js';
import { REPO_ROOT } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { ARC_SEAL_TIME, listMessage, sealOnce } from '../engine/mail/arc-messages.js';
import { dkimTxt, rsaKey } from '../engine/mail/dkim-zone.js';
import { findPython, runPythonHelper } from './python-helper.js';

const HELPER = join(REPO_ROOT, 'test', 'interop', 'arc-dkimpy.py');
const NOW = ARC_SEAL_TIME;

const PYTHON = findPython('import dkim; dkim.arc_verify');
if (!PYTHON) console.warn('SKIPPING test/interop/arc-dkimpy.test.ts: no python3 can import dkim (Debian package python3-dkim)');

function dkimpy<T>(request: unknown): Promise<T> {
  return runPythonHelper<T>(PYTHON!, HELPER, { now: NOW, ...(request as object) });
}

const key = rsaKey(2048);
const ZONE: Record<string, string> = {
  'arc1._domainkey.sealer1.test': `v=DKIM1; k=rsa; p=${key.p}`,
  'arc2._domainkey.sealer2.test': `v=DKIM1; k=rsa; p=${key.p}`,
};

const BASE = listMessage();

const b64 = (text: string) => Buffer.from(text, 'latin1').toString('base64');
const text = (encoded: string) => Buffer.from(encoded, 'base64').toString('latin1');

/** Each message sealed by `domain` with one more ARC set. */
function seal(messages: string[], domain: string, selector: string): Promise<string[]> {
  return Promise.all(messages.map((message) => sealOnce(message, key, domain, selector)));
}

describe.skipIf(PYTHON === null)('ARC chains, netintel against dkimpy', () => {
  let dns: DnsTestServer;
  let ctx: EngineContext;
  const cases: Array<{ name: string; message: string }> = [];

  beforeAll(async () => {
    dns = await startDnsServer({
      records: Object.entries(ZONE).map(([name, value]) => dkimTxt(name, value)),
      behaviours: { 'arc9._domainkey.broken.test': 'servfail' },
    });
    ctx = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 2000, dnsRetries: 0 });
    const [once] = await seal([BASE], 'sealer1.test', 'arc1');
    const [twice] = await seal([`Authentication-Results: sealer2.test; arc=pass; spf=none\r\n${once!}`], 'sealer2.test', 'arc2');
    cases.push(
      { name: 'no ARC set', message: BASE },
      { name: 'one set', message: once! },
      { name: 'two sets', message: twice! },
      { name: 'one set, the body changed', message: once!.replace('attached.', 'attached. New bank details below.') },
      { name: 'two sets, the body changed', message: twice!.replace('attached.', 'attached!') },
      { name: 'two sets, the first ARC-Authentication-Results changed', message: twice!.replace(/(ARC-Authentication-Results: i=1; [^\r]*?)spf=pass/, '$1spf=fail') },
      { name: 'one set, cv=none rewritten to cv=pass', message: once!.replace(/cv=none/, 'cv=pass') },
      { name: 'two sets, the first ARC-Seal removed', message: twice!.replace(/ARC-Seal: i=1;[\s\S]*?\r\n(?=[^ \t])/, '') },
      { name: 'two sets, the second seal signed by an unpublished key', message: twice!.replaceAll('s=arc2', 's=arc3') },
    );
  }, 60_000);
  afterAll(async () => {
    await ctx?.close();
    await dns?.close();
  });

  it('gives the verdict dkimpy gives, for every chain', async () => {
    const reference = await dkimpy<{ verified: Array<{ cv: string; detail: string }> }>({ zone: ZONE, verify: cases.map((item) => b64(item.message)) });
    const ours = await Promise.all(cases.map(async (item) => (await analyzeHeaders(ctx, Buffer.from(item.message, 'latin1'), item.name)).authentication.arc));
    const rows = cases.map((item, index) => ({ name: item.name, netintel: ours[index]!.result, dkimpy: reference.verified[index]!.cv }));
    for (const row of rows) expect(row.netintel, `${row.name}: dkimpy ${row.dkimpy} (${reference.verified[rows.indexOf(row)]!.detail}), netintel ${row.netintel} (${ours[rows.indexOf(row)]!.reason})`).toBe(row.dkimpy);
    // The corpus holds passing and failing chains, so agreement is not agreement on one verdict.
    expect(new Set(rows.map((row) => row.netintel))).toEqual(new Set(['none', 'pass', 'fail']));
    expect(ours[2]!.seals.map((each) => [each.instance, each.domain, each.cv])).toEqual([
      [1, 'sealer1.test', 'none'],
      [2, 'sealer2.test', 'pass'],
    ]);
  });

  it('says temperror, not fail, when a sealer\'s key cannot be fetched (dkimpy, without DNS trouble, cannot say it)', async () => {
    const [sealed] = await seal([BASE.replace('sealer1.test;', 'broken.test;')], 'broken.test', 'arc9');
    const report = await analyzeHeaders(ctx, Buffer.from(sealed!, 'latin1'), 'broken');
    expect(report.authentication.arc).toMatchObject({ result: 'temperror', instances: 1 });
    expect(report.findings.map((item) => item.id)).toContain('headers_arc_temperror');
  });
});
