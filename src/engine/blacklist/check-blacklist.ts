import { NetintelError, type ErrorCode } from '../../errors.js';
import type { FailureLike } from '../check-failure.js';
import type { EngineContext } from '../context.js';
import { fanOutLimits } from '../fan-out.js';
import type { Finding } from '../findings.js';
import { normaliseDomain } from '../dns/dns-name.js';
import { closeOnAbort } from '../dns/close-on-abort.js';
import { createDnsTransport, type DnsTransport } from '../dns/dns-transport.js';
import { queryRecords } from '../dns/query-records.js';
import { readSystemResolvers } from '../dns/resolver-address.js';
import { isIpAddress, parseIpAddress, quoteInput, type IpAddress } from '../address/ip-address.js';
import { specialPurposeOf } from '../address/special-ranges.js';
import type { BlacklistResult, BlacklistSkippedZone, BlacklistZoneResult, DnsblStatus } from './blacklist-result.js';
import { blacklistFindings, blacklistVerdict } from './blacklist-verdict.js';
import { createCanaryCache, type AskA, type CanaryCache, type CanaryReport } from './canaries.js';
import { startDeadline, type Deadline } from './deadline.js';
import { reportStage } from '../stage.js';
import { dnsblQueryName, readDnsblAnswer, type DnsblReading } from './dnsbl-answer.js';
import { loadDnsblRegistry, selectZones, type DnsblRegistry, type DnsblZone } from './dnsbl-registry.js';
import { resolveMailHosts, type AskRecords, type MailAddress } from './mail-hosts.js';

export interface BlacklistOptions {
  /** The `--zones` list (zone names, `default`, `all`, `name:ip|ipv6|domain`); null or absent: the default set. */
  zones?: string | null;
  /** A registry to use instead of data/dnsbl-zones.json (or the data dir's copy). */
  registry?: DnsblRegistry;
  /** A transport to use instead of one built from the context (its resolvers, --tcp, --retries). */
  transport?: DnsTransport;
}

/** Checks targets against the zones of one run, sharing the transport and each zone's self-test. */
export interface BlacklistChecker {
  /** The zones each target is checked against, in order. */
  readonly zones: readonly DnsblZone[];
  /** Dead zones named in `--zones`: reported, never queried. */
  readonly deadZones: readonly DnsblZone[];
  readonly registry: DnsblRegistry;
  /**
   * Checks one IP address or domain. Zone failures (refusals, timeouts,
   * failed test points) are rows of the result, not errors.
   *
   * @throws NetintelError `invalid_input` when the target is neither an IP
   *   address nor a domain name.
   */
  check(target: string): Promise<BlacklistResult>;
  /** Closes the transport it created (not one passed in). */
  close(): Promise<void>;
}

/**
 * Prepares a blacklist run: loads the registry, selects the zones, and
 * opens one DNS transport. Every query of a check (MX lookups, zone
 * queries, test points, TXT reasons) runs at once under one deadline of
 * `ctx.timeoutMs`; within it each attempt gets an equal share for the
 * retries (`ctx.dnsRetries`), so a lost datagram is sent again in time.
 *
 * @throws NetintelError `usage` for a bad `--zones` list; `data_unavailable`
 *   when the registry cannot be read.
 */
export async function createBlacklistChecker(ctx: EngineContext, options: BlacklistOptions = {}): Promise<BlacklistChecker> {
  const registry = options.registry ?? loadDnsblRegistry(ctx.dataDir);
  const selection = selectZones(registry, options.zones ?? null);
  let transport = options.transport;
  const owned = transport === undefined;
  if (!transport) {
    const resolvers = ctx.resolvers ?? (await readSystemResolvers());
    const attemptMs = Math.max(1, Math.floor(ctx.timeoutMs / (ctx.dnsRetries + 1)));
    transport = createDnsTransport({ resolvers, tcp: ctx.dnsTcp, timeoutMs: attemptMs, retries: ctx.dnsRetries, memory: ctx.dnsMemory ?? null });
  }
  const dns = transport;
  const stopListening = owned ? closeOnAbort(dns, ctx.signal) : () => {};
  const canaries = createCanaryCache();
  return {
    zones: selection.zones,
    deadZones: selection.dead,
    registry,
    check: (target) => runCheck(ctx, dns, registry, selection.zones, selection.dead, canaries, target),
    close: async () => {
      stopListening();
      if (owned) await dns.close();
    },
  };
}

/**
 * Checks one IP address or domain against DNS blocklists (one-off form of
 * {@link createBlacklistChecker}).
 *
 * An IP address is asked of the IP lists (IPv4 as reversed octets, IPv6 as
 * reversed nibbles on lists with IPv6 data). A domain is asked of the
 * domain lists, and the addresses of its MX hosts of the IP lists, each row
 * naming the MX host the address came from.
 *
 * @throws NetintelError `invalid_input`, `usage`, `data_unavailable` (see above).
 */
export async function checkBlacklist(ctx: EngineContext, target: string, options: BlacklistOptions = {}): Promise<BlacklistResult> {
  const checker = await createBlacklistChecker(ctx, options);
  try {
    return await checker.check(target);
  } finally {
    await checker.close();
  }
}

type Target = { type: 'ip'; address: IpAddress; text: string } | { type: 'domain'; text: string };

/** Reads a target: an IP address (strict, IPv4-mapped IPv6 unwrapped) or a domain name with at least two labels. */
export function parseBlacklistTarget(input: string): Target {
  const text = input.trim();
  if (isIpAddress(text)) {
    const address = parseIpAddress(text);
    return { type: 'ip', address, text: address.text };
  }
  let name: string;
  try {
    name = normaliseDomain(text).ascii;
  } catch (error) {
    throw new NetintelError('invalid_input', `${quoteInput(input)} is not an IP address or a domain name: ${(error as Error).message}`, {
      details: { input },
    });
  }
  if (name === '.' || !name.includes('.')) {
    throw new NetintelError('invalid_input', `${quoteInput(input)} is not an IP address or a domain name with a dot`, { details: { input } });
  }
  return { type: 'domain', text: name };
}

interface RowTask {
  zoneIndex: number;
  subjectIndex: number;
  promise: Promise<ZoneOutcome>;
}

/** A zone's row, and the error code that kept it unchecked (null for a listed or clean row), for the verdict's failure. */
interface ZoneOutcome {
  row: BlacklistZoneResult;
  code: ErrorCode | null;
}

async function runCheck(
  ctx: EngineContext,
  transport: DnsTransport,
  registry: DnsblRegistry,
  zones: readonly DnsblZone[],
  deadZones: readonly DnsblZone[],
  canaries: CanaryCache,
  input: string,
): Promise<BlacklistResult> {
  const target = parseBlacklistTarget(input);
  const checkedAt = ctx.now().toISOString();
  const deadline = startDeadline(ctx.timeoutMs);
  try {
    const { ask, askCanary } = deadlineAskers(ctx, transport, deadline);
    const tasks: RowTask[] = [];
    const skipped: BlacklistSkippedZone[] = deadZones.map(deadZoneSkip);
    const queue = (zone: DnsblZone, zoneIndex: number, subject: IpAddress | string, subjectIndex: number, mxHosts: string[]) => {
      const canary = canaries.check(zone, askCanary);
      // Settles to a row whatever happens: the tasks wait unobserved while
      // the MX hosts are looked up, so a rejection here would be unhandled.
      const promise = checkZone(zone, subject, mxHosts, canary, ask, deadline, () => canaries.forget(zone, canary)).catch(
        (error: unknown): ZoneOutcome => ({ row: zoneErrorRow(zone, subject, mxHosts, error), code: 'internal' }),
      );
      tasks.push({ zoneIndex, subjectIndex, promise });
    };
    const queueAddress = (address: IpAddress, subjectIndex: number, mxHosts: string[]) => {
      zones.forEach((zone, zoneIndex) => {
        if (zone.kind !== 'ip') return;
        if (address.version === 6 && !zone.ipv6) {
          skipped.push({ zone: zone.zone, subject: address.text, reason: 'ipv6_unsupported', detail: `${zone.zone} has no IPv6 data` });
          return;
        }
        queue(zone, zoneIndex, address, subjectIndex, mxHosts);
      });
    };

    // The self-tests of the zones to ask start now: for a domain they run while its MX hosts are looked up.
    const applies = (zone: DnsblZone) =>
      target.type === 'domain' || (zone.kind === 'ip' && (target.address.version === 4 || zone.ipv6));
    for (const zone of zones.filter(applies)) void canaries.check(zone, askCanary);

    let mx: BlacklistResult['mx'] = null;
    let hostFailures: FailureLike[] = [];
    let limited: Finding[] = [];
    if (target.type === 'ip') {
      for (const zone of zones.filter((item) => item.kind === 'domain')) {
        skipped.push({ zone: zone.zone, subject: target.text, reason: 'not_applicable', detail: `${zone.zone} lists domain names, not IP addresses` });
      }
      queueAddress(target.address, 0, []);
    } else {
      zones.forEach((zone, zoneIndex) => {
        if (zone.kind === 'domain') queue(zone, zoneIndex, target.text, 0, []);
      });
      if (zones.some((zone) => zone.kind === 'ip')) {
        reportStage(ctx, 'dns', target.text, 'MX');
        const hosts = await resolveMailHosts(target.text, ask, fanOutLimits(ctx));
        mx = hosts.mx;
        hostFailures = hosts.failures;
        limited = hosts.limited;
        hosts.addresses.forEach((item: MailAddress, index) => queueAddress(item.address, index + 1, item.mx_hosts));
      }
    }

    reportStage(ctx, 'blacklist', target.text, String(new Set(tasks.map((task) => task.zoneIndex)).size));
    const { rows, unchecked } = await settledRows(tasks);
    const verdict = blacklistVerdict(target.text, rows, mx, [...unchecked, ...hostFailures]);
    const findings = blacklistFindings({
      target: target.text,
      target_type: target.type,
      rows,
      skipped,
      mx,
      zones,
      resolvers: transport.resolvers,
      specialPurpose: target.type === 'ip' ? specialPurposeOf(target.address) : null,
      verdict,
    });
    findings.push(...limited);
    for (const row of rows) {
      if (row.status !== 'listed' && row.status !== 'clean') ctx.debug(`blacklist: ${row.zone} ${row.query}: ${row.status}: ${row.detail ?? ''}`);
    }
    return {
      kind: 'blacklist',
      target: target.text,
      target_type: target.type,
      verdict,
      zones: rows,
      skipped,
      mx,
      findings,
      resolvers: transport.resolvers.map((resolver) => resolver.label),
      registry_version: registry.version,
      checked_at: checkedAt,
      latency_ms: deadline.elapsedMs(),
    };
  } finally {
    deadline.clear();
  }
}

/**
 * The two ways a check asks DNS: `ask` within the check's deadline, and
 * `askCanary` for a zone's self-test, shared by the targets of a run, so
 * within a deadline of its own.
 */
function deadlineAskers(ctx: EngineContext, transport: DnsTransport, deadline: Deadline): { ask: AskRecords; askCanary: AskA } {
  // A question the deadline cut got no answer from any resolver: the run's memory hears of it as of a
  // transport's timeout (dns-run-memory.ts), which the deadline usually comes before. A resolver that
  // answered anything since the check began is not taken for silent.
  const cut = (of: Deadline) => (error: unknown): never => {
    if (of.expired() && error instanceof NetintelError && error.code === 'timeout') {
      const since = performance.now() - of.elapsedMs();
      for (const resolver of transport.resolvers) ctx.dnsMemory?.timedOut(resolver, since, ctx.timeoutMs);
    }
    throw error;
  };
  const ask: AskRecords = (name, type) => deadline.race(queryRecords(transport, name, type), `${name} ${type}`).catch(cut(deadline));
  const askCanary: AskA = (name) => {
    const own = startDeadline(ctx.timeoutMs);
    return own
      .race(queryRecords(transport, name, 'A'), `${name} A`)
      .catch(cut(own))
      .finally(() => own.clear());
  };
  return { ask, askCanary };
}

function deadZoneSkip(zone: DnsblZone): BlacklistSkippedZone {
  return {
    zone: zone.zone,
    subject: null,
    reason: 'dead',
    detail: `the list is dead${zone.deadSince ? ` since ${zone.deadSince}` : ''}${zone.usage ? ` (${zone.usage.replace(/\.$/, '')})` : ''}; a dead list's answers would read as "not listed"`,
  };
}

/** The rows in zone order, then subject order, and the failures of the rows that could not be checked. */
async function settledRows(tasks: readonly RowTask[]): Promise<{ rows: BlacklistZoneResult[]; unchecked: FailureLike[] }> {
  const outcomes = (await Promise.all(tasks.map(async (task) => ({ task, outcome: await task.promise })))).sort(
    (a, b) => a.task.zoneIndex - b.task.zoneIndex || a.task.subjectIndex - b.task.subjectIndex,
  );
  const rows = outcomes.map((item) => item.outcome.row);
  const unchecked = outcomes.flatMap(({ outcome }): FailureLike[] => (outcome.code === null ? [] : [{ code: outcome.code, message: `${outcome.row.zone}: ${outcome.row.detail ?? outcome.row.status}` }]));
  return { rows, unchecked };
}

/**
 * Asks one zone about one subject and decides the row's status from its
 * answer and the zone's self-test, in this order: a refusal code (in the
 * answer or a test point) is `refused`; no answer is `timeout` or `error`;
 * a self-test that timed out, failed or errored makes the answer
 * untrustworthy (`timeout` / `error`, the answer's codes still shown);
 * then `listed` or `clean`. A listing's TXT reason is asked afterwards,
 * within the same deadline.
 */
async function checkZone(
  zone: DnsblZone,
  subject: IpAddress | string,
  mxHosts: string[],
  canaryReport: Promise<CanaryReport>,
  ask: AskRecords,
  deadline: Deadline,
  untested: () => void,
): Promise<ZoneOutcome> {
  const subjectText = typeof subject === 'string' ? subject : subject.text;
  // Built in one place so that every row has the same keys in the same order.
  const makeRow = (fields: Pick<BlacklistZoneResult, 'query' | 'status' | 'return_codes' | 'detail' | 'canary' | 'latency_ms' | 'resolver'>): BlacklistZoneResult => ({
    zone: zone.zone,
    name: zone.name,
    list_kind: zone.kind,
    subject: subjectText,
    mx_hosts: mxHosts,
    query: fields.query,
    status: fields.status,
    return_codes: fields.return_codes,
    reason: null,
    detail: fields.detail,
    canary: fields.canary,
    latency_ms: fields.latency_ms,
    resolver: fields.resolver,
    delist_url: zone.delistUrl,
  });
  let query: string;
  try {
    query = dnsblQueryName(subject, zone.zone);
  } catch (error) {
    return { row: makeRow({ query: '', status: 'error', return_codes: [], detail: messageOf(error), canary: 'error', latency_ms: 0, resolver: null }), code: 'invalid_input' };
  }
  const canaryOutcome = deadline.race(canaryReport, `the test points of ${zone.zone}`).catch(
    (error: unknown): CanaryReport => ({ status: 'timeout', detail: `the test points did not answer in time: ${messageOf(error)}`, resolver: null }),
  );
  const started = performance.now();
  let reading: DnsblReading | null = null;
  let failure: NetintelError | null = null;
  let resolver: string | null = null;
  try {
    const answer = await ask(query, 'A');
    resolver = answer.resolver;
    reading = readDnsblAnswer(zone, answer.status, answer.records);
  } catch (error) {
    failure = error instanceof NetintelError ? error : new NetintelError('internal', String(error), { cause: error });
  }
  const latencyMs = Math.round((performance.now() - started) * 10) / 10;
  const canary = await canaryOutcome;
  const codes = reading?.codes ?? [];
  // A row that could not be checked carries the code of why: a list that refused, or answered what no list answers, is `upstream` (the peer would not or could not answer).
  const row = (status: DnsblStatus, detail: string | null, code: ErrorCode | null = null): ZoneOutcome => ({
    row: makeRow({ query, status, return_codes: codes, detail, canary: canary.status, latency_ms: latencyMs, resolver }),
    code,
  });

  if (reading?.status === 'refused') return row('refused', `the list refused the query: ${reading.detail}`, 'upstream');
  if (canary.status === 'refused') return row('refused', `the list refused its test points, so its answers cannot be trusted: ${canary.detail}`, 'upstream');
  if (failure) return row(failure.code === 'timeout' ? 'timeout' : 'error', failure.message, failure.code);
  if (canary.status === 'timeout') return row('timeout', `the zone's RFC 5782 test points did not answer in time, so its answer cannot be trusted (${canary.detail})`, 'timeout');
  if (canary.status === 'error') return row('error', `the zone's RFC 5782 test points could not be asked, so its answer cannot be trusted (${canary.detail})`, 'upstream');
  if (canary.status === 'failed') return row('error', `the zone failed its RFC 5782 test points, so its answer cannot be trusted: ${canary.detail}`, 'upstream');
  // The test points vouch for the resolver that answered them; another one (a failover to a public resolver the list filters) was not tested.
  if (resolver !== canary.resolver) {
    untested();
    const tested = canary.resolver === null ? 'were not both answered by one resolver' : `were answered by ${canary.resolver}`;
    return row('error', `the answer came from ${resolver ?? 'no resolver'}, but the zone's RFC 5782 test points ${tested}, so this answer cannot be trusted`, 'upstream');
  }
  if (reading === null || reading.status === 'error') return row('error', reading?.detail ?? 'no answer', 'upstream');
  if (reading.status === 'clean') return row('clean', null);

  const outcome = row('listed', null);
  const listed = outcome.row;
  try {
    const txt = await ask(query, 'TXT');
    const text = txt.records.map((record) => record.text).filter((item) => item.length > 0);
    listed.reason = text.length > 0 ? text.join(' | ') : null;
  } catch (error) {
    listed.detail = `the TXT reason could not be read: ${messageOf(error)}`;
  }
  return outcome;
}

/** The row of a zone whose check failed in an unexpected way (a bug): an `error` row rather than a lost rejection. */
function zoneErrorRow(zone: DnsblZone, subject: IpAddress | string, mxHosts: string[], error: unknown): BlacklistZoneResult {
  return {
    zone: zone.zone,
    name: zone.name,
    list_kind: zone.kind,
    subject: typeof subject === 'string' ? subject : subject.text,
    mx_hosts: mxHosts,
    query: '',
    status: 'error',
    return_codes: [],
    reason: null,
    detail: messageOf(error),
    canary: 'error',
    latency_ms: 0,
    resolver: null,
    delist_url: zone.delistUrl,
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
