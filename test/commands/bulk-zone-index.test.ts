import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withoutZoneIndex } from '../../src/engine/bulk/zone-index.js';
import { parseCsv } from '../output/parse-csv.js';
import { runCli } from '../support/cli.js';
import { startTestServer, type TestServer } from '../server/harness.js';

describe('withoutZoneIndex', () => {
  it.each([
    ['fe80::1%eth0', 'fe80::1'],
    ['FE80::1%en0', 'FE80::1'],
    ['2001:db8::1%25', '2001:db8::1'],
    ['::ffff:192.0.2.1%lo', '::ffff:192.0.2.1'],
    ['fe80::1', 'fe80::1'],
    ['192.0.2.1%eth0', '192.0.2.1%eth0'],
    ['fe80::1%', 'fe80::1%'],
    ['fe80::1%eth 0', 'fe80::1%eth 0'],
    ['fe80::g%eth0', 'fe80::g%eth0'],
    ['AS15169', 'AS15169'],
  ])('%s -> %s', (line, expected) => {
    expect(withoutZoneIndex(line)).toBe(expected);
  });
});

describe('netintel bulk with IPv6 zone indexes', () => {
  const input = 'fe80::1%eth0\n2001:4860:4860::8888%wlan0\n8.8.8.8\n192.0.2.1%eth0\n';

  it('looks up an address with a zone index as the address, and keeps refusing a zone on IPv4', async () => {
    const result = await runCli(['bulk', '-f', 'csv', '--fields', 'ip,network.asn,reserved'], { stdin: input });
    expect(result.code).toBe(7);
    expect(parseCsv(result.stdout)).toEqual([
      ['query', 'kind', 'ip', 'network.asn', 'reserved', 'error.code', 'error.message'],
      ['fe80::1', 'ip', 'fe80::1', '', 'link-local (RFC 4291)', '', ''],
      ['2001:4860:4860::8888', 'ip', '2001:4860:4860::8888', '15169', '', '', ''],
      ['8.8.8.8', 'ip', '8.8.8.8', '15169', '', '', ''],
      ['192.0.2.1%eth0', '', '', '', '', 'invalid_input', 'line 4: "192.0.2.1%eth0" is not a valid IPv4 or IPv6 address'],
    ]);
  });

  describe('in remote mode', () => {
    let server: TestServer;
    let url: string;
    let pro: string;
    beforeAll(async () => {
      server = await startTestServer({ clock: { now: Date.now, advance: () => {}, set: () => {} } });
      url = await server.app.listen({ host: '127.0.0.1', port: 0 });
      pro = await server.key('pro');
    });
    afterAll(async () => {
      await server.close();
    });

    it('prints the rows local mode prints: the zone is left out before the server is asked', async () => {
      const local = await runCli(['bulk', '-f', 'ndjson'], { stdin: input });
      const remote = await runCli(['bulk', '-f', 'ndjson', '--server', url, '--api-key', pro], { stdin: input });
      expect([remote.code, remote.stdout, remote.stderr]).toEqual([local.code, local.stdout, local.stderr]);
    });
  });
});
