import { createBrotliDecompress, createGunzip, createInflate, gunzipSync, type BrotliDecompress, type Gunzip, type Inflate } from 'node:zlib';
import { NetintelError } from '../../errors.js';


/** The content codings the guarded GET asks for (RFC 9110 §12.5.3); any of {@link decoderFor}'s may still arrive. */
export const ACCEPTED_CODINGS = 'gzip, deflate, br';

/**
 * A streaming decoder for a Content-Encoding value (RFC 9110 §8.4.1), or
 * null for none (`identity`). The caller counts what comes out, so a small
 * body that inflates to gigabytes (a "gzip bomb") is stopped at its cap
 * instead of filling memory.
 *
 * @throws NetintelError `upstream` for a coding netintel cannot decode or a
 *   list of several (no server needs to stack codings for a small document).
 */
export function decoderFor(contentEncoding: string | null, url: string): Gunzip | Inflate | BrotliDecompress | null {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item.length > 0 && item !== 'identity');
  if (codings.length === 0) return null;
  if (codings.length === 1) {
    // x-gzip is gzip's old name, which recipients still accept (RFC 9110 §8.4.1.3).
    if (codings[0] === 'gzip' || codings[0] === 'x-gzip') return createGunzip();
    if (codings[0] === 'deflate') return createInflate();
    if (codings[0] === 'br') return createBrotliDecompress();
  }
  throw new NetintelError('upstream', `${url} is sent with Content-Encoding ${JSON.stringify(contentEncoding)}, which netintel does not decode (gzip, deflate and br only, one at a time)`, {
    details: { url, content_encoding: contentEncoding },
  });
}

/**
 * Gunzips a small gzip document (an SVGZ logo) without letting it grow
 * beyond `maxOctets`: zlib stops as soon as the output passes the cap.
 * `over` is true when it did (no output is kept then).
 *
 * @throws NetintelError `upstream` when the data is not valid gzip.
 */
export function gunzipWithin(data: Buffer, maxOctets: number, what: string): { body: Buffer; over: false } | { body: null; over: true } {
  try {
    return { body: gunzipSync(data, { maxOutputLength: maxOctets }), over: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return { body: null, over: true };
    throw new NetintelError('upstream', `${what} is gzip that does not decompress: ${(error as Error).message}`, { cause: error });
  }
}
