import { parseTrustAnchors, RecordSyntaxError, type TrustAnchor } from '../engine/dns/dnssec/trust-anchor.js';
import { NetintelError } from '../errors.js';
import { readBoundedFileSync } from '../read-file-bounded.js';

/**
 * The largest `--trust-anchor` file read, in bytes: 1 MiB. A zone's whole
 * DNSKEY RRset fits in one DNS message of at most 65,535 octets
 * (RFC 1035 §4.2.2), which its zone-file text with comments outgrows by a
 * few times at most; anything near the limit is not a trust anchor.
 */
export const TRUST_ANCHOR_FILE_MAX_BYTES = 1024 * 1024;

/**
 * The file of `--trust-anchor` (or NETINTEL_TRUST_ANCHOR, the config file's
 * "trust-anchor", named by `from`): DS or DNSKEY records in zone-file form,
 * as dnssec-keygen and dnssec-dsfromkey write them. A file that cannot be
 * read, is larger than {@link TRUST_ANCHOR_FILE_MAX_BYTES} or cannot be
 * parsed is a usage error naming it.
 */
export function readTrustAnchorFile(file: string, from = '--trust-anchor'): TrustAnchor {
  const hint = `give a file of DS or DNSKEY records to ${from}`;
  const text = readBoundedFileSync(file, { maxBytes: TRUST_ANCHOR_FILE_MAX_BYTES, what: 'trust anchor file', hint }).toString('utf8');
  try {
    return parseTrustAnchors(text);
  } catch (error) {
    if (!(error instanceof RecordSyntaxError)) throw error;
    throw new NetintelError('usage', `the trust anchor file ${file}${from === '--trust-anchor' ? '' : ` (${from})`} is not usable: ${error.message} (give DS or DNSKEY records in zone-file form, as dnssec-dsfromkey prints them)`, { details: { path: file } });
  }
}
