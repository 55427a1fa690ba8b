/**
 * GET /api/dns-lookup's answer (docs/api.md, Endpoints), loaded with the
 * route's first request.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DnsResult } from '../engine/dns/dns-result.js';
import type { DnsTransport } from '../engine/dns/dns-transport.js';
import { closeOnAbort } from '../engine/dns/close-on-abort.js';
import { NetintelError, toNetintelError } from '../errors.js';
import type { ApiContext } from '../server/api-route.js';

interface DnsQuery {
  domain: string;
  type?: string;
  resolver?: string;
}

async function loadDnsEngine() {
  const [name, type, resolve, transport, resolver] = await Promise.all([
    import('../engine/dns/dns-name.js'),
    import('../engine/dns/dns-type.js'),
    import('../engine/dns/resolve-dns.js'),
    import('../engine/dns/dns-transport.js'),
    import('../engine/dns/resolver-address.js'),
  ]);
  return { ...name, ...type, ...resolve, ...transport, ...resolver };
}

/** DNS's own port: a caller-chosen resolver may not be pointed at other services. */
const DNS_PORT = 53;

/**
 * The answer `netintel dns DOMAIN --type T -f json` prints: one type, its
 * record (a failure is the error answer); several types, an array of
 * records, with a `{query, error}` item for a type that failed.
 */
export async function dnsLookup(request: FastifyRequest, _reply: FastifyReply, api: ApiContext): Promise<unknown> {
  const query = request.query as DnsQuery;
  const dns = await loadDnsEngine();
  const types = dns.expandDnsTypes(query.type === undefined ? [] : dns.parseDnsTypes(query.type));
  const target = dns.parseDnsTarget(query.domain);
  const asked = types.length > 0 ? types : [target.reverse ? 'PTR' as const : 'A' as const];

  let transport: DnsTransport;
  let own: DnsTransport | null = null;
  if (query.resolver !== undefined) {
    const resolver = dns.parseResolverAddress(query.resolver);
    // The context's connect guard judges the caller's resolver (the server's own are not judged); no socket is open yet.
    own = dns.createDnsTransport({ resolvers: [resolver], tcp: api.ctx.dnsTcp, timeoutMs: api.ctx.timeoutMs, retries: api.ctx.dnsRetries, connectGuard: api.ctx.connectGuard });
    if (!api.guard.allowPrivate && resolver.port !== DNS_PORT) {
      await own.close();
      throw new NetintelError('forbidden', `resolver port ${resolver.port} is not DNS's (53)`, { details: { resolver: resolver.label, rule: 'resolver-port' } });
    }
    transport = own;
  } else {
    transport = await api.ctx.dnsTransport();
  }
  const stopListening = own === null ? () => {} : closeOnAbort(own, api.ctx.signal);
  try {
    const answers = await Promise.all(
      asked.map((type) =>
        dns.resolveDnsType(transport, target, type).then(
          (record): DnsResult | { query: string; error: ReturnType<NetintelError['toJSON']> } => record,
          (error: unknown) => {
            if (asked.length === 1) throw error;
            return { query: `${query.domain} ${type}`, error: toNetintelError(error).toJSON() };
          },
        ),
      ),
    );
    return asked.length === 1 ? answers[0] : answers;
  } finally {
    stopListening();
    await own?.close();
  }
}

