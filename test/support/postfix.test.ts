import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { findExecutable, PeerExited } from './peers.js';
import { POSTFIX_SKIP_REASON, startPostfix, startPostfixOn } from './postfix.js';

describe('starting a Postfix test peer (postfix.ts)', () => {
  if (POSTFIX_SKIP_REASON) console.warn(`SKIPPED: ${POSTFIX_SKIP_REASON}`);

  it.skipIf(POSTFIX_SKIP_REASON !== null)('an instance whose port another process holds fails as PeerExited, which startOnFreePort starts again', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = (holder.address() as net.AddressInfo).port;
    try {
      await expect(startPostfixOn(findExecutable('postfix')!, taken, { hostname: 'taken.test' })).rejects.toBeInstanceOf(PeerExited);
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  }, 30_000);

  it.skipIf(POSTFIX_SKIP_REASON !== null)('a started instance is the one answering its port (its own banner)', async () => {
    const postfix = await startPostfix({ hostname: 'own.test' });
    try {
      const banner = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(postfix.port, '127.0.0.1');
        socket.once('data', (data) => {
          socket.end('QUIT\r\n');
          resolve(data.toString());
        });
        socket.on('error', reject);
      });
      expect(banner).toMatch(/^220 own\.test ESMTP netintel-interop/);
    } finally {
      await postfix.stop();
    }
  }, 30_000);
});
