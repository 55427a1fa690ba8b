import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { dataStatus } from '../../engine/data/data-status.js';
import { loadSourceRegistry } from '../../engine/data/data-sources.js';
import { DNS_TIMEOUTS, type DnsTimeoutEvent } from '../../engine/dns/dns-timeouts.js';
import type { Database } from '../../store/database.js';
import type { LimitStore } from '../limits/limit-store.js';

/** What one answered request tells the metrics (see the request-metrics plugin). */
export interface AnsweredRequest {
  /** The route's path as declared (`/api/ipinfo`), or `unrouted` for a path no route has. */
  route: string;
  method: string;
  status: number;
  /** The caller's plan; `none` when the caller was never identified. */
  plan: string;
  seconds: number;
  /** Items the limits accepted (lookups): counted for an API route that answered 2xx. */
  lookups: number;
  /** Which allowance refused the request, when the limits did. */
  refusedBy: 'burst' | 'daily' | null;
}

/** The parts the scrape-time figures are read from. */
export interface MetricSources {
  version: string;
  /** The key database: `SELECT 1` at each scrape says whether it answers. */
  database: Database;
  limits: LimitStore;
  /** The data dir whose datasets' ages are reported (null: the bundled data only). */
  dataDir: string | null;
  now?: () => Date;
}

/** The server's Prometheus metrics (docs/commands/serve.md, Metrics). */
export interface ServerMetrics {
  /** Counts one answered request. */
  answered(request: AnsweredRequest): void;
  /** The text exposition format of every metric, and its content type. */
  scrape(): Promise<{ contentType: string; text: string }>;
  /** Stops listening to the engine's events. */
  close(): void;
}

/** How long a scrape waits for the key database or the limit store before calling it down. */
const HEALTH_TIMEOUT_MS = 1000;

/** Request latencies from half a millisecond (an in-memory lookup) to the 30 s a probe may take. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The metrics of one server process, in a registry of their own (so that
 * two servers in one process, as in the tests, do not mix). Requests are
 * counted as they are answered; dataset ages and the health of the key
 * database and the limit store are read when Prometheus scrapes. Labels
 * take values from closed sets only (declared routes, plans, statuses,
 * configured resolvers), so that no caller can grow the series.
 */
export function createServerMetrics(sources: MetricSources): ServerMetrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({ name: 'netintel_http_requests_total', help: 'HTTP requests answered, by route, method, status and plan', labelNames: ['route', 'method', 'status', 'plan'], registers });
  const latency = new Histogram({ name: 'netintel_http_request_duration_seconds', help: 'Time from a request\'s arrival to its answer, by route and method', labelNames: ['route', 'method'], buckets: LATENCY_BUCKETS, registers });
  const refusals = new Counter({ name: 'netintel_rate_limit_refusals_total', help: 'Requests refused by the rate limits (429), by plan and the allowance used up', labelNames: ['plan', 'limit'], registers });
  const lookups = new Counter({ name: 'netintel_lookups_total', help: 'Lookups answered (items charged to the limits: one per address of a bulk request), by route', labelNames: ['route'], registers });
  const dnsTimeouts = new Counter({ name: 'netintel_dns_timeouts_total', help: 'DNS queries to an upstream resolver that got no usable answer in time, by resolver and transport', labelNames: ['resolver', 'transport'], registers });
  new Gauge({ name: 'netintel_build_info', help: 'The running version; always 1', labelNames: ['version'], registers }).set({ version: sources.version }, 1);
  datasetGauges(registers, sources);
  healthGauge(registers, sources);

  const onTimeout = (message: unknown) => {
    const event = message as DnsTimeoutEvent;
    dnsTimeouts.inc({ resolver: event.resolver, transport: event.transport });
  };
  subscribe(DNS_TIMEOUTS.name, onTimeout);

  return {
    answered(request) {
      const status = String(request.status);
      requests.inc({ route: request.route, method: request.method, status, plan: request.plan });
      latency.observe({ route: request.route, method: request.method }, request.seconds);
      if (request.refusedBy !== null) refusals.inc({ plan: request.plan, limit: request.refusedBy });
      if (request.lookups > 0 && request.status < 300) lookups.inc({ route: request.route }, request.lookups);
    },
    async scrape() {
      return { contentType: registry.contentType, text: await registry.metrics() };
    },
    close() {
      unsubscribe(DNS_TIMEOUTS.name, onTimeout);
    },
  };
}

/** Age and staleness of every installed dataset, as `netintel data status` reports them. */
function datasetGauges(registers: Registry[], sources: MetricSources): void {
  const now = sources.now ?? (() => new Date());
  const rows = () => dataStatus({ dataDir: sources.dataDir, sources: loadSourceRegistry(), now: now() });
  let current: ReturnType<typeof rows> = [];
  // Both gauges are read in one scrape: the data status is read once, by the first.
  new Gauge({
    name: 'netintel_dataset_age_seconds',
    help: 'Seconds since the data of each installed dataset was published (netintel data status)',
    labelNames: ['dataset'],
    registers,
    collect() {
      this.reset();
      current = rows();
      for (const row of current) if (row.updated !== null) this.set({ dataset: row.name }, Math.max(0, (now().getTime() - Date.parse(row.updated)) / 1000));
    },
  });
  new Gauge({
    name: 'netintel_dataset_stale',
    help: 'Whether an installed dataset has not been confirmed current for longer than its stale_after_days (1) or has (0)',
    labelNames: ['dataset'],
    registers,
    collect() {
      this.reset();
      for (const row of current) if (row.stale !== null) this.set({ dataset: row.name }, row.stale ? 1 : 0);
    },
  });
}

/** Whether the key database and the limit store answer, each within HEALTH_TIMEOUT_MS. */
function healthGauge(registers: Registry[], sources: MetricSources): void {
  const { database, limits } = sources;
  new Gauge({
    name: 'netintel_store_up',
    help: 'Whether a store the server depends on answered the scrape\'s check in time (1) or not (0), by store and backend',
    labelNames: ['store', 'backend'],
    registers,
    async collect() {
      const [keys, limiter] = await Promise.all([
        answersInTime(database.one('SELECT 1 AS up').then(() => true)),
        answersInTime(limits.ping()),
      ]);
      this.set({ store: 'keys', backend: database.dialect }, keys ? 1 : 0);
      this.set({ store: 'limits', backend: limits.kind }, limiter ? 1 : 0);
    },
  });
  new Gauge({
    name: 'netintel_keys_kept_in_memory',
    help: 'Whether checked API keys may be served from memory (1: the key database\'s changes are seen) or each check reads the database (0: PostgreSQL\'s change notifications are not proved to arrive)',
    labelNames: ['backend'],
    registers,
    collect() {
      let kept: boolean;
      try {
        kept = database.changeMark() !== null;
      } catch {
        // A database closed under the server: nothing is read from it, from memory or not.
        kept = false;
      }
      this.set({ backend: database.dialect }, kept ? 1 : 0);
    },
  });
}

/** True when `check` resolves true within HEALTH_TIMEOUT_MS; false when it is late, false or fails. */
async function answersInTime(check: Promise<boolean>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), HEALTH_TIMEOUT_MS);
  });
  try {
    return await Promise.race([check.catch(() => false), late]);
  } finally {
    clearTimeout(timer);
  }
}
