import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { findRedisServer, startRedisServer } from '../server/redis-server.js';
import { startDnsProxy } from './dns-proxy.js';
import { againOnPeerExit, freePort, listenOnSamePort, PeerExited, startOnFreePort } from './peers.js';

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

  it('binds UDP and TCP to one port, and starts again on a fresh port when another process holds the TCP side', async () => {
    // The first UDP port the system picks has its TCP side taken, by a real
    // listener, in the moment between the two binds (as another worker's peer would).
    const holder = net.createServer();
    let made = 0;
    const createUdp = (): dgram.Socket => {
      const udp = dgram.createSocket('udp4');
      if (++made === 1) udp.once('listening', () => holder.listen(udp.address().port, '127.0.0.1'));
      return udp;
    };
    const tcp = net.createServer();
    try {
      const { udp, port } = await listenOnSamePort('127.0.0.1', createUdp, tcp);
      expect(made).toBe(2);
      expect(port).not.toBe((holder.address() as net.AddressInfo).port);
      expect(udp.address().port).toBe(port);
      expect((tcp.address() as net.AddressInfo).port).toBe(port);
      await new Promise<void>((resolve) => udp.close(() => resolve()));
    } finally {
      await Promise.all([holder, tcp].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    }
  });

  it('a DNS proxy passes UDP and TCP on to its upstream on one port, and answers what it is told to itself', async () => {
    const upstreamUdp = dgram.createSocket('udp4');
    upstreamUdp.on('message', (message, client) => upstreamUdp.send(Buffer.concat([Buffer.from('up:'), message]), client.port, client.address));
    const upstreamTcp = net.createServer((socket) => socket.on('data', (data) => socket.end(Buffer.concat([Buffer.from('up:'), data]))));
    const { port: upstreamPort } = await listenOnSamePort('127.0.0.1', () => upstreamUdp, upstreamTcp);
    const own = Buffer.from('own answer');
    const proxy = await startDnsProxy(upstreamPort, { tcp: true, answer: (query) => (query.id === 7 ? own : undefined) });
    const client = dgram.createSocket('udp4');
    const ask = (id: number): Promise<Buffer> => new Promise((resolve) => {
      client.once('message', resolve);
      client.send(dnsPacket.encode({ id, type: 'query', questions: [{ name: 'example.', type: 'A' }] }), proxy.port, '127.0.0.1');
    });
    try {
      expect(await ask(7)).toEqual(own);
      const passed = await ask(8);
      expect(passed.subarray(0, 3).toString()).toBe('up:');
      expect(dnsPacket.decode(passed.subarray(3)).id).toBe(8);
      const overTcp = await new Promise<Buffer>((resolve, reject) => {
        const socket = net.connect(proxy.port, '127.0.0.1', () => socket.end('hello'));
        const chunks: Buffer[] = [];
        socket.on('data', (chunk) => chunks.push(chunk)).on('end', () => resolve(Buffer.concat(chunks))).on('error', reject);
      });
      expect(overTcp.toString()).toBe('up:hello');
    } finally {
      client.close();
      await proxy.close();
      await Promise.all([new Promise<void>((resolve) => upstreamUdp.close(() => resolve())), new Promise<void>((resolve) => upstreamTcp.close(() => resolve()))]);
    }
  });

  it('a documentation server that exits before it listens is PeerExited, and the block or recipe is run again', async () => {
    const { waitForPort } = await import('../readme/readme-shell.js');
    const { spawn } = await import('node:child_process');
    const port = await freePort();
    const server = spawn(process.execPath, ['-e', 'process.exit(3)'], { stdio: 'ignore' });
    await expect(waitForPort(port, server)).rejects.toBeInstanceOf(PeerExited);
    let runs = 0;
    await expect(againOnPeerExit(async () => {
      runs++;
      if (runs < 3) throw new PeerExited('lost its port');
      return 'ran';
    })).resolves.toBe('ran');
    expect(runs).toBe(3);
  });
});
