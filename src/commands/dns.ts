import { Option, type Command } from 'commander';
import { flattenBatches, mapOrdered } from '../engine/bulk/map-ordered.js';
import { readTargetBatches, targetsFromArguments } from '../engine/bulk/read-targets.js';
import type { DnsResult } from '../engine/dns/dns-result.js';
import type { Outcome } from '../engine/outcome.js';
import { NetintelError, toNetintelError } from '../errors.js';
import { DNS_SCHEMA } from '../output/schemas/dns-schema.js';
import { escapeTerminalText } from '../output/terminal-text.js';
import { emitOutcomes } from '../cli/emit.js';
import { stdinBringsList } from '../cli/io.js';
import type { CommandRuntime } from '../cli/runtime.js';
import { regularFileSize } from '../cli/progress.js';
import type { EngineContext } from '../engine/context.js';
import type { DnsTarget } from '../engine/dns/dns-name.js';
import type { DnsTransport } from '../engine/dns/dns-transport.js';
import type { DnsQueryType, DnsRecordType } from '../engine/dns/dns-type.js';

export function registerDnsCommand(program: Command, runtime: CommandRuntime): void {
  program
    .command('dns')
    .description('DNS records of names (an IP address means a reverse PTR lookup), typed, with rcodes, TTLs and the resolver that answered')
    .argument('[targets...]', 'domain names or IP addresses; read from stdin when piped')
    .addOption(new Option('--type <types>', 'A, AAAA, CNAME, MX, NS, SOA, TXT, CAA, PTR, SRV, DS, DNSKEY, RRSIG, NSEC, NSEC3, TLSA, SVCB, HTTPS, comma-separated, or ALL'))
    .addOption(new Option('--dnssec', 'ask with the DO bit, show RRSIGs and the AD bit, and validate the chain from the trust anchor'))
    .addOption(new Option('--trust-anchor <file>', 'with --dnssec: DS or DNSKEY records in zone-file form to start from (default: the IANA root KSKs)'))
    .addHelpText(
      'after',
      [
        '',
        'NXDOMAIN and NODATA are answers (exit 0); SERVFAIL/REFUSED (exit 5) and timeouts (exit 4) are errors.',
        'ALL asks A AAAA CNAME MX NS SOA TXT CAA concurrently (ANY is deprecated by RFC 8482).',
        '--dnssec gives each answer a verdict: secure, insecure, bogus (an error finding) or indeterminate.',
        'Examples:',
        '  netintel dns example.com --type MX',
        '  netintel dns example.com --type ALL -f json',
        '  netintel dns 8.8.8.8                      # PTR',
        '  netintel dns bücher.example --resolver 9.9.9.9 --tcp',
        '  netintel dns --type A,AAAA -f csv < names.txt',
        '  netintel dns example.com --type MX --dnssec',
        '  netintel dns www.example.test --dnssec --trust-anchor Kexample.test.+013+12345.key',
      ].join('\n'),
    )
    .action(async (targets: string[], flags: { type?: string; dnssec?: boolean; trustAnchor?: string }, command: Command) => {
      const options = runtime.options(command);
      const ctx = runtime.context(options);
      const { io } = runtime;
      // The DNS engine (and its sockets, crypto, dns-packet) loads only when this command runs.
      const dns = await loadDnsEngine();
      const types = flags.type === undefined ? null : dns.parseDnsTypes(flags.type);
      const dnssec = flags.dnssec === true || flags.trustAnchor !== undefined;
      if (dnssec && options.remote) {
        throw new NetintelError('usage', 'dns --dnssec validates on this machine (drop --server, or drop --dnssec)');
      }
      // Remote mode (--server): the same records, asked of a netintel server (which uses its own resolvers).
      const remote = options.remote ? (await import('../cli/remote-mode.js')).openRemoteEngine(options, io, runtime.progress) : null;
      const asked = types === null ? null : dns.expandDnsTypes(types);
      const lookup = remote
        ? (query: string) => remote.dnsOutcomes(query, asked)
        : dnssec
          ? await createDnssecLookup(dns, ctx, types, flags.trustAnchor)
          : createDnsLookup(dns, ctx, types);
      if (targets.length === 0) {
        // Without this, a bare `netintel dns` at a terminal would sit waiting for typed input.
        if (!stdinBringsList(io)) {
          throw new NetintelError('usage', 'dns needs a domain or an IP address: give one or more, or pipe a list in');
        }
        const batches = readTargetBatches(runtime.progress.input(io.stdin, () => regularFileSize(0)));
        const outcomes = runtime.progress.track(flattenBatches(mapOrdered(batches, (target) => lookup(target.text), options.concurrency)), true);
        runtime.exitCode = await emitOutcomes(io, options, DNS_SCHEMA, outcomes, { single: false, bulk: true });
        return;
      }
      const single = targets.length === 1 && (types === null || dns.expandDnsTypes(types).length === 1);
      const notes: string[] = [];
      const outcomes = notingIgnored(flattenBatches(mapOrdered([targetsFromArguments(targets)], (target) => lookup(target.text), options.concurrency)), notes);
      runtime.exitCode = await emitOutcomes(io, options, DNS_SCHEMA, outcomes, { single, bulk: false });
      // The records (ignoredAnswers) say it in every format; on stderr a person reads it beside any view.
      if (!options.quiet) for (const note of notes) io.stderr.write(`netintel: ${escapeTerminalText(note)}\n`);
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

/**
 * The `--dnssec` lookup of one target: each type validated from the trust
 * anchor (`--trust-anchor FILE`, or the IANA root), one outcome per type.
 */
async function createDnssecLookup(
  dns: DnsEngine,
  ctx: EngineContext,
  types: readonly DnsQueryType[] | null,
  anchorFile: string | undefined,
): Promise<(query: string) => Promise<Array<Outcome<DnsResult>>>> {
  const [{ resolveDnssecType }, { rootTrustAnchor }, { readTrustAnchorFile }] = await Promise.all([
    import('../engine/dns/dnssec/dnssec-report.js'),
    import('../engine/dns/dnssec/trust-anchor.js'),
    import('../cli/trust-anchor-file.js'),
  ]);
  const anchor = anchorFile === undefined ? rootTrustAnchor() : readTrustAnchorFile(anchorFile);
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
function createDnsLookup(
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

/**
 * Passes the outcomes through, noting each record whose answer held records
 * for names off the question's chain: they were ignored (RFC 2181 §5.4.1),
 * and a person should know the resolver sent them.
 */
async function* notingIgnored(outcomes: AsyncIterable<Array<Outcome<DnsResult>>>, notes: string[]): AsyncGenerator<Array<Outcome<DnsResult>>> {
  for await (const batch of outcomes) {
    for (const outcome of batch) {
      if (!outcome.ok || !(outcome.value.ignoredAnswers > 0)) continue;
      const { domain, type, ignoredAnswers, resolver } = outcome.value;
      const records = ignoredAnswers === 1 ? '1 record' : `${ignoredAnswers} records`;
      notes.push(`${domain} ${type}: ${resolver} also sent ${records} for other names, not ${domain} nor an alias of it; ignored, not an answer`);
    }
    yield batch;
  }
}
