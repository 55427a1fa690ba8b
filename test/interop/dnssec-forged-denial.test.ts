/**
 * Differential test of denial proofs replayed by a man in the middle: a
 * small signed tree from its own root, served by NSD behind a forging proxy
 * (test/support/forging-proxy.ts) that answers some questions about a
 * signed child zone with the parent's genuine, signed NSEC or NSEC3 at the
 * delegation, or at a DNAME. Such records prove nothing at the child's apex
 * but its DS, and nothing below the cut (RFC 6840 §4.1, RFC 5155 §8.3):
 * netintel must call every forged answer bogus, as BIND's delv and Unbound
 * do, and still agree with them on the genuine answers beside them (the DS
 * at the delegations, NSEC and NSEC3 NXDOMAIN and NODATA, an unsigned
 * child). Needs nsd, bind9-utils, delv (bind9-dnsutils) and unbound;
 * skipped, with a warning, when one is missing.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { nsec3Owner, signedRrset, startForgingProxy, type ForgedAnswer, type ForgingProxy } from '../support/forging-proxy.js';
import { DNSSEC_TOOLS, delvVerdict, missingDnssecTools, servesRoot, type ValidationStatus } from '../support/delv.js';
import { startNsd, type NsdZone, type RunningNsd } from '../support/nsd.js';
import { startUnbound, type RunningUnbound } from '../support/unbound.js';

const run = promisify(execFile);
const missing = missingDnssecTools('test/interop/dnssec-forged-denial.test.ts');

/**
 * The tree: the root (NSEC) delegates p. (NSEC3, no salt, 0 iterations) and
 * q. (NSEC); each has a DNAME at d. to its signed child c., and an unsigned child u.
 */
interface PlannedZone {
  zone: string;
  body: string;
  /** dnssec-signzone's denial flags; null: served unsigned. */
  sign: string[] | null;
  children: string[];
}

const CHILD_BODY = '@ IN MX 10 mx\nwww IN A 192.0.2.51\nmx IN A 192.0.2.52\n';
// d. redirects to the signed child c. (RFC 6672): a signed DNAME and the unsigned CNAME synthesised from it.
const PARENT_BODY = 'www IN A 192.0.2.1\nd IN DNAME c\n';

const PLAN: PlannedZone[] = [
  { zone: 'c.p.', body: CHILD_BODY, sign: [], children: [] },
  { zone: 'c.q.', body: CHILD_BODY, sign: [], children: [] },
  { zone: 'u.p.', body: CHILD_BODY, sign: null, children: [] },
  { zone: 'u.q.', body: CHILD_BODY, sign: null, children: [] },
  { zone: 'p.', body: PARENT_BODY, sign: ['-3', '-', '-H', '0'], children: ['c.p.', 'u.p.'] },
  { zone: 'q.', body: PARENT_BODY, sign: [], children: ['c.q.', 'u.q.'] },
  { zone: '.', body: '', sign: [], children: ['p.', 'q.'] },
];

/** What each forged question gets: the parent's records at the delegation (or DNAME) and the spans they cover. */
function forgeries(signed: ReadonlyMap<string, string>): Map<string, ForgedAnswer> {
  const p = signed.get('p.')!;
  const q = signed.get('q.')!;
  const nsec3 = (names: Array<[string, 'matches' | 'covers']>): string[] => [...new Set(names.map(([name, relation]) => nsec3Owner(p, name, relation)))];
  const denial = (zone: string, text: string, rcode: ForgedAnswer['rcode'], type: 'NSEC' | 'NSEC3', owners: string[]): ForgedAnswer => ({
    rcode,
    authority: [...signedRrset(text, zone, 'SOA'), ...owners.flatMap((owner) => signedRrset(text, owner, type))],
  });
  return new Map([
    ['www.c.p. A', denial('p.', p, 'NXDOMAIN', 'NSEC3', nsec3([['c.p.', 'matches'], ['www.c.p.', 'covers'], ['*.c.p.', 'covers']]))],
    ['c.p. MX', denial('p.', p, 'NOERROR', 'NSEC3', nsec3([['c.p.', 'matches']]))],
    ['c.p. SOA', denial('p.', p, 'NOERROR', 'NSEC3', nsec3([['c.p.', 'matches']]))],
    ['x.d.p. A', denial('p.', p, 'NXDOMAIN', 'NSEC3', nsec3([['d.p.', 'matches'], ['x.d.p.', 'covers'], ['*.d.p.', 'covers']]))],
    ['c.q. MX', denial('q.', q, 'NOERROR', 'NSEC', ['c.q.'])],
    ['c.q. SOA', denial('q.', q, 'NOERROR', 'NSEC', ['c.q.'])],
    ['www.c.q. A', denial('q.', q, 'NXDOMAIN', 'NSEC', ['c.q.'])],
    ['x.d.q. A', denial('q.', q, 'NXDOMAIN', 'NSEC', ['d.q.'])],
  ]);
}

/** The genuine answers, passed through from NSD: what the forged ones must not break. */
const GENUINE: Record<string, ValidationStatus> = {
  'mx.c.p. A': 'secure',
  'c.p. DS': 'secure',
  'u.p. DS': 'secure',
  'www.u.p. A': 'insecure',
  'nx.p. A': 'secure',
  'www.p. MX': 'secure',
  'd.p. MX': 'secure',
  'mx.d.p. A': 'secure',
  'mx.c.q. A': 'secure',
  'c.q. DS': 'secure',
  'u.q. DS': 'secure',
  'www.u.q. A': 'insecure',
  'nx.q. A': 'secure',
  'www.q. MX': 'secure',
  'd.q. MX': 'secure',
  'mx.d.q. A': 'secure',
};

interface SignedTree {
  zones: NsdZone[];
  signed: Map<string, string>;
  /** The DS lines of each signed zone, as dnssec-dsfromkey prints them. */
  ds: Map<string, string>;
  anchorKeyFile: string;
  delvAnchor: string;
  dir: string;
}

async function buildTree(): Promise<SignedTree> {
  const dir = await mkdtemp(join(tmpdir(), 'netintel-forged-denial-'));
  const tool = async (file: string, args: string[]): Promise<string> => (await run(file, args, { maxBuffer: 16 * 1024 * 1024 })).stdout;
  const dsLines = new Map<string, string>();
  const signed = new Map<string, string>();
  const zones: NsdZone[] = [];
  let anchorKeyFile = '';
  for (const plan of PLAN) {
    const label = plan.zone === '.' ? 'root' : plan.zone.slice(0, -1);
    const nsdName = plan.zone === '.' ? '.' : plan.zone.slice(0, -1);
    const delegations = plan.children.map((child) => `${child} IN NS ns.${child}\nns.${child} IN A 127.0.0.1\n${dsLines.get(child) ?? ''}`).join('');
    const text = `$TTL 300\n$ORIGIN ${plan.zone}\n@ IN SOA ns host 1 3600 600 86400 300\n@ IN NS ns\nns IN A 127.0.0.1\n${plan.body}${delegations}`;
    if (plan.sign === null) {
      zones.push({ name: nsdName, text });
      continue;
    }
    const keyDir = join(dir, label);
    await mkdir(keyDir, { recursive: true });
    const keygen = (ksk: boolean): Promise<string> => tool(DNSSEC_TOOLS['dnssec-keygen']!, ['-q', '-K', keyDir, '-a', 'ECDSAP256SHA256', ...(ksk ? ['-f', 'KSK'] : []), '-n', 'ZONE', plan.zone]);
    const ksk = join(keyDir, `${(await keygen(true)).trim()}.key`);
    await keygen(false);
    const unsigned = join(dir, `${label}.unsigned`);
    await writeFile(unsigned, text);
    await tool(DNSSEC_TOOLS['dnssec-signzone']!, ['-q', '-K', keyDir, '-d', keyDir, '-S', '-O', 'full', ...plan.sign, '-o', plan.zone, '-f', `${unsigned}.signed`, unsigned]);
    const zone = await readFile(`${unsigned}.signed`, 'utf8');
    signed.set(plan.zone, zone);
    zones.push({ name: nsdName, text: zone });
    dsLines.set(plan.zone, await tool(DNSSEC_TOOLS['dnssec-dsfromkey']!, ['-2', ksk]));
    if (plan.zone === '.') anchorKeyFile = await readFile(ksk, 'utf8');
  }
  const keyLine = anchorKeyFile.split('\n').find((line) => /\sDNSKEY\s/.test(line) && !line.startsWith(';'))!;
  const [, , , flags, protocol, algorithm, ...key] = keyLine.trim().split(/\s+/);
  const delvAnchor = `trust-anchors {\n  "." static-key ${flags} ${protocol} ${algorithm} "${key.join('')}";\n};\n`;
  return { zones, signed, ds: dsLines, anchorKeyFile, delvAnchor, dir };
}

describe.skipIf(missing.length > 0)('denial proofs replayed from the parent zone: netintel, delv and Unbound', () => {
  let tree: SignedTree;
  let nsd: RunningNsd;
  let proxy: ForgingProxy;
  let unbound: RunningUnbound;
  let anchorFile: string;
  let delvAnchorFile: string;
  let forged: Map<string, ForgedAnswer>;

  beforeAll(async () => {
    tree = await buildTree();
    nsd = await startNsd(DNSSEC_TOOLS.nsd!, tree.zones, servesRoot);
    forged = forgeries(tree.signed);
    proxy = await startForgingProxy(nsd.port, forged);
    anchorFile = join(tree.dir, 'root.key');
    delvAnchorFile = join(tree.dir, 'delv-anchor.conf');
    await Promise.all([writeFile(anchorFile, tree.anchorKeyFile), writeFile(delvAnchorFile, tree.delvAnchor)]);
    unbound = await startUnbound(DNSSEC_TOOLS.unbound!, { upstreamPort: proxy.port, trustAnchor: tree.anchorKeyFile });
  }, 120_000);

  afterAll(async () => {
    await unbound?.stop();
    await proxy?.close();
    await nsd?.stop();
    if (tree) await rm(tree.dir, { recursive: true, force: true });
  });

  /** netintel's verdicts, one CLI run per type. */
  async function netintelVerdicts(questions: readonly string[]): Promise<Map<string, { verdict: string; rcode: string | undefined }>> {
    const verdicts = new Map<string, { verdict: string; rcode: string | undefined }>();
    for (const type of new Set(questions.map((question) => question.split(' ')[1]!))) {
      const names = questions.filter((question) => question.endsWith(` ${type}`)).map((question) => question.split(' ')[0]!.replace(/\.$/, ''));
      const result = await runCli(['dns', ...names, '--type', type, '--dnssec', '--trust-anchor', anchorFile, '--resolver', proxy.address, '-f', 'ndjson']);
      for (const line of result.stdout.trim().split('\n')) {
        const record = JSON.parse(line) as { domain?: string; type?: string; rcode?: string; dnssec?: { status: ValidationStatus; reason: string | null } };
        if (!record.dnssec) continue;
        verdicts.set(`${record.domain}. ${record.type}`, { verdict: `${record.dnssec.status}${record.dnssec.reason ? `: ${record.dnssec.reason}` : ''}`, rcode: record.rcode });
      }
    }
    return verdicts;
  }

  const delvOf = (question: string): Promise<ValidationStatus> => {
    const [name, type] = question.split(' ') as [string, string];
    return delvVerdict(proxy.port, delvAnchorFile, name, type);
  };


  let rows: Array<{ question: string; rcode: string | undefined; netintel: string; delv: ValidationStatus; unbound: ValidationStatus }> = [];

  beforeAll(async () => {
    const questions = [...forged.keys(), ...Object.keys(GENUINE)];
    const ours = await netintelVerdicts(questions);
    rows = [];
    for (const question of questions) {
      const [name, type] = question.split(' ') as [string, string];
      const mine = ours.get(question);
      rows.push({ question, rcode: mine?.rcode, netintel: mine?.verdict ?? 'no record from the CLI', delv: await delvOf(question), unbound: (await unbound.verdict(name, type)).status });
    }
    console.log(['forged and genuine denials (netintel | delv | unbound):', ...rows.map((row) => `  ${forged.has(row.question) ? 'forged ' : 'genuine'} ${row.question}: ${row.netintel} | ${row.delv} | ${row.unbound}`)].join('\n'));
  }, 300_000);

  it('calls every forged answer bogus, naming the replayed record, as delv and Unbound do', () => {
    const verdicts = rows.filter((row) => forged.has(row.question));
    expect(verdicts).toHaveLength(forged.size);
    for (const row of verdicts) {
      expect(row, row.question).toEqual({
        question: row.question,
        rcode: forged.get(row.question)!.rcode,
        netintel: expect.stringMatching(/^bogus: denial not proven \((the NSEC3? (at|of) \S+ is the parent side of a delegation|the closest encloser \S+ is a (delegation|DNAME)|no NSEC covers the name)/),
        delv: 'bogus',
        unbound: 'bogus',
      });
    }
  });

  it('still proves the genuine answers beside them: DS and no DS at the delegations, NXDOMAIN, NODATA at a DNAME and names redirected by it, the unsigned child', () => {
    const verdicts = rows.filter((row) => row.question in GENUINE).map(({ question, netintel, delv, unbound }) => ({ question, netintel: netintel.split(':')[0], delv, unbound }));
    expect(verdicts).toEqual(Object.entries(GENUINE).map(([question, status]) => ({ question, netintel: status, delv: status, unbound: status })));
  });

  it('shows the chain of the genuine answer with each DS by key tag, algorithm and digest type', async () => {
    const [, , , tag, algorithm, digestType] = tree.ds.get('c.p.')!.trim().split(/\s+/);
    const result = await runCli(['dns', 'mx.c.p', '--dnssec', '--trust-anchor', anchorFile, '--resolver', proxy.address, '-f', 'table']);
    expect(result.stdout).toContain(`c.p. secure; DS ${tag}/${algorithm}/${digestType} from p.;`);
    expect(result.stdout).not.toContain('undefined');
  });
});

