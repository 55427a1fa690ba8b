/**
 * The CLI's diagnostics: the next step a failure gets (keyed by its code
 * and details), wrapping to a width, and the one line of a `data update`
 * that found no network.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NetintelError } from '../../src/errors.js';
import { fitDiagnostics } from '../../src/cli/diagnostic-text.js';
import { fillLine } from '../../src/cli/help-layout.js';
import { reportedMessage } from '../../src/cli/next-step.js';
import { unreachableNetwork } from '../../src/cli/offline-update.js';
import { displayWidth } from '../../src/output/human/display-width.js';

describe('the next step of a failure', () => {
  it('names --resolver for a DNS server that cannot be reached, answered SERVFAIL or REFUSED', () => {
    const unreachable = new NetintelError('unreachable', 'cannot reach DNS server 127.0.0.1:5399 for example.com A (ECONNREFUSED)', { details: { resolver: '127.0.0.1:5399' } });
    expect(reportedMessage(unreachable)).toBe(
      'cannot reach DNS server 127.0.0.1:5399 for example.com A (ECONNREFUSED): check that a DNS server runs there, or name another with --resolver',
    );
    const servfail = new NetintelError('upstream', 'DNS server 127.0.0.1:53 answered SERVFAIL for example.com A', { details: { resolver: '127.0.0.1:53', rcode: 'SERVFAIL' } });
    expect(reportedMessage(servfail)).toMatch(/ \(a broken or DNSSEC-bogus zone, .*: try another with --resolver\)$/);
    const refused = new NetintelError('upstream', 'DNS server 127.0.0.1:53 answered REFUSED for example.com A', { details: { resolver: '127.0.0.1:53', rcode: 'REFUSED' } });
    expect(reportedMessage(refused)).toMatch(/\(the server will not resolve for this machine: name another with --resolver\)$/);
  });

  it('adds nothing to a DNS timeout: the run said what to do at the first silence', () => {
    const timeout = new NetintelError('timeout', 'no answer from DNS server 127.0.0.1:53 for example.com A within 5000 ms (3 attempts)', { details: { resolver: '127.0.0.1:53' } });
    expect(reportedMessage(timeout)).toBe(timeout.message);
  });

  it('names netintel serve and --server for a netintel server no connection reached, not for one that closed the connection', () => {
    const refused = new NetintelError('unreachable', 'cannot reach the netintel server at http://127.0.0.1:8099: ECONNREFUSED', { details: { server: 'http://127.0.0.1:8099', reason: 'ECONNREFUSED' } });
    expect(reportedMessage(refused)).toBe('cannot reach the netintel server at http://127.0.0.1:8099: ECONNREFUSED (start one with "netintel serve", or check --server or NETINTEL_SERVER)');
    const closed = new NetintelError('unreachable', 'the netintel server at http://127.0.0.1:8099 closed the connection before the answer to /api/ipinfo', { details: { server: 'http://127.0.0.1:8099', reason: 'UND_ERR_SOCKET' } });
    expect(reportedMessage(closed)).toBe(closed.message);
    const slow = new NetintelError('timeout', 'the server at http://127.0.0.1:8099 did not answer /api/ipinfo within 35000 ms', { details: { server: 'http://127.0.0.1:8099' } });
    expect(reportedMessage(slow)).toMatch(/\(the server may be busy: allow more time with --timeout\)$/);
  });

  it('adds nothing to a message that has no next step: a file error is worded where the file is read', () => {
    const missing = new NetintelError('usage', 'cannot read access.log: no such file or directory (check the path and its permissions)', { details: { path: 'access.log' } });
    expect(reportedMessage(missing)).toBe(missing.message);
    const content = new NetintelError('usage', 'the config file /x/config.json must hold a JSON object', { details: { path: '/x/config.json' } });
    expect(reportedMessage(content)).toBe(content.message);
  });
});

describe('the width of diagnostics', () => {
  it('fits each netintel: line to the width with a hanging indent of two, and leaves other lines and the case alone', () => {
    const log = '{"level":30,"msg":"Invalid request from a caller that sent a very long header line that goes on and on"}';
    const text = `netintel: cannot reach DNS server 127.0.0.1:5399 for example.com A (ECONNREFUSED)\nnetintel: Tor feeds are old\n${log}\n`;
    expect(fitDiagnostics(text, 40)).toBe(`netintel: cannot reach DNS server\n  127.0.0.1:5399 for example.com A\n  (ECONNREFUSED)\nnetintel: Tor feeds are old\n${log}\n`);
    expect(fitDiagnostics(text, null)).toBe(text);
  });

  it('wraps any line to lines no wider than the width, but for a word wider than it, keeping every word in order', () => {
    const word = fc.stringMatching(/^[a-z0-9:/.é世-]{1,30}$/);
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 40 }), fc.integer({ min: 10, max: 120 }), fc.integer({ min: 0, max: 8 }), (words, width, hanging) => {
        const lines = fillLine(words.join(' '), width, hanging);
        for (const line of lines) {
          if (displayWidth(line) > width) expect(line.trim().split(' ')).toHaveLength(1);
        }
        expect(lines.join(' ').split(/ +/).filter((part) => part !== '')).toEqual(words);
      }),
    );
  });
});

describe('a data update that found no network', () => {
  const failure = (source: string, details: Record<string, unknown>) => ({ ok: false as const, query: source, error: new NetintelError('unreachable', `${source}: failed`, { details }) });

  it('is one cause for two or more sources that failed for want of a way out', () => {
    const outcomes = [failure('tor-exit', { reason: 'ENOTFOUND', host: 'check.torproject.org' }), failure('open-proxies', { reason: 'EAI_AGAIN', host: 'raw.githubusercontent.com' })];
    expect(unreachableNetwork(outcomes)).toEqual({ failed: 2, hosts: ['check.torproject.org', 'raw.githubusercontent.com'], unresolved: true, proxy: false });
    const viaProxy = [failure('a', { reason: 'ECONNREFUSED', proxy: 'http://127.0.0.1:3128' }), failure('b', { reason: 'ECONNREFUSED', proxy: 'http://127.0.0.1:3128' })];
    expect(unreachableNetwork(viaProxy)).toMatchObject({ hosts: ['the proxy 127.0.0.1:3128'], unresolved: false, proxy: true });
  });

  it('is not when one source failed alone, one succeeded, or one failed for another reason', () => {
    const offline = failure('tor-exit', { reason: 'ENOTFOUND', host: 'check.torproject.org' });
    expect(unreachableNetwork([offline])).toBeNull();
    expect(unreachableNetwork([offline, { ok: true, query: 'aws', value: {} }])).toBeNull();
    expect(unreachableNetwork([offline, failure('aws', { reason: 'ECONNREFUSED', url: 'https://ip-ranges.amazonaws.com/' })])).toBeNull();
    expect(unreachableNetwork([offline, failure('aws', { status: 503 })])).toBeNull();
  });
});
