/**
 * The library's lookup by name: any operation with default settings, run
 * over the client's data, its record as the operation's own engine call
 * gives it.
 */
import { describe, expect, it } from 'vitest';
import { lookupAsn } from '../../src/engine/asn/lookup-asn.js';
import { createEngineContext } from '../../src/engine/context.js';
import { createNetintel, lookup, NetintelError } from '../../src/lib/index.js';

describe('lookup(client, name, target)', () => {
  it('gives the records of an operation with default settings, as its own function does', async () => {
    const client = createNetintel();
    try {
      expect(await lookup(client, 'asn', 'AS15169')).toEqual([lookupAsn(createEngineContext(), 'AS15169')]);
      const [vpn] = await lookup<{ kind: string; ip: string }>(client, 'vpn', '8.8.8.8');
      expect(vpn).toMatchObject({ kind: 'vpn', ip: '8.8.8.8' });
    } finally {
      await client.close();
    }
  });

  it('throws the target\'s failure as a NetintelError, and usage for a name it cannot run without settings', async () => {
    const client = createNetintel();
    try {
      await expect(lookup(client, 'asn', 'not-an-asn')).rejects.toMatchObject({ name: 'NetintelError', code: 'invalid_input' });
      await expect(lookup(client, 'nonesuch', '8.8.8.8')).rejects.toBeInstanceOf(NetintelError);
      await expect(lookup(client, 'smtp', 'mx.example.test')).rejects.toMatchObject({ code: 'usage' });
    } finally {
      await client.close();
    }
  });
});
