/**
 * Which addresses are special (not globally reachable), against Python's
 * ipaddress module (`not is_global`): the first, last and neighbouring
 * addresses of every block either side knows, and random ones. Every
 * disagreement must be one documented below, with the registry entry that
 * decides it (IANA's special-purpose registries, "Globally Reachable");
 * Python before 3.13 (gh-113171) reads several blocks differently.
 */
import { describe, expect, it } from 'vitest';
import { parseIpAddress } from '../../src/engine/address/ip-address.js';
import { specialPurposeOf } from '../../src/engine/address/special-ranges.js';
import { findPython, runPythonJson } from './python-ipaddress.js';

const python = findPython();
if (!python) console.warn('SKIPPED: python3 with ipaddress is not installed (apt-get install python3)');

/** Blocks whose edges are probed: netintel's, Python's, and IANA's. */
const BLOCKS = [
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24', '192.0.0.8/32', '192.0.0.9/32',
  '192.0.0.10/32', '192.0.0.170/31', '192.0.2.0/24', '192.31.196.0/24', '192.52.193.0/24', '192.88.99.0/24', '192.168.0.0/16', '192.175.48.0/24',
  '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '224.0.0.0/4', '240.0.0.0/4', '255.255.255.255/32',
  '::/128', '::1/128', '::ffff:0:0/96', '64:ff9b::/96', '64:ff9b:1::/48', '100::/64', '2001::/23', '2001::/32', '2001:1::1/128', '2001:1::2/128',
  '2001:1::3/128', '2001:2::/48', '2001:3::/32', '2001:4:112::/48', '2001:10::/28', '2001:20::/28', '2001:30::/28', '2001:db8::/32', '2002::/16',
  '3fff::/20', '5f00::/16', 'fc00::/7', 'fe80::/10', 'fec0::/10', 'ff00::/8', '2000::/3', '4000::/2', '8000::/1',
];

/**
 * Documented differences: netintel follows the IANA registries' "Globally
 * Reachable" column (and the IPv6 address-space registry's "Reserved by
 * IETF"); the Python named reads them otherwise. `ours` is what netintel
 * says of an address of the block where the two disagree.
 */
const DIFFERENCES: ReadonlyArray<{ block: string; ours: 'special' | 'public'; why: string }> = [
  { block: '192.0.0.0/24', ours: 'special', why: 'IANA: not globally reachable (but .9 and .10); Python < 3.13 calls the block global' },
  { block: '192.88.99.0/24', ours: 'public', why: 'IANA: 6to4 relay anycast, deprecated (RFC 7526) yet still announced: public here; some Pythons list it as private' },
  { block: '224.0.0.0/4', ours: 'special', why: 'multicast is no unicast host: special here; Python calls IPv4 multicast global' },
  { block: '255.255.255.255/32', ours: 'special', why: 'limited broadcast: special here; Python < 3.13 calls it global' },
  { block: '64:ff9b::/96', ours: 'special', why: 'NAT64 well-known prefix: netintel names the prefix (docs/commands/ip.md) rather than look up the IPv4 address inside; IANA and Python: global' },
  { block: '64:ff9b:1::/48', ours: 'special', why: 'IANA: not globally reachable (RFC 8215); Python < 3.13 calls it global' },
  { block: '2001::/32', ours: 'public', why: 'Teredo (RFC 4380): IANA marks it N/A; public here, as 6to4 is (its addresses embed a public server and client); Python calls it private' },
  ...['2001:1::1/128', '2001:1::2/128', '2001:1::3/128', '2001:3::/32', '2001:4:112::/48', '2001:20::/28', '2001:30::/28'].map((block) => ({
    block,
    ours: 'public' as const,
    why: 'IANA: globally reachable inside 2001::/23 (PCP/TURN/DNS-SD anycast, AMT, AS112, ORCHIDv2, drone remote ID); Python < 3.13 calls it private',
  })),
  { block: '2002::/16', ours: 'public', why: '6to4 (RFC 3056): globally routed, each prefix the IPv4 address of its owner (IANA: N/A); Python < 3.13 lists it as private' },
  { block: '3fff::/20', ours: 'special', why: 'IANA: documentation (RFC 9637); Python < 3.13 calls it global' },
  { block: '5f00::/16', ours: 'special', why: 'IANA: SRv6 SIDs (RFC 9602), not globally reachable; Python < 3.13 calls it global' },
  { block: 'ff00::/8', ours: 'special', why: 'multicast is no unicast host: special here; Python calls some multicast scopes global' },
  { block: '::/3', ours: 'special', why: 'IANA IPv6 address space: "Reserved by IETF" outside 2000::/3; Python calls much of it global (its is_reserved says otherwise)' },
  { block: '4000::/2', ours: 'special', why: 'as ::/3' },
  { block: '8000::/1', ours: 'special', why: 'as ::/3 (outside fc00::/7, fe80::/10, fec0::/10 and ff00::/8)' },
];

function probes(): string[] {
  const script = `
import ipaddress, json, random, sys
random.seed(5782)
out = []
for block in json.load(sys.stdin):
    net = ipaddress.ip_network(block)
    for a in (int(net.network_address), int(net.broadcast_address)):
        for d in (-1, 0, 1):
            v = a + d
            if 0 <= v < 2 ** net.max_prefixlen:
                out.append(str(ipaddress.ip_address(v) if net.version == 4 else ipaddress.IPv6Address(v)))
    for _ in range(3):
        out.append(str(net.network_address + random.randrange(net.num_addresses)))
for _ in range(300):
    out.append(str(ipaddress.IPv4Address(random.getrandbits(32))))
    out.append(str(ipaddress.IPv6Address(random.getrandbits(128))))
json.dump(sorted(set(out)), sys.stdout)
`;
  return runPythonJson<string[]>(python!, script, BLOCKS);
}

describe.skipIf(!python)('special-purpose addresses against Python ipaddress', () => {
  it('agrees on every address but the documented differences', () => {
    const addresses = probes();
    const verdicts = runPythonJson<{ version: string; global: boolean[] }>(
      python!,
      'import ipaddress, json, sys\nxs = json.load(sys.stdin)\njson.dump({"version": sys.version.split()[0], "global": [ipaddress.ip_address(x).is_global for x in xs]}, sys.stdout)',
      addresses,
    );
    const documented = DIFFERENCES.map((difference) => ({ ...difference, net: parseNet(difference.block) }));
    const unexplained: string[] = [];
    const explained = new Map<string, number>();
    addresses.forEach((text, index) => {
      const address = parseIpAddress(text);
      // Python reads an IPv4-mapped address as IPv6 (3.11) or as its IPv4 address (3.13); netintel as its IPv4 address.
      if (text.includes(':') && address.version === 4) return;
      const ours = specialPurposeOf(address) === null;
      const theirs = verdicts.global[index]!;
      if (ours === theirs) return;
      const reason = documented.find((difference) => inNet(address.bytes, difference.net) && (difference.ours === 'public') === ours);
      if (reason) explained.set(reason.block, (explained.get(reason.block) ?? 0) + 1);
      else unexplained.push(`${text}: netintel ${ours ? 'public' : specialPurposeOf(address)}, Python ${verdicts.version} is_global=${theirs}`);
    });
    for (const [block, count] of explained) console.info(`documented difference ${block} (${count}): ${DIFFERENCES.find((item) => item.block === block)!.why}`);
    expect(unexplained).toEqual([]);
    expect(addresses.length).toBeGreaterThan(900);
  });
});

function parseNet(cidr: string): { bytes: Uint8Array; bits: number } {
  const [base, bits] = cidr.split('/') as [string, string];
  return { bytes: parseIpAddress(base).bytes, bits: Number(bits) };
}

function inNet(bytes: Uint8Array, net: { bytes: Uint8Array; bits: number }): boolean {
  if (bytes.length !== net.bytes.length) return false;
  for (let bit = 0; bit < net.bits; bit++) {
    const mask = 0x80 >> bit % 8;
    if ((bytes[bit >> 3]! & mask) !== (net.bytes[bit >> 3]! & mask)) return false;
  }
  return true;
}
