import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

describe('commands without a remote mode', () => {
  it('exit 9 naming the command instead of answering locally when --server is given', async () => {
    const result = await runCli(['vpn', '8.8.8.8', '--server', 'http://127.0.0.1:9', '-f', 'json']);
    expect(result.code).toBe(9);
    expect(JSON.parse(result.stdout).error.code).toBe('not_implemented');
    expect(result.stderr).toContain('netintel vpn has no remote mode yet');
  });

  it('refuse NETINTEL_SERVER the same way', async () => {
    const result = await runCli(['blacklist', '192.0.2.1'], { env: { NETINTEL_SERVER: 'http://127.0.0.1:9' } });
    expect(result.code).toBe(9);
    expect(result.stderr).toContain('netintel blacklist has no remote mode yet');
  });
});
