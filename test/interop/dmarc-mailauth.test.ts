/**
 * DMARC verdicts by RFC 9989 against an independent implementation:
 * mailauth 7 (`mailauth7` in devDependencies, its own DNS tree walk, policy
 * discovery and alignment), asked through node:dns of the same DNS server
 * netintel asks. Generated zones put DMARC records anywhere on the path
 * from a From domain to its top label (p, sp, np, psd, t, rua, adkim, aspf
 * of any value, several records at a name, non-DMARC TXT), names that exist
 * or not, and passing SPF and DKIM identities at and around them; netintel's
 * `headers` verdict (result, policy, policy domain, SPF and DKIM alignment)
 * must be mailauth's. Each case lives under a top label of its own, so one
 * server holds every case.
 */
import { Resolver } from 'node:dns/promises';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../src/engine/context.js';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { createMailDns } from '../../src/engine/mail/mail-dns.js';
import { checkDmarc } from '../../src/engine/mail/check-dmarc.js';
import { dmarcVerdict, type DmarcVerdict } from '../../src/engine/mail/headers/authentication.js';
import { startDnsServer, type DnsTestServer, type ZoneRecord } from '../support/dns-server.js';

interface MailauthDmarc {
  status: { result: string };
  policy?: string;
  policyDomain?: string | null;
  alignment?: { spf: { result?: string }; dkim: { result?: string } };
}
type VerifyDmarc = (options: { headerFrom: string; spfDomains: string[]; dkimDomains: Array<{ domain: string }>; resolver: (name: string, type: string) => Promise<unknown> }) => Promise<MailauthDmarc | false>;
const verifyDmarc = createRequire(import.meta.url)('mailauth7/lib/dmarc/verify.js') as VerifyDmarc;

interface Case {
  top: string;
  records: ZoneRecord[];
  from: string;
  spf: { result: 'pass' | 'fail'; domain: string };
  dkim: Array<{ result: 'pass' | 'fail'; domain: string }>;
}

const LABELS = ['a', 'b', 'mail'];
const POLICY = fc.constantFrom('none', 'quarantine', 'reject', 'Reject', 'bogus');
const recordText = fc
  .record(
    {
      p: POLICY,
      sp: POLICY,
      np: POLICY,
      psd: fc.constantFrom('y', 'n', 'u', 'Y', 'x'),
      t: fc.constantFrom('y', 'n'),
      rua: fc.constantFrom('mailto:reports@example.net', 'https://reports.example.net/r', 'not a uri'),
      adkim: fc.constantFrom('r', 's'),
      aspf: fc.constantFrom('r', 's'),
    },
    { requiredKeys: [] },
  )
  .map((tags) => ['v=DMARC1', ...Object.entries(tags).map(([tag, value]) => `${tag}=${value}`)].join('; '));

/** The names of one case: the top label, then up to five labels below it. */
function caseArbitrary(index: number): fc.Arbitrary<Case> {
  const top = `t${index}`;
  return fc
    .record({
      path: fc.array(fc.constantFrom(...LABELS), { minLength: 1, maxLength: 5 }),
      dmarc: fc.array(fc.tuple(fc.nat(5), fc.oneof({ weight: 6, arbitrary: recordText.map((text) => [text]) }, { weight: 1, arbitrary: fc.tuple(recordText, recordText) }, { weight: 1, arbitrary: fc.constant(['v=spf1 -all']) })), {
        maxLength: 4,
      }),
      existing: fc.array(fc.nat(5), { maxLength: 3 }),
      spf: fc.record({ result: fc.constantFrom('pass' as const, 'fail' as const), at: fc.nat(6), sideways: fc.boolean() }),
      dkim: fc.array(fc.record({ result: fc.constantFrom('pass' as const, 'fail' as const), at: fc.nat(6), sideways: fc.boolean() }), { maxLength: 3 }),
    })
    .map(({ path, dmarc, existing, spf, dkim }) => {
      // names[0] is the From domain, names[names.length - 1] the top label
      const names: string[] = [];
      for (let depth = path.length; depth >= 0; depth -= 1) names.push([...path.slice(path.length - depth), top].join('.'));
      const at = (position: number) => names[Math.min(position, names.length - 1)]!;
      const records: ZoneRecord[] = [];
      for (const [position, texts] of dmarc) for (const text of texts) records.push({ name: `_dmarc.${at(position)}`, type: 'TXT', data: [text] });
      for (const position of existing) records.push({ name: at(position), type: 'A', data: '192.0.2.1' });
      // An identity at a name of the path, or beside it (another label under the same parent).
      const identity = (position: number, sideways: boolean) => (sideways && position < names.length - 1 ? `other.${at(position + 1)}` : at(position));
      return { top, records, from: names[0]!, spf: { result: spf.result, domain: identity(spf.at, spf.sideways) }, dkim: dkim.map((each) => ({ result: each.result, domain: identity(each.at, each.sideways) })) };
    });
}

const CASES: Case[] = Array.from({ length: 400 }, (_, index) => fc.sample(caseArbitrary(index), { numRuns: 1, seed: 9989 + index })[0]!);

/** Named cases where RFC 9989 and the public-suffix reading of RFC 7489 part ways, or the walk's edges are. */
const NAMED: Array<Case & { title: string; expected: Partial<DmarcVerdict> }> = [
  {
    title: 'a sibling of a domain whose parent publishes nothing is its own Organizational Domain: not aligned',
    top: 'n1',
    records: [{ name: '_dmarc.a.example.n1', type: 'TXT', data: ['v=DMARC1; p=reject'] }],
    from: 'a.example.n1',
    spf: { result: 'fail', domain: 'a.example.n1' },
    dkim: [{ result: 'pass', domain: 'b.example.n1' }],
    expected: { result: 'fail', policy: 'reject', dkim_aligned: false },
  },
  {
    title: 'a public suffix domain record (psd=y) gives the policy and puts the Organizational Domain one label below it',
    top: 'n2',
    records: [{ name: '_dmarc.n2', type: 'TXT', data: ['v=DMARC1; p=quarantine; psd=y'] }],
    from: 'mail.shop.n2',
    spf: { result: 'pass', domain: 'bounce.shop.n2' },
    dkim: [],
    expected: { result: 'pass', policy: 'quarantine', policy_domain: 'n2', spf_aligned: true },
  },
  {
    title: 'np applies to a subdomain that does not exist, sp to one that does',
    top: 'n3',
    records: [
      { name: '_dmarc.example.n3', type: 'TXT', data: ['v=DMARC1; p=none; sp=quarantine; np=reject'] },
      { name: 'real.example.n3', type: 'A', data: '192.0.2.1' },
    ],
    from: 'ghost.example.n3',
    spf: { result: 'fail', domain: 'ghost.example.n3' },
    dkim: [],
    expected: { result: 'fail', policy: 'reject', policy_domain: 'example.n3' },
  },
  {
    title: 't=y applies one level below',
    top: 'n4',
    records: [{ name: '_dmarc.example.n4', type: 'TXT', data: ['v=DMARC1; p=reject; t=y'] }],
    from: 'example.n4',
    spf: { result: 'fail', domain: 'example.n4' },
    dkim: [],
    expected: { result: 'fail', policy: 'quarantine' },
  },
  {
    title: 'an invalid p with a report address reads as p=none',
    top: 'n5',
    records: [{ name: '_dmarc.example.n5', type: 'TXT', data: ['v=DMARC1; p=block; rua=mailto:d@example.n5'] }],
    from: 'example.n5',
    spf: { result: 'fail', domain: 'example.n5' },
    dkim: [],
    expected: { result: 'fail', policy: 'none' },
  },
  {
    title: 'two records at the From domain are discarded and the walk goes on to the parent',
    top: 'n6',
    records: [
      { name: '_dmarc.a.example.n6', type: 'TXT', data: ['v=DMARC1; p=none'] },
      { name: '_dmarc.a.example.n6', type: 'TXT', data: ['v=DMARC1; p=reject'] },
      { name: '_dmarc.example.n6', type: 'TXT', data: ['v=DMARC1; p=quarantine'] },
    ],
    from: 'a.example.n6',
    spf: { result: 'fail', domain: 'a.example.n6' },
    dkim: [],
    expected: { result: 'fail', policy: 'quarantine', policy_domain: 'example.n6' },
  },
  {
    title: 'a domain of nine labels walks straight to its last seven, past the eight-label parent',
    top: 'n7',
    records: [
      { name: '_dmarc.b.c.d.e.f.g.example.n7', type: 'TXT', data: ['v=DMARC1; p=reject'] },
      { name: '_dmarc.c.d.e.f.g.example.n7', type: 'TXT', data: ['v=DMARC1; p=none'] },
    ],
    from: 'a.b.c.d.e.f.g.example.n7',
    spf: { result: 'pass', domain: 'other.example.n7' },
    dkim: [],
    expected: { result: 'fail', policy: 'none', policy_domain: 'c.d.e.f.g.example.n7', spf_aligned: false },
  },
  {
    title: 'relaxed alignment walks for at most ten identifiers of one message; past them the verdict is open (temperror)',
    top: 'n8',
    records: [
      { name: '_dmarc.example.n8', type: 'TXT', data: ['v=DMARC1; p=reject'] },
      ...Array.from({ length: 12 }, (_, n) => ({ name: `_dmarc.s${n}.example.n8`, type: 'TXT' as const, data: ['v=DMARC1; p=none; psd=n'] })),
    ],
    from: 'a.example.n8',
    spf: { result: 'fail', domain: 'a.example.n8' },
    dkim: Array.from({ length: 12 }, (_, n) => ({ result: 'pass' as const, domain: `s${n}.example.n8` })),
    expected: { result: 'temperror', dkim_aligned: false },
  },
];

let server: DnsTestServer;
let ctx: EngineContext;
let resolver: Resolver;

beforeAll(async () => {
  server = await startDnsServer({ records: [...CASES, ...NAMED].flatMap((each) => each.records) });
  ctx = createEngineContext({ resolvers: [parseResolverAddress(server.address)], timeoutMs: 2000, dnsRetries: 1 });
  resolver = new Resolver({ timeout: 2000, tries: 2 });
  resolver.setServers([server.address]);
});

afterAll(async () => {
  await ctx.close();
  await server.close();
});

async function netintelVerdict(each: Case): Promise<DmarcVerdict> {
  return dmarcVerdict(createMailDns(ctx), each.from, { result: each.spf.result, domain: each.spf.domain }, { result: each.dkim.some((s) => s.result === 'pass') ? 'pass' : each.dkim.length > 0 ? 'fail' : 'none', signatures: each.dkim });
}

/** mailauth's verdict in netintel's terms. */
async function mailauthVerdict(each: Case): Promise<Partial<DmarcVerdict>> {
  const answer = await verifyDmarc({
    headerFrom: `someone@${each.from}`,
    spfDomains: each.spf.result === 'pass' ? [each.spf.domain] : [],
    dkimDomains: each.dkim.filter((s) => s.result === 'pass').map((s) => ({ domain: s.domain })),
    resolver: (name, type) => resolver.resolve(name, type as 'TXT'),
  });
  if (answer === false) throw new Error('mailauth gave no verdict');
  const result = answer.status.result;
  if (result === 'none' || result === 'temperror') return { result: result as DmarcVerdict['result'] };
  return {
    result: result as DmarcVerdict['result'],
    policy: (answer.policy ?? null) as DmarcVerdict['policy'],
    policy_domain: answer.policyDomain ?? null,
    spf_aligned: answer.alignment?.spf.result !== undefined,
    dkim_aligned: answer.alignment?.dkim.result !== undefined,
  };
}

function comparable(verdict: DmarcVerdict, like: Partial<DmarcVerdict>): Partial<DmarcVerdict> {
  return Object.fromEntries(Object.keys(like).map((key) => [key, verdict[key as keyof DmarcVerdict]]));
}

describe('DMARC verdicts agree with mailauth 7 (RFC 9989)', () => {
  it.each(NAMED)('$title', async (each) => {
    const ours = await netintelVerdict(each);
    expect(comparable(ours, each.expected)).toEqual(each.expected);
    const theirs = await mailauthVerdict(each);
    expect(comparable(ours, theirs)).toEqual(theirs);
  });

  it(`agrees on ${CASES.length} generated zones and identities`, async () => {
    const disagreements: string[] = [];
    const results = new Map<string, number>();
    for (const each of CASES) {
      const [ours, theirs] = await Promise.all([netintelVerdict(each), mailauthVerdict(each)]);
      results.set(ours.result, (results.get(ours.result) ?? 0) + 1);
      const mine = comparable(ours, theirs);
      if (JSON.stringify(mine) !== JSON.stringify(theirs)) {
        disagreements.push(`${each.from}: netintel ${JSON.stringify(mine)} mailauth ${JSON.stringify(theirs)}\n  zone ${JSON.stringify(each.records.map((r) => `${r.name} ${r.type} ${String(r.data)}`))}\n  spf ${JSON.stringify(each.spf)} dkim ${JSON.stringify(each.dkim)}`);
      }
    }
    expect(disagreements.slice(0, 5).join('\n')).toBe('');
    // The generator reaches every verdict, so the agreement is about something.
    for (const result of ['pass', 'fail', 'none']) expect(results.get(result) ?? 0, result).toBeGreaterThan(20);
  });

  it('checkDmarc reports the policy, policy domain and Organizational Domain mailauth finds', async () => {
    for (const each of CASES.slice(0, 150)) {
      const [report, theirs] = await Promise.all([
        checkDmarc(ctx, each.from),
        verifyDmarc({ headerFrom: `someone@${each.from}`, spfDomains: [], dkimDomains: [], resolver: (name, type) => resolver.resolve(name, type as 'TXT') }),
      ]);
      if (theirs === false) throw new Error('mailauth gave no verdict');
      expect(report.organizational_domain, each.from).toBe((theirs as { domain?: string }).domain);
      if (theirs.status.result === 'fail') {
        expect([report.policy, report.policy_domain], each.from).toEqual([theirs.policy, theirs.policyDomain]);
      } else {
        expect(theirs.status.result, each.from).toBe('none');
        // none: no record applies, or the one found gets no DMARC processing
        expect(report.policy, each.from).toBeNull();
      }
    }
  });
});
