/**
 * The sender of the signed fixture message of `netintel headers`
 * (HEADERS_SIGNED_FILE): its SPF policy, its DKIM key (made once; the
 * private half that signed the message was thrown away) and its DMARC
 * policy, served by the end-to-end goldens' DNS peer.
 */
import type { ZoneRecord } from '../../../support/dns-server.js';
import { dkimTxt } from '../dkim-zone.js';

/** A message from headers.test relayed by mail.headers.test (8.8.8.8) to mx.receiver.test, signed with h1; path from the repository root. */
export const HEADERS_SIGNED_FILE = 'test/engine/mail/fixtures/headers-signed.eml';

export const HEADERS_ZONE: readonly ZoneRecord[] = [
  { name: 'headers.test', type: 'TXT', data: 'v=spf1 ip4:8.8.8.0/24 -all' },
  dkimTxt('h1._domainkey.headers.test', 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEArIqHwbExRgZTR2HAHGfr7fwrhYkMKPbtyzex02Ig8DWpZLAmm2LtwZ0HeowEMJxK2AWSYC3pDLFfX4fvZ0zIf5CCmsGJPnJhoybZaAARCyeOFph1zSnYWYkHKtr5NAyJAkbFDFymO1l1wgVLbcA/FuEVWG3x8fthHBVMHeDpz7kwDK6KG8Ed2uwAzMJ+CovxNKZLzDHHyN9zEgZJuOFQHZWrRpWkLy+8ietZPqY8YXIk8gGaX0RA3RxOwFElUuAFXIky5nHayQ8Nfb86hZT/yyeY3v+H+ndho3Wg3WE6q7A9q3LpJkGfyFFGKPioNAxR9LHObQQLHF4EEZ5haXZ0xwIDAQAB'),
  { name: '_dmarc.headers.test', type: 'TXT', data: 'v=DMARC1; p=quarantine' },
];
