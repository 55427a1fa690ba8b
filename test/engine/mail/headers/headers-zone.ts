/**
 * The sender of the signed fixture message of `netintel headers`
 * (HEADERS_SIGNED_FILE): its SPF policy, its DKIM key (made once; the
 * private half that signed the message was thrown away) and its DMARC
 * policy, and the ARC key of the list that sealed HEADERS_ARC_FILE,
 * served by the end-to-end goldens' DNS peer.
 */
import type { ZoneRecord } from '../../../support/dns-server.js';
import { dkimTxt } from '../dkim-zone.js';

/** A message from headers.test relayed by mail.headers.test (8.8.8.8) to mx.receiver.test, signed with h1; path from the repository root. */
export const HEADERS_SIGNED_FILE = 'test/engine/mail/fixtures/headers-signed.eml';

/** The signed message as a mailing list at lists.receiver.test passed it on: its Authentication-Results and an ARC set (i=1) added. */
export const HEADERS_ARC_FILE = 'test/engine/mail/fixtures/headers-arc.eml';

export const HEADERS_ZONE: readonly ZoneRecord[] = [
  { name: 'headers.test', type: 'TXT', data: 'v=spf1 ip4:8.8.8.0/24 -all' },
  dkimTxt('h1._domainkey.headers.test', 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEArIqHwbExRgZTR2HAHGfr7fwrhYkMKPbtyzex02Ig8DWpZLAmm2LtwZ0HeowEMJxK2AWSYC3pDLFfX4fvZ0zIf5CCmsGJPnJhoybZaAARCyeOFph1zSnYWYkHKtr5NAyJAkbFDFymO1l1wgVLbcA/FuEVWG3x8fthHBVMHeDpz7kwDK6KG8Ed2uwAzMJ+CovxNKZLzDHHyN9zEgZJuOFQHZWrRpWkLy+8ietZPqY8YXIk8gGaX0RA3RxOwFElUuAFXIky5nHayQ8Nfb86hZT/yyeY3v+H+ndho3Wg3WE6q7A9q3LpJkGfyFFGKPioNAxR9LHObQQLHF4EEZ5haXZ0xwIDAQAB'),
  { name: '_dmarc.headers.test', type: 'TXT', data: 'v=DMARC1; p=quarantine' },
  // The list's ARC key, made once as the DKIM key was.
  dkimTxt('arc._domainkey.lists.receiver.test', 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAkY0rX8V6wGBUOEGj+Yyu5y0DjJoZnv6an7hFjezjbyaiB3zJ4Kh7BivmneOGI5j467EW0WKijcd9nwQ0nvzYr8VgyTZ+pkPoNKZOJFKFo9yJKyfd588Mbp/YRQY5mqNTmuK3cKewZgfZB4vW2rO9JII+cJCZ6A0sY2+rBgVfeokJuVcBBOgOCGhOHCZjjlVzs/iAX/GVXAHRDJZRFpF3mJDa36lEUUvoUNyuOdkFz4PlmL02sJV0NMLJbeoofkB1yYoUnhYlntY1pECxgssv7kjaycVxmG0LYJ8azO6eU8qfmCoFcyVEssHQcMTCWoyE+15DQfWx1e05h2TnkW4jyQIDAQAB'),
];
