import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { NetintelError } from '../../errors.js';
import { planOfKey, type Plan, type PlanTable } from '../../keys/plans.js';
import type { ApiKeyRecord, KeyCheck, KeyStore } from '../../store/key-store.js';
import type { RequestState } from '../api-route.js';
import { keySubject, type Callers } from '../callers.js';
import { withoutStack } from '../problem.js';

/** The scheme of 401 answers (RFC 9110 §11.6.1): the key goes in the X-API-Key header. */
export const WWW_AUTHENTICATE = 'ApiKey realm="netintel", header="X-API-Key"';

export interface IdentifyCallerOptions {
  callers: Callers;
  keys: KeyStore;
  plans: PlanTable;
}

/**
 * Who is calling, and with which plan: sets `request.netintel` on every
 * request from its X-API-Key header. Without the header the caller is
 * anonymous, counted by address. On an API route (`config.api`) a bad key
 * is refused 401 with WWW-Authenticate and its reason; off the API
 * (health, docs, pages) it is ignored. A key whose plan cannot be served
 * is 403, and a key database that cannot answer is 503.
 */
const identifyCallerPlugin: FastifyPluginCallback<IdentifyCallerOptions> = (app, { callers, keys, plans }, done) => {
  app.decorateRequest('netintel', null as unknown as RequestState);

  // A key's plan with its own limits applied, and the subject its limits
  // are counted under, per key record: the SQLite store hands out the same
  // record until the key changes, and then a new one (the PostgreSQL store
  // a new one at every check).
  const served = new WeakMap<ApiKeyRecord, { plan: Plan; subject: string }>();

  /** Sets the caller's state from the answer about its key; returns the error to answer with, if any. */
  const identify = (request: FastifyRequest, reply: FastifyReply, client: string, check: KeyCheck): NetintelError | undefined => {
    if (!check.ok) {
      request.netintel = callers.anonymous(client);
      // Off the API (health, docs) a bad key is ignored; on it, refused.
      if (request.routeOptions.config.api !== true) return undefined;
      reply.header('www-authenticate', WWW_AUTHENTICATE);
      const message = {
        malformed: 'the X-API-Key header does not hold a netintel API key (ni_<id>_<secret>)',
        unknown: 'the API key is not known to this server',
        revoked: 'the API key has been revoked',
      }[check.reason];
      return withoutStack(() => new NetintelError('unauthorized', message, { details: check.id === null ? { reason: check.reason } : { reason: check.reason, key_id: check.id } }));
    }
    let key = served.get(check.record);
    if (key === undefined) {
      try {
        key = { plan: planOfKey(plans, check.record.plan, check.record.limits), subject: keySubject(check.record.id, check.accountId) };
      } catch (error) {
        request.netintel = callers.anonymous(client);
        return new NetintelError('forbidden', `the key's plan cannot be served: ${(error as Error).message}`, { details: { key_id: check.record.id } });
      }
      served.set(check.record, key);
    }
    request.netintel = { client, plan: key.plan, subject: key.subject, keyId: check.record.id, limit: null, charged: 0 };
    return undefined;
  };

  app.addHook('onRequest', (request, reply, done) => {
    const client = callers.address(request.raw.socket.remoteAddress, request.headers);
    const header = request.headers['x-api-key'];
    if (header === undefined) {
      request.netintel = callers.anonymous(client);
      return done();
    }
    if (typeof header !== 'string') return done(identify(request, reply, client, { ok: false, reason: 'malformed', id: null }));
    // A key in the store's memory is answered at once; otherwise the
    // request waits for the database. When it cannot answer, the log says
    // why and the caller gets a 503 that names no host of the service's own.
    let check: KeyCheck | Promise<KeyCheck>;
    try {
      check = keys.check(header.trim());
    } catch (error) {
      check = Promise.reject(error);
    }
    if (!(check instanceof Promise)) return done(identify(request, reply, client, check));
    check.then(
      (checked) => done(identify(request, reply, client, checked)),
      (error: unknown) => {
        request.netintel = callers.anonymous(client);
        request.log.error({ err: error }, 'the API key could not be checked');
        done(new NetintelError('data_unavailable', 'the API key could not be checked: the key database is unavailable; retry later'));
      },
    );
  });
  done();
};

/** The caller and its plan on every request (see identifyCallerPlugin). */
export const identifyCaller = fp(identifyCallerPlugin, { fastify: '5.x', name: 'netintel-identify-caller' });
