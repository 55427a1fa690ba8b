import type { ApiHandler } from '../server/api-route.js';

/**
 * A route handler whose code loads with the route's first request: an
 * operation's declaration loads with its command, its answers' code only
 * in the server. Once loaded, a call is as direct as the handler's.
 */
export function lazyHandler(load: () => Promise<ApiHandler>): ApiHandler {
  let handler: ApiHandler | undefined;
  return (request, reply, api) => (handler ? handler(request, reply, api) : load().then((loaded) => (handler = loaded)(request, reply, api)));
}
