import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { findRedisServer, startRedisServer } from '../server/redis-server.js';
import { PeerExited, startOnFreePort } from './peers.js';

describe('starting a test peer on a free port (peers.ts)', () => {
  it('starts the peer again on another port when it exits, and gives up after the attempts', async () => {
    const ports: number[] = [];
    const started = await startOnFreePort(async (port) => {
      ports.push(port);
      if (ports.length < 3) throw new PeerExited(`taken: ${port}`);
      return `peer on ${port}`;
    });
    expect(started).toBe(`peer on ${ports[2]}`);
    expect(ports).toHaveLength(3);
    expect(new Set(ports).size).toBeGreaterThan(1);

    let calls = 0;
    await expect(startOnFreePort(async () => {
      calls++;
      throw new PeerExited('always taken');
    })).rejects.toThrow('always taken');
    expect(calls).toBe(3);
  });

  it('throws any other failure at once', async () => {
    let calls = 0;
    await expect(startOnFreePort(async () => {
      calls++;
      throw new Error('no such binary');
    })).rejects.toThrow('no such binary');
    expect(calls).toBe(1);
  });

  const redisBinary = findRedisServer();
  if (!redisBinary) console.warn('SKIPPED: redis-server is not installed (apt-get install redis-server)');
  it.skipIf(!redisBinary)('a redis-server whose port another process holds exits as PeerExited, the failure startOnFreePort starts a peer again on', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = (holder.address() as net.AddressInfo).port;
    try {
      await expect(startRedisServer(redisBinary!, taken)).rejects.toBeInstanceOf(PeerExited);
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });
});
