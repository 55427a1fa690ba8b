import type { PlanTable } from '../../keys/plans.js';
import type { ApiRoute } from '../api-route.js';
import { ASN_LOOKUP_ROUTE } from './asn-lookup.js';
import { bulkRoute } from './bulk.js';
import { DNS_LOOKUP_ROUTE } from './dns-lookup.js';
import { IPINFO_ROUTE } from './ipinfo.js';
import { BLACKLIST_CHECK_ROUTE, EMAIL_TESTS_BULK_ROUTE, EMAIL_TESTS_ROUTE, SMTP_TEST_ROUTE, VPN_CHECK_ROUTE } from './check-routes.js';

/** Every endpoint of SPEC.md, in SPEC's order. */
export function apiRoutes(plans: PlanTable): ApiRoute[] {
  return [
    IPINFO_ROUTE,
    DNS_LOOKUP_ROUTE,
    SMTP_TEST_ROUTE,
    ASN_LOOKUP_ROUTE,
    EMAIL_TESTS_ROUTE,
    EMAIL_TESTS_BULK_ROUTE,
    VPN_CHECK_ROUTE,
    BLACKLIST_CHECK_ROUTE,
    bulkRoute(plans),
  ];
}
