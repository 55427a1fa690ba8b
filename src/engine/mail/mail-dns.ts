import type { Answer, RecordType } from 'dns-packet';
import type { EngineContext } from '../context.js';
import type { DnsAnswer, DnsDataByType, DnsStatus, DnsTxtData } from '../dns/dns-result.js';
import { wireRecordType, type DnsRecordType } from '../dns/dns-type.js';
import { NetintelError, toNetintelError } from '../../errors.js';

/** The records of one type at one name, as the mail checks read them. */
export interface MailLookup<T extends DnsRecordType> {
  /** The name asked, lower case, no trailing dot. */
  name: string;
  type: T;
  /** `answer`, `nodata` (the name exists, no record of the type) or `nxdomain`. */
  status: DnsStatus;
  /** The typed data of the records of `type`, in answer order (a CNAME chain leading to them left out). */
  records: DnsDataByType[T][];
  /** Every record of the answer section, the CNAME chain included. */
  answers: DnsAnswer[];
  /** Lowest TTL of `records` in seconds, null when there are none. */
  ttl_seconds: number | null;
  /** The resolver that answered. */
  resolver: string;
}

/** The deprecated SPF RR type (99, RFC 4408 §3.1.1; RFC 7208 §14.1 ended its use). */
export interface SpfTypeLookup {
  name: string;
  status: DnsStatus;
  records: DnsTxtData[];
}

/**
 * DNS access for the mail checks: one check asks the same question once
 * (answers and failures are shared within the check), names are sent as
 * given after lower-casing (SPF targets may hold characters a host name
 * cannot, such as `:` or `/`, and are still valid DNS names), and every
 * query counts toward `queries` for diagnostics.
 *
 * Failures are never turned into "no record": a timeout, SERVFAIL or
 * REFUSED rejects with the transport's NetintelError.
 */
export interface MailDns {
  /**
   * Asks `type` at `name`.
   *
   * @throws NetintelError `timeout`, `upstream`, `unreachable` from the
   *   transport; `invalid_input` for a name that cannot be put on the wire
   *   (empty label, a label over 63 octets, over 253 octets).
   */
  lookup<T extends DnsRecordType>(name: string, type: T): Promise<MailLookup<T>>;
  /** Asks the SPF RR type (99) at `name`; same errors as {@link MailDns.lookup}. */
  lookupSpfType(name: string): Promise<SpfTypeLookup>;
  /** How many distinct questions went to the resolvers. */
  readonly queries: number;
}

/** Creates the DNS access of one check, over the context's transport (so `--resolver` applies). */
export function createMailDns(ctx: EngineContext): MailDns {
  const cache = new Map<string, Promise<unknown>>();
  let queries = 0;

  function cached<R>(key: string, run: () => Promise<R>): Promise<R> {
    let pending = cache.get(key) as Promise<R> | undefined;
    if (!pending) {
      queries += 1;
      pending = run();
      // The rejection is handled by whoever awaits it; keep an unobserved copy quiet.
      pending.catch(() => {});
      cache.set(key, pending);
    }
    return pending;
  }

  return {
    get queries() {
      return queries;
    },
    // Both lookups are async so that a name queryName refuses rejects
    // like any other failure: callers build arrays of lookups for
    // Promise.all, where a synchronous throw would leave the lookups
    // already made unobserved.
    async lookup<T extends DnsRecordType>(name: string, type: T): Promise<MailLookup<T>> {
      const ascii = queryName(name);
      return cached(`${type} ${ascii}`, async () => {
        const transport = await ctx.dnsTransport();
        const exchange = await transport.query(ascii, wireRecordType(type)).catch((error: unknown) => {
          throw toNetintelError(error);
        });
        // The answers of the name asked and its aliases only (answer-chain.ts): a record for another name is not an answer.
        const answers: DnsAnswer[] = exchange.answers;
        const matching = answers.filter((answer) => answer.type === type);
        const status: DnsStatus = exchange.rcode === 'NXDOMAIN' ? 'nxdomain' : matching.length > 0 ? 'answer' : 'nodata';
        ctx.debug(`mail dns: ${ascii} ${type} ${status} (${exchange.resolver})`);
        return {
          name: ascii,
          type,
          status,
          records: matching.map((answer) => answer.data as DnsDataByType[T]),
          answers,
          ttl_seconds: matching.length > 0 ? Math.min(...matching.map((answer) => answer.ttl_seconds)) : null,
          resolver: exchange.resolver,
        };
      });
    },
    async lookupSpfType(name: string): Promise<SpfTypeLookup> {
      const ascii = queryName(name);
      return cached(`SPF ${ascii}`, async () => {
        const transport = await ctx.dnsTransport();
        // dns-packet knows type 99 by name but its type declarations leave it out.
        const exchange = await transport.query(ascii, 'SPF' as RecordType).catch((error: unknown) => {
          throw toNetintelError(error);
        });
        const records = exchange.answerRecords.filter((rr: Answer) => (rr.type as string) === 'SPF').map(spfTypeData);
        const status: DnsStatus = exchange.rcode === 'NXDOMAIN' ? 'nxdomain' : records.length > 0 ? 'answer' : 'nodata';
        return { name: ascii, status, records };
      });
    },
  };
}

/**
 * The wire form of a name: lower case, no trailing dot, checked against the
 * RFC 1035 §2.3.4 limits.
 *
 * @throws NetintelError `invalid_input` naming the problem.
 */
export function queryName(name: string): string {
  const bare = (name.endsWith('.') && name.length > 1 ? name.slice(0, -1) : name).toLowerCase();
  const problem = dnsNameProblem(bare);
  if (problem !== null) {
    throw new NetintelError('invalid_input', `cannot query ${JSON.stringify(name)}: ${problem}`, { details: { input: name } });
  }
  return bare;
}

/** Why `name` (no trailing dot) cannot be asked in DNS, or null when it can. */
export function dnsNameProblem(name: string): string | null {
  if (name.length === 0) return 'the name is empty';
  if (Buffer.byteLength(name) > 253) return `the name is ${Buffer.byteLength(name)} octets long (at most 253)`;
  for (const label of name.split('.')) {
    if (label.length === 0) return 'it has an empty label';
    if (Buffer.byteLength(label) > 63) return `a label is ${Buffer.byteLength(label)} octets long (at most 63)`;
  }
  return null;
}

/** Character strings of a type-99 record, whose RDATA has the TXT layout (RFC 4408 §3.1.1). */
function spfTypeData(rr: Answer): DnsTxtData {
  const data: unknown = 'data' in rr ? rr.data : undefined;
  const parts: Buffer[] = [];
  if (Buffer.isBuffer(data)) {
    for (let offset = 0; offset < data.length; ) {
      const length = data[offset]!;
      parts.push(data.subarray(offset + 1, offset + 1 + length));
      offset += 1 + length;
    }
  } else if (Array.isArray(data)) {
    for (const part of data) parts.push(Buffer.isBuffer(part) ? part : Buffer.from(String(part), 'utf8'));
  }
  return { text: Buffer.concat(parts).toString('utf8'), strings: parts.map((part) => part.toString('utf8')) };
}
