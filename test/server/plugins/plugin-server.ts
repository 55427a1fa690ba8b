/**
 * A bare fastify instance for the tests of one server plugin
 * (src/server/plugins/): the shipped plans, in-memory limits, a fixed
 * clock, the callers made of them, and the log lines the instance wrote
 * (without fastify's own request lines, as in buildServer). Each test
 * registers the plugins it is about and routes of its own.
 */
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { loadPlanTable, type PlanTable } from '../../../src/keys/plans.js';
import { createCallers, type Callers } from '../../../src/server/callers.js';
import type { LimitStore } from '../../../src/server/limits/limit-store.js';
import { createMemoryLimitStore } from '../../../src/server/limits/memory-limit-store.js';

export interface PluginServer {
  app: FastifyInstance;
  callers: Callers;
  limits: LimitStore;
  plans: PlanTable;
  /** The log lines written so far, parsed. */
  logs: Array<Record<string, unknown>>;
  now: () => number;
}

export interface PluginServerOptions {
  logLevel?: string;
  limits?: LimitStore;
  trustProxy?: readonly string[];
  /** Options of the fastify factory, given the callers (problem-errors' pre-routing handlers need them). */
  fastify?: (callers: Callers) => FastifyServerOptions;
}

/** 2030-01-01T10:00:00Z, as the server harness's clock starts. */
export const NOW = Date.UTC(2030, 0, 1, 10, 0, 0);

export function pluginServer(options: PluginServerOptions = {}): PluginServer {
  const plans = loadPlanTable();
  const limits = options.limits ?? createMemoryLimitStore();
  const now = () => NOW;
  const callers = createCallers({ plans, limits, now, trustProxy: options.trustProxy ?? [], proxyHeader: 'x-forwarded-for' });
  const logs: Array<Record<string, unknown>> = [];
  const app = Fastify({
    logger: { level: options.logLevel ?? 'info', stream: { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) } },
    // As buildServer: request lines are the request-log plugin's.
    logController: new LogController({ disableRequestLogging: true }),
    ...options.fastify?.(callers),
  });
  return { app, callers, limits, plans, logs, now };
}

/** A promise and its resolve, for a handler the test lets finish. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}
