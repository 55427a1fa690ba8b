/**
 * Names the CLI fuzzing found mishandled below the CLI (the engine's entry
 * points and name validation), as fixed cases: each is one `netintel: ...`
 * line and exit 2 (`invalid_input`), never a bug report, an unhandled
 * rejection, or a query for a name that is not one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';

let dns: DnsTestServer;
beforeAll(async () => {
  dns = await startDnsServer({ records: [{ name: 'example.com', type: 'A', data: '127.0.0.1' }] });
});
afterAll(async () => {
  await dns?.close();
});

const local = () => ['--resolver', dns.address, '-t', '800', '--retries', '0'];

describe('names that are not host names', () => {
  for (const argv of [['spf', '.'], ['email', '.', '--no-smtp'], ['email', '.', 'example.com', '--no-smtp']]) {
    it(`netintel ${argv.join(' ')} exits 2 (7 beside a good target) with one line per failure, as a process (no internal error, no unhandled rejection)`, async () => {
      const result = await spawnCli([...argv, ...local()]);
      expect(result.stderr).not.toContain('internal error');
      expect(result.stderr).toMatch(/^(netintel: [^\n]*\n)+$/);
      expect(result.code).toBe(argv.length > 3 ? 7 : 2);
    });
  }

  for (const command of ['spf', 'mx', 'email'] as const) {
    it(`netintel ${command} . exits 2 with one line, in-process`, async () => {
      const result = await runCli([command, '.', ...local(), ...(command === 'email' ? ['--no-smtp'] : [])]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^netintel: [^\n]*\n$/);
    });
  }

  // RFC 3696 §2: a top label is never all-numeric; xn-- labels must be valid Punycode; a zero-width space is refused, not dropped.
  for (const name of ['1e3.0.0.1', 'xn--.com', 'ex\u200bample.com']) {
    for (const command of ['dns', 'mx', 'spf', 'blacklist'] as const) {
      it(`netintel ${command} ${JSON.stringify(name)} exits 2 and asks no resolver`, async () => {
        const before = dns.queries.length;
        const result = await runCli([command, name, ...local()]);
        expect(result.code).toBe(2);
        expect(dns.queries.slice(before).map((query) => query.name)).toEqual([]);
      });
    }
  }
});
