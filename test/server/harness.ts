/**
 * A server for tests: the real buildServer over a fresh in-memory key store,
 * the shipped plans (or given ones), in-memory limits and a clock the test
 * moves by hand.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { createEngineContext, type EngineContextSettings } from '../../src/engine/context.js';
import type { KeyStore } from '../../src/store/key-store.js';
import { loadPlanTable, parsePlanTable, type PlanTable } from '../../src/keys/plans.js';
import { createMailSender } from '../../src/accounts/mail-sender.js';
import type { Mailer } from '../../src/accounts/mailer.js';
import { buildServer, type ServerDeps } from '../../src/server/build-server.js';
import { loadOperations } from '../../src/operations/operations.js';
import { openStore, type Store } from '../../src/store/open-store.js';
import { composeAccountMail } from '../../src/web/mail-messages.js';
import type { OidcLogin } from '../../src/web/oidc.js';
import type { LimitStore } from '../../src/server/limits/limit-store.js';
import { createMemoryLimitStore } from '../../src/server/limits/memory-limit-store.js';
import { contractOf, type ContractExchange, type OpenApiContract } from './openapi-contract.js';

/** A clock the test moves: ms since the epoch. */
export interface ManualClock {
  now(): number;
  advance(ms: number): void;
  set(ms: number): void;
}

/** 2030-01-01T10:00:00Z unless told otherwise. */
export function manualClock(start = Date.UTC(2030, 0, 1, 10, 0, 0)): ManualClock {
  let current = start;
  return {
    now: () => current,
    advance: (ms) => {
      current += ms;
    },
    set: (ms) => {
      current = ms;
    },
  };
}

export interface TestServer {
  app: FastifyInstance;
  keys: KeyStore;
  /** The database of the keys, accounts and outbox. */
  store: Store;
  /** Drains the mail outbox when the account pages are on: every message queued so far is sent when it resolves. */
  sendMail(): Promise<void>;
  plans: PlanTable;
  limits: LimitStore;
  clock: ManualClock;
  /** The server's own /openapi.json as a contract. */
  contract: OpenApiContract;
  /** Answers seen so far that /openapi.json does not allow (inject throws at once; real HTTP ones are checked at close). */
  contractViolations: string[];
  /** Makes a key of the plan and returns it. */
  key(plan: string, limits?: Record<string, number>): Promise<string>;
  close(): Promise<void>;
}

/** The account pages of a test server: its store gives the accounts; queued mail goes through `mailer`. */
export interface TestAccountPages {
  mailer: Mailer;
  publicUrl: () => string;
  https: boolean;
  social?: OidcLogin;
}

export interface TestServerOptions extends Partial<Omit<ServerDeps, 'ctx' | 'plans' | 'accountPages'>> {
  /** The database (default: a new in-memory SQLite one); closed with the server. */
  store?: Store;
  accountPages?: TestAccountPages;
  plans?: PlanTable | Record<string, unknown>;
  engine?: EngineContextSettings;
  clock?: ManualClock;
  /**
   * Check every answer against the server's /openapi.json (default true);
   * false for a test that checks the answers it reads off the wire itself.
   */
  checkContract?: boolean;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const clock = options.clock ?? manualClock();
  const plans = options.plans === undefined ? loadPlanTable() : 'source' in options.plans ? (options.plans as PlanTable) : parsePlanTable(options.plans, 'test plans');
  const store = options.store ?? (await openStore(':memory:'));
  const keys = options.keys ?? store.keys;
  const limits = options.limits ?? createMemoryLimitStore();
  const ctx = createEngineContext({ timeoutMs: 2000, dnsRetries: 0, ...options.engine });
  const pages = options.accountPages;
  const sender = pages
    ? createMailSender(store.outbox, pages.mailer, { compose: composeAccountMail(store.accounts, pages.publicUrl), leaseMs: 5_000, pollMs: 60_000 })
    : null;
  const { accountPages: _pages, store: _store, ...deps } = options;
  const app = buildServer({
    dataMode: 'pread',
    logger: false,
    operations: await loadOperations(),
    ...deps,
    ctx,
    plans,
    keys,
    limits,
    now: clock.now,
    ...(pages && sender ? { accountPages: { ...pages, accounts: store.accounts, sessionKey: await store.accounts.sessionKey(), mail: sender } } : {}),
  });
  const violations: string[] = [];
  let contract: OpenApiContract | undefined;
  // Every answer, whether injected or over a socket, is checked against the server's own /openapi.json.
  if (options.checkContract !== false) app.addHook('onSend', (request, reply, payload, done) => {
    const body = typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : payload === null || payload === undefined ? '' : undefined;
    exchanges.push({ method: request.method, url: request.url, status: reply.statusCode, headers: reply.getHeaders() as ContractExchange['headers'], body });
    done(null, payload);
  });
  const exchanges: ContractExchange[] = [];
  const checkSeen = (): string[] => {
    const found: string[] = [];
    for (const exchange of exchanges.splice(0)) {
      // The document itself is the contract's source: not checked against itself before it is known.
      if (contract) found.push(...contract.check(exchange));
    }
    violations.push(...found);
    return found;
  };
  await app.ready();
  contract = contractOf((await app.inject({ url: '/openapi.json' })).body);
  exchanges.splice(0);
  const inject = app.inject.bind(app) as (...args: unknown[]) => unknown;
  // A failing check fails the test that made the request, with what the document does not allow.
  (app as unknown as { inject: unknown }).inject = (...args: unknown[]) => {
    if (args.length !== 1) return inject(...args);
    return (inject(args[0]) as Promise<unknown>).then((response) => {
      const found = checkSeen();
      if (found.length > 0) {
        violations.splice(violations.length - found.length);
        throw new Error(`answer not allowed by /openapi.json:\n${found.join('\n')}`);
      }
      return response;
    });
  };
  return {
    app,
    contract,
    contractViolations: violations,
    keys,
    store,
    sendMail: async () => {
      await sender?.drain();
    },
    plans,
    limits,
    clock,
    key: async (plan, overrides) => (await keys.create({ plan, label: 'test', limits: overrides ?? null })).key,
    close: async () => {
      await app.close();
      checkSeen();
      if (violations.length > 0) throw new Error(`answers not allowed by /openapi.json:\n${[...new Set(violations)].join('\n')}`);
      await sender?.close();
      await limits.close();
      await store.close();
      await ctx.close();
    },
  };
}

/**
 * A test server that CLI runs reach in remote mode: listening on a port of
 * 127.0.0.1, on the wall clock (the runs are other processes), with a key
 * of `plan`.
 */
export async function startRemoteServer(options: Omit<TestServerOptions, 'clock'> = {}, plan = 'pro'): Promise<TestServer & { url: string; apiKey: string }> {
  const server = await startTestServer({ ...options, clock: { now: Date.now, advance: () => {}, set: () => {} } });
  const url = await server.app.listen({ host: '127.0.0.1', port: 0 });
  return { ...server, url, apiKey: await server.key(plan) };
}

/** Listens on a port of 127.0.0.1 the system picks: the port and the base URL. */
export async function listenOnLoopback(app: FastifyInstance): Promise<{ port: number; base: string }> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  return { port, base: `http://127.0.0.1:${port}` };
}

/** An injected answer that is a problem+json of `status` and `code` (docs/api.md, Errors): its body. */
export function expectProblemAnswer(response: LightMyRequestResponse, status: number, code: string): any {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  const body = JSON.parse(response.body);
  expect(body).toMatchObject({ status, code, type: `/docs#problem-${code}` });
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  return body;
}
