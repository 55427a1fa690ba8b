import { NetintelError } from '../../errors.js';
import { parseIpAddress } from '../address/ip-address.js';
import type { CanaryStatus } from './blacklist-result.js';
import { dnsblQueryName, readDnsblAnswer, type DnsblReading } from './dnsbl-answer.js';
import type { DnsblZone } from './dnsbl-registry.js';

/** The outcome of a zone's RFC 5782 §5 self-test, with the reason when it did not pass. */
export interface CanaryReport {
  status: CanaryStatus;
  detail: string | null;
  /**
   * The resolver that answered both test points, or null (they were not
   * both answered, or two resolvers answered them): a passed self-test
   * vouches for this resolver's view of the zone only. A resolver that
   * filters the zone (a public one Spamhaus answers NXDOMAIN) would read
   * every address as not listed.
   */
  resolver: string | null;
}

/** Asks the A records of a name; rejects with a NetintelError (timeout, upstream, unreachable...). `resolver` names the one that answered. */
export type AskA = (name: string) => Promise<{ status: 'answer' | 'nodata' | 'nxdomain'; records: string[]; resolver?: string }>;

/**
 * Runs and remembers the test points of each zone for one run: every
 * target of a bulk run shares one self-test per zone. Definite outcomes
 * (passed through one resolver, failed, refused) are kept for the run; a
 * timeout, an error or a pass split between two resolvers is forgotten
 * once settled, so that a later target asks again.
 */
export interface CanaryCache {
  /** The zone's self-test, started on first call; `ask` sends the queries (with their own deadline). */
  check(zone: DnsblZone, ask: AskA): Promise<CanaryReport>;
  /**
   * Forgets `report`, the zone's self-test, when it is still the one kept:
   * a zone answer came from a resolver it does not vouch for (a failover),
   * so the next target tests the zone again, through the resolvers as they
   * now stand.
   */
  forget(zone: DnsblZone, report: Promise<CanaryReport>): void;
}

export function createCanaryCache(): CanaryCache {
  const reports = new Map<string, Promise<CanaryReport>>();
  const keyOf = (zone: DnsblZone) => `${zone.kind}:${zone.zone}`;
  return {
    check(zone, ask) {
      const key = keyOf(zone);
      let report = reports.get(key);
      if (!report) {
        const started = runCanaries(zone, ask);
        report = started;
        reports.set(key, started);
        // Kept for the run only when definite: a pass that no single resolver gave vouches for none.
        const drop = () => {
          if (reports.get(key) === started) reports.delete(key);
        };
        started.then((outcome) => {
          if (outcome.status === 'timeout' || outcome.status === 'error' || (outcome.status === 'passed' && outcome.resolver === null)) drop();
        }, drop);
      }
      return report;
    },
    forget(zone, report) {
      if (reports.get(keyOf(zone)) === report) reports.delete(keyOf(zone));
    },
  };
}

type PointOutcome = { ok: true; reading: DnsblReading; resolver: string | null } | { ok: false; error: NetintelError };

/**
 * Asks both test points of a zone at once: the listed one must be listed
 * (a listing code, not a refusal), the other must not be (NXDOMAIN). A
 * zone that fails is dead, misnamed, lists the whole world, or is filtered
 * by the resolver; one that answers a refusal code refuses this resolver.
 */
export async function runCanaries(zone: DnsblZone, ask: AskA): Promise<CanaryReport> {
  let listedName: string;
  let notListedName: string;
  try {
    listedName = canaryQueryName(zone, zone.canaries.listed);
    notListedName = canaryQueryName(zone, zone.canaries.notListed);
  } catch (error) {
    // A zone (from a user's zone list) whose test points cannot be put on
    // the wire: its self-test fails, the check goes on. The report is often
    // started and not awaited, so it must never reject.
    return { status: 'error', detail: `the test points cannot be asked: ${error instanceof Error ? error.message : String(error)}`, resolver: null };
  }
  const askPoint = async (name: string): Promise<PointOutcome> => {
    try {
      const answer = await ask(name);
      return { ok: true, reading: readDnsblAnswer(zone, answer.status, answer.records), resolver: answer.resolver ?? null };
    } catch (error) {
      return {
        ok: false,
        error: error instanceof NetintelError ? error : new NetintelError('internal', String(error), { cause: error }),
      };
    }
  };
  const [listed, notListed] = await Promise.all([askPoint(listedName), askPoint(notListedName)]);
  const positive = judge(zone.canaries.listed, listed, true);
  const negative = judge(zone.canaries.notListed, notListed, false);
  const resolver = listed.ok && notListed.ok && listed.resolver === notListed.resolver ? listed.resolver : null;
  for (const status of ['refused', 'failed', 'error', 'timeout'] as const) {
    const hits = [positive, negative].filter((report) => report.status === status);
    if (hits.length > 0) return { status, detail: hits.map((report) => report.detail).join('; '), resolver };
  }
  return { status: 'passed', detail: null, resolver };
}

function judge(point: string, outcome: PointOutcome, mustBeListed: boolean): Omit<CanaryReport, 'resolver'> {
  if (!outcome.ok) {
    const status: CanaryStatus = outcome.error.code === 'timeout' ? 'timeout' : 'error';
    return { status, detail: `test point ${point}: ${outcome.error.message}` };
  }
  const { reading } = outcome;
  const codes = reading.codes.map((code) => code.address).join(', ');
  if (reading.status === 'refused') return { status: 'refused', detail: `test point ${point} answered ${reading.detail}` };
  if (reading.status === 'error') return { status: 'failed', detail: `test point ${point}: ${reading.detail}` };
  if (mustBeListed && reading.status === 'clean') {
    return {
      status: 'failed',
      detail:
        `test point ${point} is not listed (RFC 5782 §5 says it must be): the zone is dead or misnamed, ` +
        'or the resolver does not pass its answers through',
    };
  }
  if (!mustBeListed && reading.status === 'listed') {
    return {
      status: 'failed',
      detail: `test point ${point} is listed (${codes}), which RFC 5782 §5 forbids: the zone answers every query as listed`,
    };
  }
  return { status: 'passed', detail: null };
}

/** The query name of a test point: an address reversed for IP lists, a name as is for domain lists. */
export function canaryQueryName(zone: DnsblZone, point: string): string {
  return zone.kind === 'ip' ? dnsblQueryName(parseIpAddress(point), zone.zone) : dnsblQueryName(point, zone.zone);
}
