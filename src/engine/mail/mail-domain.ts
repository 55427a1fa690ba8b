import { NetintelError } from '../../errors.js';
import { normaliseDomain, type DomainName } from '../dns/dns-name.js';

/**
 * The domain a mail check is about, as normaliseDomain reads it, the root
 * excepted: `.` is a valid DNS name but no mail domain, and every record the
 * checks ask for (`_dmarc..`, `_mta-sts..`) would be malformed under it.
 *
 * @throws NetintelError `invalid_input` as normaliseDomain, and for `.`.
 */
export function normaliseMailDomain(input: string): DomainName {
  const name = normaliseDomain(input);
  if (name.ascii === '.') {
    throw new NetintelError('invalid_input', 'the root "." is not a mail domain: give a domain name such as example.com', {
      details: { input },
    });
  }
  return name;
}
