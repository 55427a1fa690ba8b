/**
 * A size in the unit people read, for limits named in messages and docs:
 * `64 KiB`, `4 MiB`, `100 bytes`. Limits are powers of two, so they come
 * out whole; any other size is given in bytes.
 */
export function byteSizeText(bytes: number): string {
  if (bytes >= 2 ** 20 && bytes % 2 ** 20 === 0) return `${bytes / 2 ** 20} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
