import type { PlanTable } from '../../keys/plans.js';
import type { Operation, RouteDeclaration } from '../../operations/operation.js';
import type { ApiRoute } from '../api-route.js';

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

/**
 * Every endpoint the operations serve (docs/api.md, Endpoints), from their
 * loaded descriptors (loadOperations()): the first route of an operation
 * takes its mapping's method, path and plan feature, and answers its record
 * unless it says otherwise.
 */
export function apiRoutes(plans: PlanTable, operations: readonly Operation[]): ApiRoute[] {
  return operations.flatMap((operation) => {
    const api = operation.api;
    if (!api?.route) return [];
    const declared = api.route(plans);
    const routes: readonly RouteDeclaration[] = Array.isArray(declared) ? declared : [declared as RouteDeclaration];
    return routes.map((route, i): ApiRoute => {
      const first = i === 0;
      const json = operation.record.json;
      const responseSchema = route.responseSchema ?? (first && json ? { $ref: `#/components/schemas/${json.name}` } : undefined);
      return closedQuery({
        ...route,
        method: route.method ?? (first ? api.method : 'GET'),
        url: route.url ?? api.path,
        feature: route.feature !== undefined ? route.feature : api.feature,
        ...(responseSchema ? { responseSchema } : {}),
      });
    });
  });
}
