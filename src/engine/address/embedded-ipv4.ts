/**
 * IPv4 addresses carried inside IPv6 addresses. A host that connects to one
 * of these IPv6 forms may end up talking to the IPv4 address inside it: the
 * socket layer itself (IPv4-mapped), a translator (SIIT, NAT64), or a tunnel
 * (6to4, Teredo, ISATAP, the IPv4-compatible auto-tunnel). Whoever judges
 * where a connection goes must judge the IPv4 address too.
 *
 * ipaddr.js recognises some of these ranges but gives the embedded address
 * only for IPv4-mapped ones (and reads `::1.2.3.4` as `::ffff:1.2.3.4`, which
 * the kernel does not), so the extraction is done here on the 16 bytes.
 */

/** An IPv4 address found inside an IPv6 address, and the mechanism that puts it there. */
export interface EmbeddedIpv4 {
  /** The IPv4 address as an unsigned 32-bit integer. */
  v4: number;
  /** The mechanism, citing its RFC: `IPv4-mapped (RFC 4291 §2.5.5.2)`. */
  via: string;
}

/**
 * Every IPv4 address the 16 network-order bytes of an IPv6 address carry,
 * by the position each mechanism puts it in; empty for an address that
 * carries none. A Teredo address carries two (its server and its client).
 */
export function embeddedIpv4(bytes: Uint8Array): EmbeddedIpv4[] {
  const found: EmbeddedIpv4[] = [];
  const at = (offset: number, xor = 0): number =>
    (((bytes[offset]! << 24) | (bytes[offset + 1]! << 16) | (bytes[offset + 2]! << 8) | bytes[offset + 3]!) ^ xor) >>> 0;
  const zeros = (from: number, to: number): boolean => {
    for (let i = from; i < to; i++) if (bytes[i] !== 0) return false;
    return true;
  };

  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) {
    // ::ffff:0:0/96: the socket API's form of an IPv4 peer on an IPv6 socket.
    found.push({ v4: at(12), via: 'IPv4-mapped (RFC 4291 §2.5.5.2)' });
  } else if (zeros(0, 12)) {
    // ::/96: deprecated, but still routed to the IPv4 address by hosts with
    // an automatic tunnel (sit) and read as such by some parsers.
    found.push({ v4: at(12), via: 'IPv4-compatible (RFC 4291 §2.5.5.1)' });
  } else if (zeros(0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && bytes[10] === 0 && bytes[11] === 0) {
    // ::ffff:0:0:0/96: SIIT's IPv4-translated addresses.
    found.push({ v4: at(12), via: 'IPv4-translated (RFC 2765 §2.1, RFC 6145)' });
  } else if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zeros(4, 12)) {
    // 64:ff9b::/96, the NAT64 well-known prefix: the IPv4 address in the
    // last 32 bits (RFC 6052 §2.2, the /96 row).
    found.push({ v4: at(12), via: 'NAT64 (RFC 6052 §2.2)' });
  }

  if (bytes[0] === 0x20 && bytes[1] === 0x02) {
    // 2002:V4ADDR::/48: the 6to4 site's IPv4 address in bits 16-47.
    found.push({ v4: at(2), via: '6to4 (RFC 3056 §2)' });
  } else if (bytes[0] === 0x20 && bytes[1] === 0x01 && bytes[2] === 0x00 && bytes[3] === 0x00) {
    // 2001::/32: the Teredo server in bits 32-63, the client's public
    // address in the last 32 bits with every bit inverted.
    found.push({ v4: at(4), via: 'Teredo server (RFC 4380 §4)' });
    found.push({ v4: at(12, 0xffffffff), via: 'Teredo client (RFC 4380 §4)' });
  }

  // Any prefix with the ISATAP interface identifier 0[0-3]00:5efe:V4ADDR
  // (the u and g bits free) tunnels to the IPv4 address in the last 32 bits.
  if ((bytes[8]! & 0xfc) === 0 && bytes[9] === 0x00 && bytes[10] === 0x5e && bytes[11] === 0xfe) {
    found.push({ v4: at(12), via: 'ISATAP (RFC 5214 §6.1)' });
  }
  return found;
}
