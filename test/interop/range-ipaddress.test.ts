/**
 * `netintel range` against Python's `ipaddress` module on seeded random
 * CIDR blocks and a-b ranges of both families, edges included: first, last,
 * count, the CIDR list (`summarize_address_range`, `collapse_addresses`),
 * and a block's netmask, hostmask, broadcast and IPv4 hosts. One Python
 * process answers the whole batch (JSON in, JSON out); the command reads
 * the same batch from stdin. Needs python3 (Debian package python3).
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { seededRandom } from '../support/seeded-random.js';
import { findPython, runPythonJson } from './python-ipaddress.js';

const PYTHON = findPython();
if (PYTHON === null) console.warn('SKIPPING test/interop/range-ipaddress.test.ts: no python3 with the ipaddress module (Debian package python3)');

/**
 * Disagreements that are accepted, each as the exact line the comparison
 * prints, with the reason. Empty: every case agrees.
 */
const KNOWN_DISAGREEMENTS: ReadonlyArray<{ line: string; why: string }> = [];

const PYTHON_SCRIPT = String.raw`
import ipaddress, json, sys

def text(a):
    # Python 3.13 writes an IPv4-mapped address with a dotted quad (::ffff:192.0.2.1), earlier
    # versions in hex groups (::ffff:c000:201), as netintel does: one text whatever the version.
    if a.version == 6 and a.ipv4_mapped is not None:
        n = int(a) & 0xFFFFFFFF
        return '::ffff:%x:%x' % (n >> 16, n & 0xFFFF)
    return str(a)

def block(n):
    return '%s/%d' % (text(n.network_address), n.prefixlen)

def describe(case):
    try:
        if '/' in case:
            n = ipaddress.ip_network(case, strict=False)
            first, last = n.network_address, n.broadcast_address
            blocks = list(ipaddress.collapse_addresses([n]))
            network = {'cidr': block(n), 'prefix_length': n.prefixlen, 'netmask': text(n.netmask),
                       'hostmask': text(n.hostmask), 'broadcast_address': text(n.broadcast_address)}
            if n.version == 4 and n.num_addresses <= 4096:
                hosts = list(n.hosts())
                network.update(hosts=str(len(hosts)), first_host=text(hosts[0]), last_host=text(hosts[-1]))
            elif n.version == 4:
                network.update(first_host=text(next(iter(n.hosts()))))
        else:
            a, b = (ipaddress.ip_address(part.strip()) for part in case.split('-'))
            blocks = list(ipaddress.summarize_address_range(a, b))
            first, last, network = a, b, None
        return {'version': first.version, 'first': text(first), 'last': text(last),
                'count': str(sum(x.num_addresses for x in blocks)), 'cidrs': [block(x) for x in blocks], 'network': network}
    except (ValueError, TypeError) as error:
        return {'error': str(error)}

json.dump({'version': sys.version.split()[0], 'answers': [describe(case) for case in json.load(sys.stdin)]}, sys.stdout)
`;

interface PythonNetwork {
  cidr: string;
  prefix_length: number;
  netmask: string;
  hostmask: string;
  broadcast_address: string;
  hosts?: string;
  first_host?: string;
  last_host?: string;
}

type PythonAnswer = { error: string } | { version: 4 | 6; first: string; last: string; count: string; cidrs: string[]; network: PythonNetwork | null };

interface RangeRow {
  version?: 4 | 6;
  first?: string;
  last?: string;
  count?: string;
  cidrs?: string[];
  network?: (Omit<PythonNetwork, 'broadcast_address'> & { broadcast: string | null }) | null;
  error?: { code: string };
}

const MAX = { 4: (1n << 32n) - 1n, 6: (1n << 128n) - 1n } as const;

/** The seeded cases: random CIDRs and a-b ranges of both families, biased to edges, then fixed edges and invalid ranges. */
function rangeCases(seed: number, perKind: number): string[] {
  const random = seededRandom(seed);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const bits = (n: number): bigint => {
    let value = 0n;
    for (let i = 0; i < n; i += 16) value = (value << 16n) | BigInt(int(65536));
    return value & ((1n << BigInt(n)) - 1n);
  };
  const v4Text = (value: bigint) => [24n, 16n, 8n, 0n].map((shift) => (value >> shift) & 255n).join('.');
  const v6Text = (value: bigint): string => {
    const groups = [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((shift) => Number((value >> shift) & 0xffffn));
    const form = int(5);
    // Every text form the parsers take: full, zero-padded, upper case, :: for the longest zero run, a dotted tail.
    if (form === 0) return groups.map((group) => group.toString(16)).join(':');
    if (form === 1) return groups.map((group) => group.toString(16).padStart(4, '0')).join(':');
    if (form === 2) return compressed(groups).toUpperCase();
    if (form === 3) return `${groups.slice(0, 6).map((group) => group.toString(16)).join(':')}:${v4Text(value & 0xffffffffn)}`;
    return compressed(groups);
  };
  const address = (version: 4 | 6): bigint => {
    const width = version === 4 ? 32 : 128;
    const max = MAX[version];
    // Edges of the space and of large blocks: all zeros, all ones, around a power of two, the IPv4-mapped block.
    switch (int(8)) {
      case 0:
        return pick([0n, 1n, max, max - 1n]);
      case 1: {
        const at = 1n << BigInt(int(width));
        return (at + BigInt(int(5)) - 2n) & max;
      }
      case 2:
        return version === 6 ? (0xffffn << 32n) | bits(32) : bits(32);
      default:
        return bits(width);
    }
  };
  const prefix = (version: 4 | 6) => {
    const width = version === 4 ? 32 : 128;
    return random() < 0.4 ? pick(version === 4 ? [0, 1, 7, 8, 15, 16, 23, 24, 30, 31, 32] : [0, 1, 32, 48, 63, 64, 95, 96, 120, 126, 127, 128]) : int(width + 1);
  };
  const text = (version: 4 | 6, value: bigint) => (version === 4 ? v4Text(value) : v6Text(value));
  const cases: string[] = [];
  for (const version of [4, 6] as const) {
    for (let i = 0; i < perKind; i++) cases.push(`${text(version, address(version))}/${prefix(version)}`);
    for (let i = 0; i < perKind; i++) {
      const first = address(version);
      const width = version === 4 ? 32 : 128;
      const shift = BigInt(int(width + 1));
      // A length of any magnitude, often a power of two give or take one: blocks spanning alignment boundaries.
      const length = pick([0n, 1n, 2n, (1n << shift) - 1n, 1n << shift, (1n << shift) + 1n, bits(int(width) + 1)]);
      const last = first + length > MAX[version] ? MAX[version] : first + length;
      cases.push(`${text(version, first)}${pick(['-', ' - ', '-'])}${text(version, last)}`);
    }
  }
  cases.push(
    '0.0.0.0/0', '255.255.255.255/32', '255.255.255.254/31', '0.0.0.0/32', '10.0.0.0/8', '192.0.2.77/24',
    '0.0.0.0-255.255.255.255', '127.255.255.255-128.0.0.0', '9.255.255.255-10.0.0.0', '0.0.0.0-0.0.0.0', '255.255.255.255-255.255.255.255',
    '::/0', '::/128', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128', '::ffff:0:0/96', '::ffff:192.0.2.1/120', '2001:db8::/32', 'fe80::1/64',
    '::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '::fffe:ffff:ffff-::ffff:0:1', '::ffff:0.0.0.0-::ffff:255.255.255.255', '2001:db8::ffff-2001:db8::1:0',
    '::1-::1', '7fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff-8000::',
  );
  // Not ranges, to both: start after end, mixed families, lengths out of bounds, malformed addresses.
  cases.push('9.9.9.9-1.1.1.1', '2001:db8::2-2001:db8::1', '1.2.3.4-2001:db8::1', '1.2.3.4/33', '2001:db8::/129', '256.0.0.0/8', '1.2.3/24', '::g/64', '01.2.3.4/8', '2001:db8:::1/64', '1.2.3.4/-1', '1.2.3.4-');
  return cases;
}

function compressed(groups: readonly number[]): string {
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [best, bestLength] = [i, j - i];
  }
  const hex = (from: number, to: number) => groups.slice(from, to).map((group) => group.toString(16)).join(':');
  return best === -1 ? hex(0, 8) : `${hex(0, best)}::${hex(best + bestLength, 8)}`;
}

/** What netintel and Python say differently of one case, one line each. */
function differences(input: string, ours: RangeRow, theirs: PythonAnswer): string[] {
  if ('error' in theirs || ours.error) {
    if ('error' in theirs && ours.error) return [];
    return [`${input}: ${ours.error ? `netintel rejects it (${ours.error.code})` : 'netintel describes it'}, Python ${'error' in theirs ? `rejects it (${theirs.error})` : 'describes it'}`];
  }
  const found: string[] = [];
  const compare = (field: string, mine: unknown, python: unknown) => {
    if (JSON.stringify(mine) !== JSON.stringify(python)) found.push(`${input}: ${field} netintel ${JSON.stringify(mine)} Python ${JSON.stringify(python)}`);
  };
  compare('version', ours.version, theirs.version);
  compare('first', ours.first, theirs.first);
  compare('last', ours.last, theirs.last);
  compare('count', ours.count, theirs.count);
  compare('cidrs', ours.cidrs, theirs.cidrs);
  const mine = ours.network ?? null;
  const python = theirs.network;
  if (mine === null || python === null) {
    compare('network', mine === null ? null : 'a block', python === null ? null : 'a block');
    return found;
  }
  compare('network.cidr', mine.cidr, python.cidr);
  compare('network.prefix_length', mine.prefix_length, python.prefix_length);
  compare('network.netmask', mine.netmask, python.netmask);
  compare('network.hostmask', mine.hostmask, python.hostmask);
  // Python's broadcast_address is a block's last address whatever the block. A broadcast address
  // exists in an IPv4 block of /30 or larger only: a /31 is two hosts (RFC 3021), a /32 one, and
  // IPv6 has no broadcast (RFC 4291 §2), so there netintel's is null.
  compare('network.broadcast', mine.broadcast, theirs.version === 4 && python.prefix_length <= 30 ? python.broadcast_address : null);
  // IPv4 hosts as Python's hosts() lists them (RFC 3021 /31 and /32 included); IPv6 hosts() leaves out
  // the Subnet-Router anycast address (RFC 4291 §2.6.1), where netintel counts every address: not compared.
  if (python.hosts !== undefined) compare('network.hosts', mine.hosts, python.hosts);
  if (python.first_host !== undefined) compare('network.first_host', mine.first_host, python.first_host);
  if (python.last_host !== undefined) compare('network.last_host', mine.last_host, python.last_host);
  return found;
}

describe('netintel range against Python ipaddress', () => {
  it.skipIf(PYTHON === null)('agrees on every field of 1,300 random and edge CIDRs and a-b ranges of both families', async () => {
    const cases = rangeCases(20261129, 320);
    const { version, answers } = runPythonJson<{ version: string; answers: PythonAnswer[] }>(PYTHON!, PYTHON_SCRIPT, cases);
    const run = await runCli(['range', '-f', 'ndjson'], { stdin: `${cases.join('\n')}\n` });
    const rows = run.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as RangeRow);
    expect(rows).toHaveLength(cases.length);
    expect(answers).toHaveLength(cases.length);

    const lines = cases.flatMap((input, i) => differences(input, rows[i]!, answers[i]!));
    const known = new Set(KNOWN_DISAGREEMENTS.map((entry) => entry.line));
    const unexpected = lines.filter((line) => !known.has(line));
    const rejected = answers.filter((answer) => 'error' in answer).length;
    const blocks = cases.filter((input) => input.includes('/')).length;
    console.log(
      `range vs Python ${version} ipaddress: ${cases.length} cases (${blocks} CIDRs, ${cases.length - blocks} a-b ranges; ${rejected} not ranges to Python), ` +
        `${lines.length} disagreements (${lines.length - unexpected.length} documented)${lines.length > 0 ? `:\n  ${lines.join('\n  ')}` : ''}`,
    );
    expect(cases.length).toBeGreaterThanOrEqual(1000);
    expect(unexpected).toEqual([]);
    // Exit 7: the invalid cases are error rows, the rest described.
    expect(run.code).toBe(7);
  }, 60_000);
});
