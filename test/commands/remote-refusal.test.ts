import { describe, expect, it } from 'vitest';
import { runCli, tempDir, writeConfigFile } from '../support/cli.js';

describe('--server outside remote mode', () => {
  it('must be an http(s) URL: a usage error names where the value came from', async () => {
    const flag = await runCli(['ip', '8.8.8.8', '--server', 'example.com:8080', '-f', 'json']);
    expect(flag.code).toBe(2);
    expect(JSON.parse(flag.stdout).error.code).toBe('usage');
    expect(flag.stderr).toBe('netintel: --server must be an http:// or https:// URL (the netintel server of remote mode), not "example.com:8080"\n');
    const env = await runCli(['blacklist', '192.0.2.1'], { env: { NETINTEL_SERVER: 'ftp://127.0.0.1' } });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('NETINTEL_SERVER must be an http:// or https:// URL');
    const dir = tempDir();
    try {
      const configured = await runCli(['mx', 'example.com'], { env: { XDG_CONFIG_HOME: writeConfigFile(dir.path, { server: '127.0.0.1' }) } });
      expect(configured.code).toBe(2);
      expect(configured.stderr).toContain('the config file\'s "server" must be an http:// or https:// URL');
    } finally {
      dir.remove();
    }
  });

  it('is not read by the commands that administer this machine (serve, keys, data)', async () => {
    const result = await runCli(['data', 'status', '-f', 'json'], { env: { NETINTEL_SERVER: 'not a url' } });
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain('NETINTEL_SERVER');
  });
});

describe('--trust-anchor in remote mode', () => {
  // 127.0.0.1:9 (discard): nothing is asked, so no server need listen.
  const server = ['--server', 'http://127.0.0.1:9'];

  it('is refused on the command line before anything is asked or read, for every command that has a remote mode', async () => {
    for (const argv of [['dns', 'example.com'], ['email', 'example.com'], ['smtp', 'mx.example.com'], ['tls', 'example.com'], ['ip', '8.8.8.8']]) {
      const run = await runCli([...argv, '--trust-anchor', '/nonexistent/anchor.key', ...server]);
      expect(run.code, argv[0]).toBe(2);
      expect(run.stderr, argv[0]).toBe('netintel: remote mode cannot send --trust-anchor: the server validates DNSSEC from the IANA root; run without --server\n');
    }
  });

  it('from NETINTEL_TRUST_ANCHOR is a setting of local runs: not read, not refused', async () => {
    const run = await runCli(['email', 'example.com', '-f', 'json', '--timeout', '300', ...server], { env: { NETINTEL_TRUST_ANCHOR: '/nonexistent/anchor.key' } });
    expect(run.stderr).not.toMatch(/trust anchor|NETINTEL_TRUST_ANCHOR/);
    expect(JSON.parse(run.stdout).error.code).toBe('unreachable');
  });
});
