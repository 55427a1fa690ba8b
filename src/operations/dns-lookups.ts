import type { EngineContext } from '../engine/context.js';
import type { DnsTarget } from '../engine/dns/dns-name.js';
import type { DnsResult } from '../engine/dns/dns-result.js';
import type { DnsTransport } from '../engine/dns/dns-transport.js';
import type { TrustAnchor } from '../engine/dns/dnssec/trust-anchor.js';
import type { DnsQueryType, DnsRecordType } from '../engine/dns/dns-type.js';
import type { Outcome } from '../engine/outcome.js';
import { NetintelError, toNetintelError } from '../errors.js';

/**
 * The local lookups of `netintel dns`: one outcome per type asked of each
 * target, plain or validated from a trust anchor (--dnssec). Loaded with
 * the run that needs them.
 */

export async function loadDnsEngine() {
  const [name, type, resolve] = await Promise.all([
    import('../engine/dns/dns-name.js'),
    import('../engine/dns/dns-type.js'),
    import('../engine/dns/resolve-dns.js'),
  ]);
  return { ...name, ...type, ...resolve };
}

export type DnsEngine = Awaited<ReturnType<typeof loadDnsEngine>>;

/**
 * The `--dnssec` lookup of one target: each type validated from the trust
 * anchor (`--trust-anchor FILE`, or the IANA root KSKs), one outcome per type.
 */
export async function createDnssecLookup(
  dns: DnsEngine,
  ctx: EngineContext,
  types: readonly DnsQueryType[] | null,
  trustAnchor: TrustAnchor | undefined,
): Promise<(query: string) => Promise<Array<Outcome<DnsResult>>>> {
  const [{ resolveDnssecType }, { rootTrustAnchor }] = await Promise.all([import('../engine/dns/dnssec/dnssec-report.js'), import('../engine/dns/dnssec/trust-anchor.js')]);
  const anchor = trustAnchor ?? rootTrustAnchor();
  const asked = types === null ? null : dns.expandDnsTypes(types);
  return async (query) => {
    let target: DnsTarget;
    try {
      target = dns.parseDnsTarget(query);
    } catch (error) {
      return [{ ok: false, query, error: toNetintelError(error) }];
    }
    const typesOfTarget = asked ?? [target.reverse ? 'PTR' : 'A'];
    return Promise.all(
      typesOfTarget.map((type) =>
        resolveDnssecType(ctx, target, type, anchor).then(
          (value): Outcome<DnsResult> => ({ ok: true, query, value }),
          (error: unknown): Outcome<DnsResult> => ({ ok: false, query: typesOfTarget.length > 1 ? `${query} ${type}` : query, error: toNetintelError(error) }),
        ),
      ),
    );
  };
}

/**
 * The lookup of one target: one outcome per type asked, so that a type that
 * fails does not hide the others' answers. The type list is expanded and
 * the transport fetched once per run, not per target, and a target costs
 * one promise plus one per type (bulk runs make tens of thousands).
 */
export function createDnsLookup(
  dns: DnsEngine,
  ctx: EngineContext,
  types: readonly DnsQueryType[] | null,
): (query: string) => Promise<Array<Outcome<DnsResult>>> {
  const asked = types === null ? null : dns.expandDnsTypes(types);
  let transport: DnsTransport | null = null;
  const failed = (query: string, error: unknown): Array<Outcome<DnsResult>> => [{ ok: false, query, error: toNetintelError(error) }];
  return (query) => {
    let target: DnsTarget;
    try {
      target = dns.parseDnsTarget(query);
    } catch (error) {
      return Promise.resolve(failed(query, error));
    }
    const typesOfTarget = asked ?? [target.reverse ? 'PTR' : 'A'];
    if (transport !== null) return settleTypes(dns, transport, target, typesOfTarget, query);
    return ctx.dnsTransport().then(
      (ready) => settleTypes(dns, (transport = ready), target, typesOfTarget, query),
      (error: unknown) => failed(query, error),
    );
  };
}

/** Every type of one target, each as its outcome, in the order asked. Never rejects. */
function settleTypes(
  dns: DnsEngine,
  transport: DnsTransport,
  target: DnsTarget,
  types: readonly DnsRecordType[],
  query: string,
): Promise<Array<Outcome<DnsResult>>> {
  return new Promise((resolve) => {
    dns.resolveDnsTypesSettled(transport, target, types, (settled) => {
      const outcomes = new Array<Outcome<DnsResult>>(settled.length);
      for (let i = 0; i < settled.length; i++) {
        const result = settled[i]!;
        outcomes[i] = result instanceof NetintelError ? { ok: false, query: `${query} ${types[i]}`, error: result } : { ok: true, query, value: result };
      }
      resolve(outcomes);
    });
  });
}

