import { ASN } from './asn.js';
import { BIMI } from './bimi.js';
import { BLACKLIST } from './blacklist.js';
import { BULK } from './bulk.js';
import { DKIM } from './dkim.js';
import { DNS } from './dns.js';
import { EMAIL } from './email.js';
import { IP } from './ip.js';
import { MX } from './mx.js';
import { PTR } from './ptr.js';
import type { Operation } from './operation.js';
import { RANGE } from './range.js';
import { SMTP } from './smtp.js';
import { SPF } from './spf.js';
import { VPN } from './vpn.js';

/**
 * Every operation, in the order `netintel --help` lists them: the one list
 * the CLI commands, the API routes, the OpenAPI components, the remote
 * calls and the library's lookups are made from (docs/design.md, Operations).
 */
export const OPERATIONS: readonly Operation[] = [IP, ASN, BULK, RANGE, DNS, PTR, SMTP, MX, SPF, DKIM, BIMI, EMAIL, VPN, BLACKLIST];
