/**
 * A server for tests: the real buildServer over a fresh in-memory key store,
 * the shipped plans (or given ones), in-memory limits and a clock the test
 * moves by hand.
 */
import type { FastifyInstance } from 'fastify';
import { createEngineContext, type EngineContextSettings } from '../../src/engine/context.js';
import type { KeyStore } from '../../src/keys/key-store.js';
import { loadPlanTable, parsePlanTable, type PlanTable } from '../../src/keys/plans.js';
import { openSqliteKeyStore } from '../../src/keys/sqlite-key-store.js';
import { buildServer, type ServerDeps } from '../../src/server/build-server.js';
import type { LimitStore } from '../../src/server/limits/limit-store.js';
import { createMemoryLimitStore } from '../../src/server/limits/memory-limit-store.js';

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
  plans: PlanTable;
  limits: LimitStore;
  clock: ManualClock;
  /** Makes a key of the plan and returns it. */
  key(plan: string, limits?: Record<string, number>): string;
  close(): Promise<void>;
}

export interface TestServerOptions extends Partial<Omit<ServerDeps, 'ctx' | 'plans'>> {
  plans?: PlanTable | Record<string, unknown>;
  engine?: EngineContextSettings;
  clock?: ManualClock;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const clock = options.clock ?? manualClock();
  const plans = options.plans === undefined ? loadPlanTable() : 'source' in options.plans ? (options.plans as PlanTable) : parsePlanTable(options.plans, 'test plans');
  const keys = options.keys ?? openSqliteKeyStore(':memory:');
  const limits = options.limits ?? createMemoryLimitStore();
  const ctx = createEngineContext({ timeoutMs: 2000, dnsRetries: 0, ...options.engine });
  const app = buildServer({ dataMode: 'pread', logger: false, ...options, ctx, plans, keys, limits, now: clock.now });
  await app.ready();
  return {
    app,
    keys,
    plans,
    limits,
    clock,
    key: (plan, overrides) => keys.create({ plan, label: 'test', limits: overrides ?? null }).key,
    close: async () => {
      await app.close();
      await limits.close();
      keys.close();
      await ctx.close();
    },
  };
}
