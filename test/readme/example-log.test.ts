/**
 * examples/access.log, the sample log of the README's recipes: what its
 * script makes, in the combined log format, with only documentation
 * addresses and the public resolvers the script names; and left out of
 * the npm package (the recipes run from a clone; an installed netintel
 * reads its user's own logs).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseIpAddress } from '../../src/engine/address/ip-address.js';
import { REPO_ROOT } from '../support/cli.js';
import { npmPack } from '../support/npm-pack.js';

const LOG = join(REPO_ROOT, 'examples', 'access.log');
const COMBINED = /^(\S+) - - \[\d\d\/[A-Z][a-z]{2}\/\d{4}:\d\d:\d\d:\d\d \+0000\] "GET \S+ HTTP\/1\.1" \d{3} \d+ "[^"]*" "[^"]*"$/;
const RESOLVERS = new Set([
  '8.8.8.8', '8.8.4.4', '1.1.1.1', '1.0.0.1', '9.9.9.9', '149.112.112.112',
  '208.67.222.222', '94.140.14.14', '77.88.8.8', '185.228.168.9',
  '2001:4860:4860::8888', '2606:4700:4700::1111', '2620:fe::fe',
]);

/** RFC 5737's three blocks and RFC 3849's 2001:db8::/32. */
function isDocumentation(address: string): boolean {
  if (/^(192\.0\.2|198\.51\.100|203\.0\.113)\.\d{1,3}$/.test(address)) return true;
  return /^2001:db8:/i.test(address);
}

describe('examples/access.log', () => {
  it('is what scripts/make-example-log.mjs makes', () => {
    const made = execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', 'make-example-log.mjs'), '--stdout'], { encoding: 'utf8' });
    expect(readFileSync(LOG, 'utf8')).toBe(made);
  });

  it('holds a few hundred combined-format lines from documentation addresses and public resolvers alone', () => {
    const lines = readFileSync(LOG, 'utf8').trimEnd().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(200);
    expect(lines.length).toBeLessThanOrEqual(500);
    const addresses = lines.map((line) => {
      const match = COMBINED.exec(line);
      expect(match, line).not.toBeNull();
      return match![1]!;
    });
    for (const address of addresses) {
      expect(() => parseIpAddress(address), address).not.toThrow();
      expect(isDocumentation(address) || RESOLVERS.has(address), address).toBe(true);
    }
    // Both kinds, and both versions, so that a summary of it has something in every table.
    expect(addresses.some((address) => RESOLVERS.has(address))).toBe(true);
    expect(addresses.some(isDocumentation)).toBe(true);
    expect(addresses.some((address) => address.includes(':'))).toBe(true);
  });

  it('is not in the npm package', () => {
    const paths = npmPack(['--dry-run']).files.map((file) => file.path);
    expect(paths).toContain('README.md');
    expect(paths.filter((path) => path.startsWith('examples/') || path.startsWith('scripts/'))).toEqual([]);
  }, 60_000);
});
