// A netintel API server for tests of the crash net (src/server/crash-net.ts):
// the built modules (dist/src, `npm run build` first) as `netintel serve`
// composes them, plus routes whose bugs escape every handler. Prints
// `listening on http://...` on stdout, logs JSON lines on stderr.
import { createEngineContext } from '../../dist/src/engine/context.js';
import { loadPlanTable } from '../../dist/src/keys/plans.js';
import { openStore } from '../../dist/src/store/open-store.js';
import { buildServer } from '../../dist/src/server/build-server.js';
import { installCrashNet } from '../../dist/src/server/crash-net.js';
import { createMemoryLimitStore } from '../../dist/src/server/limits/memory-limit-store.js';
import { loadOperations } from '../../dist/src/operations/operations.js';

const never = () => new Promise(() => {});

/** Routes with the kinds of bug the net catches. */
const faulty = [
  // The shape of a bug check-spf once had: one element of a Promise.all array
  // throws synchronously, so the rejection of its sibling is never observed.
  // The request itself is answered (400); the orphan rejection comes after.
  ['/test/orphan-rejection', async () => {
    const sibling = new Promise((_, reject) => setTimeout(() => reject(new Error('orphaned sibling rejection')), 5));
    const throwing = () => {
      throw Object.assign(new Error('synchronous throw in a Promise.all array'), { statusCode: 400 });
    };
    return Promise.all([sibling, throwing()]);
  }],
  // An exception thrown from a timer callback while the request waits.
  ['/test/throw-in-callback', () => {
    setTimeout(() => {
      throw new Error('thrown from a callback');
    }, 5);
    return never();
  }],
  // A rejection nobody handles while the request waits.
  ['/test/rejection-while-open', () => {
    setTimeout(() => void Promise.reject(new Error('rejected with nobody listening')), 5);
    return never();
  }],
  // The same after a JSON body was read (read in the connection's callbacks, outside the request's scope).
  ['/test/post-throw-in-callback', () => {
    setTimeout(() => {
      throw new Error('thrown from a callback after the body');
    }, 5);
    return never();
  }, 'POST'],
].map(([url, handler, method]) => ({
  method: method ?? 'GET',
  url,
  operationId: url.replace(/\W/g, ''),
  summary: 'a bug',
  description: 'a bug',
  feature: null,
  responseDescription: 'never',
  handler,
}));

const ctx = createEngineContext({ timeoutMs: 2000, dnsRetries: 0 });
const app = buildServer({
  ctx,
  keys: (await openStore(':memory:')).keys,
  plans: loadPlanTable(),
  limits: createMemoryLimitStore(),
  operations: await loadOperations(),
  dataMode: 'pread',
  logger: { level: 'info', stream: process.stderr },
  routes: (routes) => [...routes, ...faulty],
});
installCrashNet(app, process);
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`listening on http://127.0.0.1:${app.server.address().port}\n`);
process.once('SIGTERM', () => void app.close().then(() => ctx.close()));
