/**
 * Differential test of the DNSSEC validator: a signed tree from its own root
 * (test/support/dnssec-hierarchy.ts) served by NSD, and every question's
 * verdict from `netintel dns NAME --type T --dnssec --trust-anchor FILE`
 * compared with BIND's delv and with Unbound given the same trust anchor.
 * netintel must agree with delv on every question except the documented,
 * RFC-cited choices of docs/commands/dns.md ("Where netintel and BIND or
 * Unbound differ"); Unbound's verdicts are printed and compared the same way.
 * Needs nsd, bind9-utils, delv (bind9-dnsutils) and unbound; skipped, with a
 * warning, when one is missing.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { buildSignedHierarchy, type HierarchyQuestion, type SignedHierarchy } from '../support/dnssec-hierarchy.js';
import { startDoDroppingProxy, type DoDroppingProxy } from '../support/do-dropping-proxy.js';
import { DNSSEC_TOOLS, askDelv, delvVerdict, missingDnssecTools, servesRoot, type ValidationStatus } from '../support/delv.js';
import { startNsd, type RunningNsd } from '../support/nsd.js';
import { startUnbound, type RunningUnbound } from '../support/unbound.js';

const run = promisify(execFile);
const missing = missingDnssecTools('test/interop/dnssec-delv-unbound.test.ts');

interface Verdicts {
  question: HierarchyQuestion;
  netintel: ValidationStatus;
  reason: string | null;
  delv: ValidationStatus;
  unbound: ValidationStatus;
}

/**
 * The documented differences: each names the rule of docs/commands/dns.md it
 * follows (the id is in that section), which questions it covers, and what
 * netintel, delv and Unbound say there.
 */
interface Difference {
  id: string;
  covers(question: HierarchyQuestion): boolean;
  netintel: ValidationStatus;
  delv?: ValidationStatus;
  unbound?: ValidationStatus;
}

const DIFFERENCES: Difference[] = [
  {
    // RFC 5155 §9.2: no AD on a closest encloser proof whose next closer name is in an opt-out span.
    // BIND 9.18 applies it to wildcard answers only; Unbound, and netintel, to every such proof.
    id: 'nsec3-opt-out-denial',
    covers: (q) => /^optout-a\d+\.$/.test(q.zone) && OPT_OUT_DENIALS.has(`${relativeName(q)} ${q.type}`),
    netintel: 'insecure',
    delv: 'secure',
    unbound: 'insecure',
  },
];

/**
 * What the zones were built to give, so that a broken fixture cannot pass
 * unseen by fooling all three validators alike; the first rows are the
 * reproductions of fixed bugs.
 */
const INTENDED: Record<string, RegExp> = {
  // NSEC3 above 150 iterations makes a wildcard answer insecure, as it does every other proof (RFC 9276 §3.2).
  'x.wild.iter-a13. A': /^insecure: wildcard answer: NSEC3 with 200 iterations, above the limit \(RFC 9276 §3\.2\)$/,
  'x.wild.iteroo-a8. A': /^insecure: wildcard answer: NSEC3 with 200 iterations/,
  'nx.iter-a15. A': /^insecure: NSEC3 with 200 iterations/,
  // A wildcard answer whose next closer name is in an opt-out span is not proven (RFC 5155 §9.2).
  'x.wild.optout-a13. A': /^insecure: wildcard answer: NSEC3 opt-out: x\.wild\.optout-a13\. is in an opt-out span/,
  'nx.optout-a13. A': /^insecure: NSEC3 opt-out: nx\.optout-a13\./,
  // A DS with the key's tag and a wrong digest is a digest mismatch.
  'www.wrongdigest.fail. A': /^bogus: digest mismatch: DS (\d+) \(digest type 2\) is not the digest of DNSKEY \1 of wrongdigest\.fail\.$/,
  'www.nsec-a8. A': /^secure$/,
  'www.nsec3-a10. A': /^secure$/,
  'x.y.wild.nsec3-a14. TXT': /^secure$/,
  'nx.nsec-a16. A': /^secure$/,
  'x.wild.rechain-a13. A': /^secure$/,
  'www.unknownalg.fail. A': /^insecure: no DS with a supported algorithm/,
  'www.unknowndigest.fail. A': /^insecure: no DS with a supported algorithm/,
  'www.mixedds.fail. A': /^secure$/,
  'www.nokey.fail. A': /^bogus: missing DNSKEY/,
  'www.tagmiss.fail. A': /^bogus: key tag mismatch: no DNSKEY of tagmiss\.fail\./,
  'www.hiddenzsk.fail. A': /^bogus: key tag mismatch \(no DNSKEY with tag \d+\) on www\.hiddenzsk\.fail\. A$/,
  'www.expiredkeys.fail. A': /^bogus: expired signature \(2020-02-01T00:00:00Z\) on expiredkeys\.fail\. DNSKEY$/,
  'www.futurekeys.fail. A': /^bogus: signature not yet valid .* on futurekeys\.fail\. DNSKEY$/,
  'good.sigs.fail. A': /^secure$/,
  'expired.sigs.fail. A': /^bogus: expired signature .* on expired\.sigs\.fail\. A$/,
  'future.sigs.fail. A': /^bogus: signature not yet valid .* on future\.sigs\.fail\. A$/,
  'nosig.sigs.fail. A': /^bogus: no RRSIG on nosig\.sigs\.fail\. A$/,
  'corrupt.sigs.fail. A': /^bogus: bad signature on corrupt\.sigs\.fail\. A$/,
  'changed.sigs.fail. A': /^bogus: bad signature on changed\.sigs\.fail\. A$/,
  'ma.sigs.fail. A': /^bogus: no RRSIG on m\.sigs\.fail\. NSEC$/,
  'p.sigs.fail. AAAA': /^bogus: expired signature .* on p\.sigs\.fail\. NSEC$/,
  'www.badnsec3.fail. A': /^secure$/,
  'nx.badnsec3.fail. A': /^bogus: bad signature on \S+\.badnsec3\.fail\. NSEC3$/,
  'www.nosigds.fail. A': /^bogus: no RRSIG on nosigds\.fail\. DS$/,
  'www.expiredds.fail. A': /^bogus: expired signature .* on expiredds\.fail\. DS$/,
  'www.insecure.fail. A': /^insecure: no DS: insecure\.fail\. is an unsigned delegation/,
  'www.badnods.fail. A': /^bogus: missing DS: bad signature on badnods\.fail\. NSEC$/,
  'www.deleg.optout-a13. A': /^insecure: no DS: deleg\.optout-a13\. may be an unsigned delegation \(NSEC3 opt-out span, RFC 5155 §6\)$/,
};

/** The negative answers of an opt-out zone whose proof has the next closer name in an opt-out span. */
const OPT_OUT_DENIALS = new Set(['nx A', 'a.nx TXT', 'x.wild AAAA', 'x.real.wild A', 'deleg DS', 'ent A', 'deleg.ent DS']);

function relativeName(question: HierarchyQuestion): string {
  if (question.name === question.zone) return '@';
  return question.zone === '.' ? question.name.slice(0, -1) : question.name.slice(0, -question.zone.length - 1);
}

describe.skipIf(missing.length > 0)('DNSSEC verdicts of netintel, delv and Unbound on one signed tree', () => {
  let tree: SignedHierarchy;
  let nsd: RunningNsd;
  let unbound: RunningUnbound;
  let anchorFile: string;
  let delvAnchorFile: string;

  beforeAll(async () => {
    tree = await buildSignedHierarchy();
    nsd = await startNsd(DNSSEC_TOOLS.nsd!, tree.zones, servesRoot);
    anchorFile = join(tree.dir, 'root.key');
    delvAnchorFile = join(tree.dir, 'delv-anchor.conf');
    await Promise.all([writeFile(anchorFile, tree.anchorKeyFile), writeFile(delvAnchorFile, tree.delvAnchor)]);
    unbound = await startUnbound(DNSSEC_TOOLS.unbound!, { upstreamPort: nsd.port, trustAnchor: tree.anchorKeyFile });
  }, 180_000);

  afterAll(async () => {
    await unbound?.stop();
    await nsd?.stop();
    await tree?.cleanup();
  });

  /** netintel's verdicts, one CLI run per type over all the names asked with it. */
  async function netintelVerdicts(questions: readonly HierarchyQuestion[]): Promise<Map<string, { status: ValidationStatus; reason: string | null }>> {
    const verdicts = new Map<string, { status: ValidationStatus; reason: string | null }>();
    for (const type of new Set(questions.map((q) => q.type))) {
      const names = questions.filter((q) => q.type === type).map((q) => cliName(q.name));
      const result = await runCli(['dns', ...names, '--type', type, '--dnssec', '--trust-anchor', anchorFile, '--resolver', `127.0.0.1:${nsd.port}`, '--concurrency', '8', '-f', 'ndjson']);
      for (const line of result.stdout.trim().split('\n')) {
        const record = JSON.parse(line) as { domain?: string; type?: string; dnssec?: { status: ValidationStatus; reason: string | null }; target?: string; message?: string };
        if (record.dnssec) verdicts.set(`${record.domain} ${record.type}`, record.dnssec);
      }
    }
    return verdicts;
  }

  /** delv's verdict: its own comment lines say how the answer validated. */
  const delvOf = (question: HierarchyQuestion): Promise<ValidationStatus> => delvVerdict(nsd.port, delvAnchorFile, question.name, question.type);


  let rows: Verdicts[] = [];

  /** Every question asked of the three validators, once for the whole file. */
  beforeAll(async () => {
    const questions = tree.questions;
    const ours = await netintelVerdicts(questions);
    const [delvs, unbounds] = await Promise.all([mapLimited(questions, 4, delvOf), mapLimited(questions, 8, (q) => unbound.verdict(q.name, q.type).then((v) => v.status))]);
    rows = questions.map((question, i) => {
      const mine = ours.get(`${cliName(question.name)} ${question.type}`);
      return { question, netintel: mine?.status ?? 'indeterminate', reason: mine ? mine.reason : 'no record from the CLI', delv: delvs[i]!, unbound: unbounds[i]! };
    });
    const tally = (['secure', 'insecure', 'bogus', 'indeterminate'] as const).map((status) => `${rows.filter((r) => r.netintel === status).length} ${status}`).join(', ');
    const delvDiffers = rows.filter((row) => row.netintel !== row.delv);
    const unboundDiffers = rows.filter((row) => row.netintel !== row.unbound);
    console.log(
      [
        `DNSSEC differential: ${rows.length} questions (netintel: ${tally}); netintel agrees with delv on ${rows.length - delvDiffers.length}, with Unbound on ${rows.length - unboundDiffers.length}; delv and Unbound agree on ${rows.filter((r) => r.delv === r.unbound).length}`,
        `differences from delv (${delvDiffers.length}):`,
        ...delvDiffers.map((row) => `  ${documented(row, 'delv')?.id ?? 'UNDOCUMENTED'}: ${describeRow(row)}`),
        `differences from Unbound (${unboundDiffers.length}):`,
        ...unboundDiffers.map((row) => `  ${documented(row, 'unbound')?.id ?? 'UNDOCUMENTED'}: ${describeRow(row)}`),
      ].join('\n'),
    );
  }, 600_000);

  it('asks at least 500 questions, and the broken zones are broken as meant', () => {
    expect(rows.length).toBeGreaterThanOrEqual(500);
    const verdictOf = (key: string): string => {
      const row = rows.find((r) => `${r.question.name} ${r.question.type}` === key);
      return row ? `${row.netintel}${row.reason ? `: ${row.reason}` : ''}` : 'not asked';
    };
    const intended = Object.fromEntries(Object.keys(INTENDED).map((key) => [key, verdictOf(key)]));
    expect(intended).toEqual(Object.fromEntries(Object.entries(INTENDED).map(([key, pattern]) => [key, expect.stringMatching(pattern)])));
  });

  it('gives delv\'s verdict on every question but the documented differences', () => {
    const undocumented = rows.filter((row) => row.netintel !== row.delv && !documented(row, 'delv'));
    expect(undocumented.map(describeRow)).toEqual([]);
  });

  it('gives Unbound\'s verdict on every question but the documented differences', () => {
    const undocumented = rows.filter((row) => row.netintel !== row.unbound && !documented(row, 'unbound'));
    expect(undocumented.map(describeRow)).toEqual([]);
  });

  it('documents each deliberate difference in docs/commands/dns.md', () => {
    const docs = readFileSync(new URL('../../docs/commands/dns.md', import.meta.url), 'utf8');
    for (const difference of DIFFERENCES) expect(docs).toContain(`\`${difference.id}\``);
  });

  describe('through a resolver that drops the DO bit (it passes no DNSSEC records on)', () => {
    let proxy: DoDroppingProxy;
    let blindUnbound: RunningUnbound;
    beforeAll(async () => {
      proxy = await startDoDroppingProxy(nsd.port);
      blindUnbound = await startUnbound(DNSSEC_TOOLS.unbound!, { upstreamPort: proxy.port, trustAnchor: tree.anchorKeyFile });
    });
    afterAll(async () => {
      await blindUnbound?.stop();
      await proxy?.close();
    });

    // A signed name, an unsigned delegation, a broken signature and a proven NXDOMAIN: through this resolver none can be judged.
    const QUESTIONS = [
      { name: 'www.nsec-a8.', type: 'A' },
      { name: 'www.insecure.fail.', type: 'A' },
      { name: 'expired.sigs.fail.', type: 'A' },
      { name: 'nx.nsec-a16.', type: 'A' },
    ];

    it('gives no verdict where delv and Unbound give none: DNSSEC not checked (exit 7), never secure, insecure or bogus', async () => {
      const result = await runCli(['dns', ...QUESTIONS.map((q) => cliName(q.name)), '--dnssec', '--trust-anchor', anchorFile, '--resolver', proxy.address, '-f', 'ndjson']);
      expect(result.code).toBe(7);
      const records = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as { dnssec: { status: ValidationStatus; error: { code: string; message: string } | null; findings: Array<{ id: string }> } });
      expect(records).toHaveLength(QUESTIONS.length);
      for (const record of records) {
        expect(record.dnssec).toMatchObject({ status: 'indeterminate', error: { code: 'upstream', message: expect.stringMatching(/without its RRSIG: it does not pass DNSSEC records on/) } });
        expect(record.dnssec.findings.map((item) => item.id)).toEqual(['dnssec_unchecked']);
      }
      for (const question of QUESTIONS) {
        const delv = await askDelv(proxy.port, delvAnchorFile, question.name, question.type);
        expect(delv, `delv ${question.name}`).toMatch(/resolution failed|no valid RRSIG|broken trust chain/);
        expect(await blindUnbound.verdict(question.name, question.type), `unbound ${question.name}`).toMatchObject({ rcode: 'SERVFAIL' });
      }
    });
  });
});

function describeRow(row: Verdicts): string {
  return `${row.question.name} ${row.question.type}: netintel ${row.netintel}${row.reason ? ` (${row.reason})` : ''}, delv ${row.delv}, unbound ${row.unbound}`;
}

/** The documented difference that explains `row`'s verdict against delv's or Unbound's, if any. */
function documented(row: Verdicts, against: 'delv' | 'unbound'): Difference | undefined {
  return DIFFERENCES.find((d) => d.covers(row.question) && d.netintel === row.netintel && d[against] === row[against]);
}

/** The name as the CLI takes it: no trailing dot, the root as `.`. */
function cliName(name: string): string {
  return name === '.' ? '.' : name.replace(/\.$/, '');
}


/** `fn` over `items` with at most `limit` in flight, results in input order. */
async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const at = next++;
        results[at] = await fn(items[at]!);
      }
    }),
  );
  return results;
}
