import type { EngineContext } from '../context.js';
import { NetintelError } from '../../errors.js';
import { createDnsTransport } from './dns-transport.js';
import { queryRecords } from './query-records.js';
import { parseResolverAddress, type ResolverAddress } from './resolver-address.js';
import { reportStage } from '../stage.js';

/**
 * Every address of a host name: its A and AAAA records, asked concurrently.
 *
 * @throws NetintelError `not_found` when the name has neither (NXDOMAIN or
 *   no address records), naming which; DNS errors as the transport throws them.
 */
export async function resolveHostAddresses(ctx: EngineContext, name: string): Promise<string[]> {
  const transport = await ctx.dnsTransport();
  const [a, aaaa] = await Promise.all([queryRecords(transport, name, 'A'), queryRecords(transport, name, 'AAAA')]);
  const addresses = [...a.records, ...aaaa.records];
  if (addresses.length === 0) {
    const why = a.status === 'nxdomain' ? 'does not exist (NXDOMAIN)' : 'has no A or AAAA records';
    throw new NetintelError('not_found', `${a.name} ${why} at ${a.resolver}`, { details: { input: name, rcode: a.rcode } });
  }
  return addresses;
}

/**
 * Name servers that answer with the address a query comes from:
 * OpenDNS's `myip.opendns.com` (A) and Google's `o-o.myaddr.l.google.com` (TXT).
 */
export const CALLER_IP_SOURCES: ReadonlyArray<{ resolver: string; name: string; type: 'A' | 'TXT' }> = [
  { resolver: '208.67.222.222', name: 'myip.opendns.com', type: 'A' },
  { resolver: '216.239.32.10', name: 'o-o.myaddr.l.google.com', type: 'TXT' },
];

/**
 * The caller's public IP address, asked of name servers that echo it
 * (`sources` injectable for tests). Tries each source in turn.
 *
 * @throws NetintelError `unreachable` (or the last source's error code)
 *   saying that no source answered, which usually means there is no network.
 */
export async function lookupCallerIp(
  ctx: EngineContext,
  sources: ReadonlyArray<{ resolver: string; name: string; type: 'A' | 'TXT' }> = CALLER_IP_SOURCES,
): Promise<string> {
  const failures: string[] = [];
  let lastCode: NetintelError['code'] = 'unreachable';
  for (const source of sources) {
    const resolver: ResolverAddress = parseResolverAddress(source.resolver);
    const transport = createDnsTransport({ resolvers: [resolver], timeoutMs: Math.min(ctx.timeoutMs, 3000), retries: 1 });
    try {
      reportStage(ctx, 'dns', source.name, source.type);
      const answer = await queryRecords(transport, source.name, source.type);
      const value = source.type === 'A' ? answer.records[0] : (answer.records[0] as { text: string } | undefined)?.text;
      if (typeof value === 'string' && value.length > 0) return value;
      failures.push(`${source.name} at ${source.resolver}: no answer`);
    } catch (error) {
      const failure = error instanceof NetintelError ? error : null;
      lastCode = failure?.code ?? 'unreachable';
      failures.push(`${source.name} at ${source.resolver}: ${failure?.code ?? String(error)}`);
    } finally {
      await transport.close();
    }
  }
  throw new NetintelError(lastCode === 'timeout' ? 'timeout' : 'unreachable', `cannot find your public IP (are you offline?): ${failures.join('; ')}`, {
    details: { sources: failures },
  });
}
