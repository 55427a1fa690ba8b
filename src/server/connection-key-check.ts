import { timingSafeEqual } from 'node:crypto';
import type { Socket } from 'node:net';
import type { KeyCheck, KeyStore } from '../keys/key-store.js';

interface AcceptedKey {
  /** The X-API-Key header as the connection sent it, in its bytes. */
  header: Buffer;
  check: KeyCheck;
  /** The key store's generation when the key was checked. */
  generation: number;
}

/**
 * Checks X-API-Key headers, remembering per connection the last key that
 * was accepted. A keep-alive client sends the same key with every request,
 * and hashing it every time cost about a quarter of the CPU of an
 * /api/ipinfo answer; a request that presents the connection's accepted
 * key again, while the key store's generation stands (no key created or
 * revoked since), reuses the check.
 *
 * The header is compared with the remembered one in constant time: behind
 * a proxy one connection carries many callers, and one must not learn
 * another's key from how long a comparison takes.
 */
export function createConnectionKeyCheck(keys: KeyStore): (socket: Socket, header: string) => KeyCheck {
  const accepted = new WeakMap<Socket, AcceptedKey>();
  return (socket, header) => {
    const presented = Buffer.from(header, 'latin1');
    const known = accepted.get(socket);
    if (known !== undefined && known.header.length === presented.length && timingSafeEqual(known.header, presented) && known.generation === keys.generation()) {
      return known.check;
    }
    const check = keys.check(header.trim());
    // A copy of its own: `presented` is a slice of Buffer's shared pool, which it would keep alive with the connection.
    if (check.ok) accepted.set(socket, { header: Buffer.from(new Uint8Array(presented)), check, generation: keys.generation() });
    else accepted.delete(socket);
    return check;
  };
}
