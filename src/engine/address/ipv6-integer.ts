/** Length of an IPv6 address in network-order bytes. */
export const IPV6_BYTES = 16;

/** The 16 network-order bytes at `offset` as an unsigned 128-bit integer. */
export function ipv6ToBigInt(bytes: Uint8Array, offset = 0): bigint {
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, IPV6_BYTES);
  return (view.getBigUint64(0, false) << 64n) | view.getBigUint64(8, false);
}

/** Writes an unsigned 128-bit integer as 16 network-order bytes at `offset`. */
export function bigIntToIpv6(value: bigint, out: Uint8Array, offset = 0): void {
  const view = new DataView(out.buffer, out.byteOffset + offset, IPV6_BYTES);
  view.setBigUint64(0, value >> 64n, false);
  view.setBigUint64(8, value & 0xffff_ffff_ffff_ffffn, false);
}
