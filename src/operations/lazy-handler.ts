import type { ApiHandler } from '../server/api-route.js';

/**
 * A route handler whose code loads with the route's first request: the
 * declarations of every operation load with any command, their answers'
 * code only in the server. Once loaded, a call is as direct as the handler's.
 */
export function lazyHandler(load: () => Promise<ApiHandler>): ApiHandler {
  let handler: ApiHandler | undefined;
  return (request, reply, api) => (handler ? handler(request, reply, api) : load().then((loaded) => (handler = loaded)(request, reply, api)));
}
