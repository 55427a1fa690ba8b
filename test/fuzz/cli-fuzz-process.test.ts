/**
 * Fuzzing the built CLI as users run it (`node bin/netintel.js`, the bundle
 * and its code cache), a smaller share of cases than the in-process fuzzing
 * (a process start costs tens of milliseconds), over every command. Needs
 * `npm run build` first.
 *
 * Every child loads test/support/loopback-only.cjs (NODE_OPTIONS): a connection outside
 * 127.0.0.1 is refused and named on stderr, which breaks the stderr property.
 * Seeded as the in-process fuzzing (FUZZ_SEED, FUZZ_SCALE).
 */
import fc from 'fast-check';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, spawnCli, tempDir } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { startSmtpTestServer, type SmtpTestServer } from '../support/smtp-servers.js';
import { LOOPBACK_ONLY_MODULE } from '../support/loopback-only.js';
import { closedPort } from '../support/peers.js';
import { brokenProperty, FUZZ_SCALE, FUZZ_SEED, hostileAsn, hostileDomain, hostileGlobalFlags, hostileIp, hostileList, hostilePort, hostileSmtpHost, hostileZones } from './hostile-inputs.js';

const built = existsSync(join(REPO_ROOT, 'dist', 'bundle', 'main.cjs'));

const scratch = tempDir('netintel-fuzz-process-');
let dns: DnsTestServer;
let smtp: SmtpTestServer;
let closed: number;

beforeAll(async () => {
  closed = await closedPort();
  dns = await startDnsServer({
    records: [
      { name: 'fuzz.test', type: 'A', data: '127.0.0.1' },
      { name: 'fuzz.test', type: 'MX', data: { preference: 10, exchange: 'mx.fuzz.test' } },
      { name: 'fuzz.test', type: 'TXT', data: ['v=spf1 ip4:127.0.0.1 -all'] },
      { name: 'mx.fuzz.test', type: 'A', data: '127.0.0.1' },
    ],
  });
  smtp = await startSmtpTestServer({ name: 'mx.fuzz.test' });
});

afterAll(async () => {
  await Promise.all([dns?.close(), smtp?.close()]);
  scratch.remove();
});

const safety = () => ['-t', '800', '--retries', '0'];

interface Case {
  argv: string[];
  stdin?: Buffer;
}

function childEnv(): Record<string, string> {
  return {
    NODE_OPTIONS: `--require ${LOOPBACK_ONLY_MODULE}`,
    NETINTEL_FUZZ_CHILD: '1',
    // Loopback's well-known ports (127.0.0.1:1 in the inputs, :53, :25) go to a port this test closed.
    NETINTEL_TEST_CLOSED_PORT: String(closed),
    NETINTEL_TEST_CLOSED_LOOPBACK_PORTS: 'well-known',
    NETINTEL_RESOLVER: dns.address,
    NETINTEL_TIMEOUT: '800',
    NETINTEL_RETRIES: '0',
    NETINTEL_DB: join(scratch.path, 'keys.db'),
    XDG_DATA_HOME: join(scratch.path, 'data'),
  };
}

function fuzzProcess(name: string, runs: number, cases: () => fc.Arbitrary<Case>): void {
  it.skipIf(!built)(`${name}: ${runs * FUZZ_SCALE} hostile runs of the built CLI keep the contract (seed ${FUZZ_SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(cases(), async ({ argv: generated, stdin }) => {
        // An argument of a process cannot hold NUL (execve's strings end there); stdin can.
        const argv = generated.map((arg) => arg.replaceAll('\0', ''));
        const result = await spawnCli(argv, { env: childEnv(), input: stdin ?? '', timeoutMs: 15_000 });
        const broken = result.signal !== null ? `killed by ${result.signal}` : brokenProperty(argv, result);
        expect(broken, `netintel ${JSON.stringify(argv)}\nexit ${result.code}\nstderr: ${result.stderr.slice(0, 500)}\nstdout: ${result.stdout.slice(0, 300)}`).toBeNull();
      }),
      { seed: FUZZ_SEED, numRuns: runs * FUZZ_SCALE, interruptAfterTimeLimit: 40_000 * FUZZ_SCALE },
    );
  }, 60_000 * FUZZ_SCALE);
}

const targets = (arb: fc.Arbitrary<string>, max = 2) => fc.array(arb, { minLength: 1, maxLength: max });

describe('CLI fuzzing, the built CLI as a process', () => {
  fuzzProcess('ip, asn and vpn', 40, () =>
    fc
      .record({
        command: fc.constantFrom('ip', 'asn', 'vpn'),
        // Plain addresses and AS numbers half the time: the answers the local datasets give.
        targets: fc.oneof(targets(fc.oneof(hostileIp, hostileAsn)), targets(fc.constantFrom('8.8.8.8', '1.1.1.1', '2001:4860:4860::8888', '10.0.0.1', 'AS13335', 'AS0'))),
        flags: fc.oneof(hostileGlobalFlags, fc.constantFrom([], ['-f', 'json'], ['-f', 'csv', '--no-header'], ['--fields', 'constructor'], ['-q'], ['--fields', 'location.city', '-f', 'xml'])),
        safe: fc.boolean(),
      })
      .map(({ command, targets: t, flags, safe }) => ({ argv: [command, ...(safe ? safety() : []), ...flags, ...t] })),
  );

  fuzzProcess('bulk', 20, () =>
    fc.record({ list: hostileList(fc.oneof(hostileIp, hostileAsn)), flags: hostileGlobalFlags }).map(({ list, flags }) => ({ argv: ['bulk', ...safety(), ...flags], stdin: list })),
  );

  fuzzProcess('dns, mx, spf and email', 30, () =>
    fc
      .record({ command: fc.constantFrom('dns', 'mx', 'spf', 'email'), targets: targets(hostileDomain), flags: hostileGlobalFlags })
      .map(({ command, targets: t, flags }) => ({ argv: [command, ...safety(), '--resolver', dns.address, ...(command === 'email' ? ['--no-smtp'] : []), ...flags, ...t] })),
  );

  fuzzProcess('smtp', 15, () =>
    fc
      .record({ host: hostileSmtpHost, port: fc.oneof(fc.constant('SMTP'), hostilePort), flags: hostileGlobalFlags })
      .map(({ host, port, flags }) => ({ argv: ['smtp', ...safety(), '--greeting-timeout', '800', '--port', port === 'SMTP' ? String(smtp.port) : port, ...flags, host] })),
  );

  fuzzProcess('blacklist', 15, () =>
    fc
      .record({ targets: targets(fc.oneof(hostileIp, hostileDomain)), zones: hostileZones, flags: hostileGlobalFlags })
      .map(({ targets: t, zones, flags }) => ({ argv: ['blacklist', ...safety(), '--zones', zones, ...flags, ...t] })),
  );

  fuzzProcess('data status, keys, quota and global flags', 20, () =>
    fc
      .record({
        sub: fc.constantFrom(['data', 'status'], ['keys', 'list'], ['keys', 'revoke', '__proto__'], ['quota', '--server', 'http://127.0.0.1:1'], ['--version'], ['nope'], [], ['data']),
        flags: hostileGlobalFlags,
      })
      .map(({ sub, flags }) => ({ argv: [...flags, ...safety(), ...sub] })),
  );

  it.skipIf(!built)('keeps the contract for a list long enough for the worker threads (table, csv, ndjson)', async () => {
    const lines = ['1.2.3.4\x1b]0;pwned\x07', '\u202eevil', '8.8.8.8', '\xff', '1.2.3.4/33', '::ffff:1.2.3.4', '#c', '10.0.0.1\r', 'AS4294967296', 'AS0'];
    const list = Buffer.from(Array.from({ length: 9000 }, (_, i) => lines[(i * 7) % lines.length]).join('\n'), 'latin1');
    for (const format of ['table', 'csv', 'ndjson']) {
      const argv = ['bulk', '-f', format];
      const result = await spawnCli(argv, { env: childEnv(), input: list, timeoutMs: 30_000 });
      expect(brokenProperty(argv, result), format).toBeNull();
      expect(result.code).toBe(7);
    }
  }, 60_000);

});
