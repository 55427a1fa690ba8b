import { readFileSync } from 'node:fs';
import { parseTrustAnchors, RecordSyntaxError, type TrustAnchor } from '../engine/dns/dnssec/trust-anchor.js';
import { NetintelError } from '../errors.js';

/**
 * The file of `--trust-anchor` (dns, smtp, email): DS or DNSKEY records in
 * zone-file form, as dnssec-keygen and dnssec-dsfromkey write them. A file
 * that cannot be read or parsed is a usage error naming it.
 */
export function readTrustAnchorFile(file: string): TrustAnchor {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new NetintelError('usage', `cannot read the trust anchor file ${file} (${reason}: give a file of DS or DNSKEY records to --trust-anchor)`, { details: { path: file } });
  }
  try {
    return parseTrustAnchors(text);
  } catch (error) {
    if (!(error instanceof RecordSyntaxError)) throw error;
    throw new NetintelError('usage', `the trust anchor file ${file} is not usable: ${error.message} (give DS or DNSKEY records in zone-file form, as dnssec-dsfromkey prints them)`, { details: { path: file } });
  }
}
