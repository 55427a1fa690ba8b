import type { PlanTable } from '../../keys/plans.js';
import type { ApiRoute } from '../api-route.js';
import { ASN_LOOKUP_ROUTE } from './asn-lookup.js';
import { bulkRoute } from './bulk.js';
import { DNS_LOOKUP_ROUTE } from './dns-lookup.js';
import { IPINFO_ROUTE } from './ipinfo.js';
import { BLACKLIST_CHECK_ROUTE, EMAIL_TESTS_BULK_ROUTE, EMAIL_TESTS_ROUTE, SMTP_TEST_ROUTE, VPN_CHECK_ROUTE } from './check-routes.js';

/**
 * A query with only the parameters the route declares: an unknown one (a
 * typo, or `ip[]=8.8.8.8` as form libraries write arrays) is refused with
 * 400 rather than ignored, which would answer another question (the
 * caller's own address) as if it were the one asked.
 */
function closedQuery(route: ApiRoute): ApiRoute {
  if (!route.querystring) return route;
  const names = Object.keys((route.querystring.properties ?? {}) as Record<string, unknown>);
  return { ...route, querystring: { ...route.querystring, propertyNames: { enum: names } } };
}

/** Every endpoint of docs/api.md, in its order. */
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
  ].map(closedQuery);
}
