import { Option, type Command } from 'commander';
import { flattenBatches, mapOrdered } from '../engine/bulk/map-ordered.js';
import { readTargetBatches, targetsFromArguments } from '../engine/bulk/read-targets.js';
import type { DnsResult } from '../engine/dns/dns-result.js';
import type { Outcome } from '../engine/outcome.js';
import { NetintelError, toNetintelError } from '../errors.js';
import { DNS_SCHEMA } from '../output/schemas/dns-schema.js';
import { emitOutcomes } from '../cli/emit.js';
import type { CommandRuntime } from '../cli/runtime.js';
import type { EngineContext } from '../engine/context.js';
import type { DnsQueryType } from '../engine/dns/dns-type.js';

export function registerDnsCommand(program: Command, runtime: CommandRuntime): void {
  program
    .command('dns')
    .description('DNS records of names (an IP address means a reverse PTR lookup), typed, with rcodes, TTLs and the resolver that answered')
    .argument('[targets...]', 'domain names or IP addresses; read from stdin when piped')
    .addOption(new Option('--type <types>', 'A, AAAA, CNAME, MX, NS, SOA, TXT, CAA, PTR, SRV, comma-separated, or ALL'))
    .addHelpText(
      'after',
      [
        '',
        'NXDOMAIN and NODATA are answers (exit 0); SERVFAIL/REFUSED (exit 5) and timeouts (exit 4) are errors.',
        'ALL asks A AAAA CNAME MX NS SOA TXT CAA concurrently (ANY is deprecated by RFC 8482).',
        'Examples:',
        '  netintel dns example.com --type MX',
        '  netintel dns example.com --type ALL -f json',
        '  netintel dns 8.8.8.8                      # PTR',
        '  netintel dns bücher.example --resolver 9.9.9.9 --tcp',
        '  netintel dns --type A,AAAA -f csv < names.txt',
      ].join('\n'),
    )
    .action(async (targets: string[], flags: { type?: string }, command: Command) => {
      const options = runtime.options(command);
      const ctx = runtime.context(options);
      const { io } = runtime;
      // The DNS engine (and its sockets, crypto, dns-packet) loads only when this command runs.
      const dns = await loadDnsEngine();
      const types = flags.type === undefined ? null : dns.parseDnsTypes(flags.type);
      const lookup = (query: string) => dnsOutcomes(dns, ctx, query, types);
      if (targets.length === 0) {
        // Without this, a bare `netintel dns` at a terminal would sit waiting for typed input.
        if (io.stdin.isTTY === true) {
          throw new NetintelError('usage', 'dns needs a domain or an IP address: give one or more, or pipe a list in');
        }
        const batches = readTargetBatches(io.stdin);
        const outcomes = flattenBatches(mapOrdered(batches, (target) => lookup(target.text), options.concurrency));
        runtime.exitCode = await emitOutcomes(io, options, DNS_SCHEMA, outcomes, { single: false, bulk: true });
        return;
      }
      const single = targets.length === 1 && (types === null || dns.expandDnsTypes(types).length === 1);
      const outcomes = flattenBatches(mapOrdered([targetsFromArguments(targets)], (target) => lookup(target.text), options.concurrency));
      runtime.exitCode = await emitOutcomes(io, options, DNS_SCHEMA, outcomes, { single, bulk: false });
    });
}

async function loadDnsEngine() {
  const [name, type, resolve] = await Promise.all([
    import('../engine/dns/dns-name.js'),
    import('../engine/dns/dns-type.js'),
    import('../engine/dns/resolve-dns.js'),
  ]);
  return { ...name, ...type, ...resolve };
}

type DnsEngine = Awaited<ReturnType<typeof loadDnsEngine>>;

/** One outcome per type asked: a type that fails does not hide the others' answers. */
async function dnsOutcomes(
  dns: DnsEngine,
  ctx: EngineContext,
  query: string,
  types: readonly DnsQueryType[] | null,
): Promise<Array<Outcome<DnsResult>>> {
  try {
    const target = dns.parseDnsTarget(query);
    const transport = await ctx.dnsTransport();
    const asked = dns.expandDnsTypes(types ?? [target.reverse ? 'PTR' : 'A']);
    return await Promise.all(
      asked.map((type) =>
        dns.resolveDnsType(transport, target, type).then(
          (value): Outcome<DnsResult> => ({ ok: true, query, value }),
          (error: unknown): Outcome<DnsResult> => ({ ok: false, query: `${query} ${type}`, error: toNetintelError(error) }),
        ),
      ),
    );
  } catch (error) {
    return [{ ok: false, query, error: toNetintelError(error) }];
  }
}
