/** What was read of a body, or that it was larger than the cap. */
export type CappedBody = { over: false; bytes: Buffer } | { over: true; bytes: null };

/**
 * Reads a fetch answer's body as it arrives (decoded: fetch undoes gzip,
 * deflate and br chunk by chunk), stopping as soon as it passes
 * `maxOctets`, so a body of any size, an endless one or a small one that
 * inflates to gigabytes costs at most the cap. A Content-Length over the cap
 * fails before a byte of the body is read. `progress.octets` counts what
 * arrived, for the message of a read that fails half-way.
 *
 * Errors of the read (the call's deadline, a reset connection) are thrown
 * as fetch throws them.
 */
export async function readCappedBody(response: Response, maxOctets: number, progress: { octets: number }): Promise<CappedBody> {
  const body = response.body;
  if (body === null) return { over: false, bytes: Buffer.alloc(0) };
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  // A Content-Length is the size on the wire: a coded body may still inflate past the cap, which the count below catches.
  if (Number.isFinite(declared) && declared > maxOctets && response.headers.get('content-encoding') === null) {
    await body.cancel().catch(() => {});
    return { over: true, bytes: null };
  }
  const chunks: Uint8Array[] = [];
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    progress.octets += value.byteLength;
    if (progress.octets > maxOctets) {
      await reader.cancel().catch(() => {});
      return { over: true, bytes: null };
    }
    chunks.push(value);
  }
  return { over: false, bytes: Buffer.concat(chunks) };
}

/** Drops a body that will not be read (a redirect's, a 429's), so that its connection can close or be reused. */
export async function discardBody(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => {});
}
