import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseResolvConf, parseResolverAddress, readSystemResolvers } from '../../../src/engine/dns/resolver-address.js';

describe('parseResolverAddress', () => {
  it.each([
    ['192.0.2.53', { host: '192.0.2.53', port: 53, family: 4, label: '192.0.2.53:53' }],
    ['192.0.2.53:5353', { host: '192.0.2.53', port: 5353, family: 4, label: '192.0.2.53:5353' }],
    ['2001:db8::53', { host: '2001:db8::53', port: 53, family: 6, label: '[2001:db8::53]:53' }],
    ['[2001:db8::53]', { host: '2001:db8::53', port: 53, family: 6, label: '[2001:db8::53]:53' }],
    ['[::1]:5353', { host: '::1', port: 5353, family: 6, label: '[::1]:5353' }],
    [' 127.0.0.1 ', { host: '127.0.0.1', port: 53, family: 4, label: '127.0.0.1:53' }],
  ])('reads %j', (text, expected) => {
    expect(parseResolverAddress(text)).toEqual(expected);
  });

  it.each(['dns.google', '192.0.2.53:0', '192.0.2.53:65536', '192.0.2.53:x', '[192.0.2.53]:53', '[::1]:', '', '300.1.1.1'])(
    'refuses %j with invalid_input',
    (text) => {
      expect(() => parseResolverAddress(text)).toThrow(
        expect.objectContaining({ code: 'invalid_input', message: expect.stringContaining(JSON.stringify(text)) }),
      );
    },
  );
});

describe('parseResolvConf', () => {
  it('takes the nameserver lines in order and skips comments, options and non-addresses', () => {
    const text = [
      '# generated',
      'search example.com',
      'nameserver 192.0.2.1',
      '; nameserver 192.0.2.99',
      'nameserver 2001:db8::1 # secondary',
      'nameserver resolver.example',
      'options edns0 trust-ad',
    ].join('\n');
    expect(parseResolvConf(text).map((r) => r.label)).toEqual(['192.0.2.1:53', '[2001:db8::1]:53']);
  });

  it('falls back to 127.0.0.1 when no nameserver is named', () => {
    expect(parseResolvConf('search example.com\n').map((r) => r.label)).toEqual(['127.0.0.1:53']);
  });
});

describe('readSystemResolvers', () => {
  it('reads the resolv.conf at the given path', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'netintel-resolv-'));
    try {
      const path = join(dir, 'resolv.conf');
      await writeFile(path, 'nameserver 198.51.100.7\n');
      expect((await readSystemResolvers(path)).map((r) => r.label)).toEqual(['198.51.100.7:53']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('falls back to 127.0.0.1 when the file does not exist', async () => {
    const resolvers = await readSystemResolvers(join(tmpdir(), 'netintel-no-such-dir', 'resolv.conf'));
    expect(resolvers.map((r) => r.label)).toEqual(['127.0.0.1:53']);
  });
});
