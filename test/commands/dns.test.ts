/**
 * `netintel dns` in-process: main(argv, io) with memory streams, against
 * real DNS servers on 127.0.0.1 (test/support/dns-server.ts). A small UDP
 * relay in front of one of them fails chosen record types and delays chosen
 * names, for the per-type failure and ordering cases the server cannot
 * express on its own.
 */
import dgram from 'node:dgram';
import dnsPacket from 'dns-packet';
import type { DecodedPacket } from 'dns-packet';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DNS_SCHEMA } from '../../src/output/schemas/dns-schema.js';
import { parseCsv } from '../output/parse-csv.js';
import { runCli, type RunOptions, type RunResult } from '../support/cli.js';
import { startDnsServer, type DnsTestServer, type ZoneRecord } from '../support/dns-server.js';

/** What the CLI adds to an rcode failure on stderr (src/cli/next-step.ts). */
const SERVFAIL_STEP = 'a broken or DNSSEC-bogus zone, or a server that cannot reach it: try another with --resolver';
const REFUSED_STEP = 'the server will not resolve for this machine: name another with --resolver';

const V6_REVERSE = '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa';
const LONG_TXT = ['a'.repeat(255), 'b'.repeat(255), 'c'.repeat(10)];
const BIG_TXT = Array.from({ length: 6 }, (_, i) => String(i).repeat(250));

const ZONE: ZoneRecord[] = [
  {
    name: 'example.test',
    type: 'SOA',
    ttl: 3600,
    data: { mname: 'ns1.example.test', rname: 'hostmaster.example.test', serial: 2024010101, refresh: 7200, retry: 900, expire: 1209600, minimum: 300 },
  },
  { name: 'example.test', type: 'NS', ttl: 86400, data: 'ns1.example.test' },
  { name: 'example.test', type: 'NS', ttl: 86400, data: 'ns2.example.test' },
  { name: 'example.test', type: 'A', ttl: 300, data: '192.0.2.10' },
  { name: 'example.test', type: 'A', ttl: 300, data: '192.0.2.11' },
  { name: 'example.test', type: 'AAAA', ttl: 600, data: '2001:db8::10' },
  { name: 'example.test', type: 'MX', ttl: 3600, data: { preference: 10, exchange: 'mx1.example.test' } },
  { name: 'example.test', type: 'MX', ttl: 3600, data: { preference: 20, exchange: 'mx2.example.test' } },
  { name: 'example.test', type: 'TXT', ttl: 600, data: 'v=spf1 mx -all' },
  { name: 'example.test', type: 'CAA', ttl: 3600, data: { flags: 0, tag: 'issue', value: 'letsencrypt.org' } },
  { name: 'example.test', type: 'CAA', ttl: 3600, data: { flags: 128, tag: 'iodef', value: 'mailto:security@example.test' } },
  { name: 'mx1.example.test', type: 'A', ttl: 300, data: '192.0.2.25' },
  { name: 'long.example.test', type: 'TXT', ttl: 60, data: LONG_TXT },
  { name: 'quote.example.test', type: 'TXT', ttl: 60, data: ['say "hi"', 'back\\slash'] },
  ...BIG_TXT.map((text): ZoneRecord => ({ name: 'big.example.test', type: 'TXT', ttl: 60, data: text })),
  { name: '_sip._tcp.example.test', type: 'SRV', ttl: 120, data: { priority: 10, weight: 60, port: 5060, target: 'sip.example.test' } },
  { name: 'www.example.test', type: 'CNAME', ttl: 120, data: 'web.example.test' },
  { name: 'web.example.test', type: 'CNAME', ttl: 60, data: 'origin.example.test' },
  { name: 'origin.example.test', type: 'A', ttl: 30, data: '192.0.2.80' },
  { name: 'xn--bcher-kva.example.test', type: 'A', ttl: 300, data: '192.0.2.20' },
  { name: 'trunc.example.test', type: 'A', ttl: 300, data: '192.0.2.30' },
  { name: 'slow.example.test', type: 'A', ttl: 300, data: '192.0.2.40' },
  { name: '10.2.0.192.in-addr.arpa', type: 'PTR', ttl: 3600, data: 'example.test' },
  { name: V6_REVERSE, type: 'PTR', ttl: 3600, data: 'v6.example.test' },
];

const CSV_HEADER = ['query', 'target', 'domain', 'domain_unicode', 'type', 'status', 'rcode', 'answers', 'resolver', 'transport', 'latency_ms', 'error.code', 'error.message'];

interface Relay {
  address: string;
  close(): Promise<void>;
}

/**
 * A UDP relay in front of `upstream`: questions of a type in `failTypes` get
 * that rcode at once, questions for a name in `delayNames` are answered that
 * many milliseconds late, everything else is passed through unchanged.
 */
async function startRelay(
  upstream: DnsTestServer,
  rules: { failTypes?: Record<string, 'SERVFAIL' | 'REFUSED'>; delayNames?: Record<string, number> },
): Promise<Relay> {
  const front = dgram.createSocket('udp4');
  const back = dgram.createSocket('udp4');
  const clients = new Map<number, { port: number; address: string; delayMs: number }>();
  const timers = new Set<NodeJS.Timeout>();
  front.on('message', (message, remote) => {
    let query: DecodedPacket;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    const rcode = rules.failTypes?.[question.type];
    if (rcode) {
      const reply = dnsPacket.encode({
        type: 'response',
        id: query.id ?? 0,
        flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (rcode === 'SERVFAIL' ? 2 : 5),
        questions: [question],
      });
      front.send(reply, remote.port, remote.address);
      return;
    }
    clients.set(query.id ?? 0, { port: remote.port, address: remote.address, delayMs: rules.delayNames?.[question.name.toLowerCase()] ?? 0 });
    back.send(message, upstream.port, upstream.host);
  });
  back.on('message', (message) => {
    const client = clients.get(message.readUInt16BE(0));
    if (!client) return;
    clients.delete(message.readUInt16BE(0));
    const timer = setTimeout(() => {
      timers.delete(timer);
      front.send(message, client.port, client.address);
    }, client.delayMs);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => front.bind(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => back.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${front.address().port}`,
    async close() {
      timers.forEach((timer) => clearTimeout(timer));
      await Promise.all([
        new Promise<void>((resolve) => front.close(() => resolve())),
        new Promise<void>((resolve) => back.close(() => resolve())),
      ]);
    },
  };
}

let server: DnsTestServer;
let silent: DnsTestServer;
let refusing: DnsTestServer;
let mxFailing: Relay;
let slowFirst: Relay;

beforeAll(async () => {
  server = await startDnsServer({
    records: ZONE,
    behaviours: {
      'broken.example.test': 'servfail',
      'closed.example.test': 'refused',
      'quiet.example.test': 'silent',
      'trunc.example.test': 'truncate',
    },
  });
  silent = await startDnsServer({ records: ZONE, defaultBehaviour: 'silent' });
  refusing = await startDnsServer({ records: ZONE, defaultBehaviour: 'refused' });
  mxFailing = await startRelay(server, { failTypes: { MX: 'SERVFAIL' } });
  slowFirst = await startRelay(server, { delayNames: { 'slow.example.test': 150 } });
});

afterAll(async () => {
  await Promise.all([server?.close(), silent?.close(), refusing?.close(), mxFailing?.close(), slowFirst?.close()]);
});

beforeEach(() => {
  server.queries.length = 0;
  silent.queries.length = 0;
  refusing.queries.length = 0;
});

/** `netintel dns ...argv` against the test server (or `resolver`), with a short deadline and no retries. */
function dns(argv: string[], options: RunOptions & { resolver?: string } = {}): Promise<RunResult> {
  const { resolver, ...run } = options;
  return runCli(['dns', ...argv, '--resolver', resolver ?? server.address, '-t', '500', '--retries', '0'], run);
}

function json<T = Record<string, unknown>>(result: RunResult): T {
  return JSON.parse(result.stdout) as T;
}

function ndjson(result: RunResult): Array<Record<string, unknown>> {
  return result.stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The CSV rows as objects keyed by the header. */
function csvRecords(result: RunResult): Array<Record<string, string>> {
  const [header, ...rows] = parseCsv(result.stdout);
  return rows.map((row) => Object.fromEntries(header!.map((name, i) => [name, row[i]!])));
}

function record(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    kind: 'dns',
    status: 'answer',
    rcode: 'NOERROR',
    ignored_answers: 0,
    resolver: server.address,
    transport: 'udp',
    latency_ms: expect.any(Number),
    ...fields,
  };
}

describe('netintel dns: typed records per type', () => {
  it.each<[string, string, string, Array<[string, number, unknown]>]>([
    ['example.test', 'A', 'example.test', [['A', 300, '192.0.2.10'], ['A', 300, '192.0.2.11']]],
    ['example.test', 'AAAA', 'example.test', [['AAAA', 600, '2001:db8::10']]],
    [
      'example.test',
      'MX',
      'example.test',
      [
        ['MX', 3600, { preference: 10, exchange: 'mx1.example.test' }],
        ['MX', 3600, { preference: 20, exchange: 'mx2.example.test' }],
      ],
    ],
    ['example.test', 'TXT', 'example.test', [['TXT', 600, { text: 'v=spf1 mx -all', strings: ['v=spf1 mx -all'] }]]],
    ['example.test', 'NS', 'example.test', [['NS', 86400, 'ns1.example.test'], ['NS', 86400, 'ns2.example.test']]],
    ['www.example.test', 'CNAME', 'www.example.test', [['CNAME', 120, 'web.example.test']]],
    [
      'example.test',
      'SOA',
      'example.test',
      [['SOA', 3600, { mname: 'ns1.example.test', rname: 'hostmaster.example.test', serial: 2024010101, refresh: 7200, retry: 900, expire: 1209600, minimum: 300 }]],
    ],
    [
      'example.test',
      'CAA',
      'example.test',
      [
        ['CAA', 3600, { flags: 0, tag: 'issue', value: 'letsencrypt.org' }],
        ['CAA', 3600, { flags: 128, tag: 'iodef', value: 'mailto:security@example.test' }],
      ],
    ],
    ['_sip._tcp.example.test', 'SRV', '_sip._tcp.example.test', [['SRV', 120, { priority: 10, weight: 60, port: 5060, target: 'sip.example.test' }]]],
    ['192.0.2.10', 'PTR', '10.2.0.192.in-addr.arpa', [['PTR', 3600, 'example.test']]],
    ['2001:db8::1', 'PTR', V6_REVERSE, [['PTR', 3600, 'v6.example.test']]],
  ])('prints %s %s as one JSON record with typed data and whole-second TTLs', async (target, type, owner, expected) => {
    const result = await dns([target, '--type', type, '-f', 'json']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const printed = json(result);
    expect(printed).toEqual(
      record({
        target,
        domain: owner,
        domain_unicode: owner,
        type,
        answers: expected.map(([rrType, ttl, data]) => ({ name: owner, type: rrType, ttl_seconds: ttl, data })),
      }),
    );
    for (const answer of printed.answers as Array<{ ttl_seconds: number }>) expect(Number.isInteger(answer.ttl_seconds)).toBe(true);
    expect(server.queries.map((q) => `${q.name} ${q.type}`)).toEqual([`${owner} ${type}`]);
  });

  it('asks PTR of the reverse name when given an IP address and no --type, and echoes the address in RFC 5952 form', async () => {
    const result = await dns(['2001:DB8:0:0:0:0:0:1', '-f', 'json']);
    expect(result.code).toBe(0);
    expect(json(result)).toMatchObject({ target: '2001:db8::1', domain: V6_REVERSE, type: 'PTR', status: 'answer' });
  });

  it('asks A by default for a name', async () => {
    const result = await dns(['Example.TEST.', '-f', 'json']);
    expect(json(result)).toMatchObject({ target: 'example.test', domain: 'example.test', type: 'A', status: 'answer' });
  });

  it('gives one record per type for ALL, in the order A AAAA CNAME MX NS SOA TXT CAA', async () => {
    const result = await dns(['example.test', '--type', 'ALL', '-f', 'json']);
    expect(result.code).toBe(0);
    const records = json<Array<{ type: string; status: string; answers: unknown[] }>>(result);
    expect(records.map((r) => `${r.type}:${r.status}:${r.answers.length}`)).toEqual([
      'A:answer:2',
      'AAAA:answer:1',
      'CNAME:nodata:0',
      'MX:answer:2',
      'NS:answer:2',
      'SOA:answer:1',
      'TXT:answer:1',
      'CAA:answer:2',
    ]);
    expect(server.queries.map((q) => q.type).sort()).toEqual(['A', 'AAAA', 'CAA', 'CNAME', 'MX', 'NS', 'SOA', 'TXT']);
  });

  it('reads a TXT record of several character strings over 255 octets as joined text and raw strings', async () => {
    const result = await dns(['long.example.test', '--type', 'txt', '-f', 'json']);
    expect(json(result).answers).toEqual([
      { name: 'long.example.test', type: 'TXT', ttl_seconds: 60, data: { text: LONG_TXT.join(''), strings: LONG_TXT } },
    ]);
    const csv = await dns(['long.example.test', '--type', 'TXT', '-f', 'csv']);
    expect(csvRecords(csv)[0]?.answers).toBe(`long.example.test. 60 IN TXT ${LONG_TXT.map((s) => `"${s}"`).join(' ')}`);
  });

  it('keeps the whole CNAME chain in the answers, before the records of the asked type', async () => {
    const result = await dns(['www.example.test', '-f', 'json']);
    expect(json(result)).toEqual(
      record({
        target: 'www.example.test',
        domain: 'www.example.test',
        domain_unicode: 'www.example.test',
        type: 'A',
        answers: [
          { name: 'www.example.test', type: 'CNAME', ttl_seconds: 120, data: 'web.example.test' },
          { name: 'web.example.test', type: 'CNAME', ttl_seconds: 60, data: 'origin.example.test' },
          { name: 'origin.example.test', type: 'A', ttl_seconds: 30, data: '192.0.2.80' },
        ],
      }),
    );
  });
});

describe('netintel dns: answers and errors', () => {
  it('exits 0 with status nxdomain for a name that does not exist', async () => {
    const result = await dns(['nope.example.test', '-f', 'json']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(json(result)).toMatchObject({ status: 'nxdomain', rcode: 'NXDOMAIN', answers: [] });
  });

  it('exits 0 with status nodata when the name exists but has no record of the type', async () => {
    const result = await dns(['mx1.example.test', '--type', 'MX', '-f', 'json']);
    expect(result.code).toBe(0);
    expect(json(result)).toMatchObject({ status: 'nodata', rcode: 'NOERROR', answers: [] });
  });

  it.each([
    ['broken.example.test', 'SERVFAIL'],
    ['closed.example.test', 'REFUSED'],
  ])('exits 5 (upstream) naming the rcode and the resolver when the server answers %s with %s', async (name, rcode) => {
    const result = await dns([name, '-f', 'json']);
    expect(result.code).toBe(5);
    const message = `DNS server ${server.address} answered ${rcode} for ${name} A`;
    // The CLI adds what to try next; the record keeps the engine's message.
    expect(result.stderr).toBe(`netintel: ${message} (${rcode === 'SERVFAIL' ? SERVFAIL_STEP : REFUSED_STEP})\n`);
    expect(json(result)).toMatchObject({
      query: `${name} A`,
      error: { code: 'upstream', message, details: { rcode, resolver: server.address, domain: name, type: 'A' } },
    });
  });

  it('exits 4 (timeout) when the server never answers', async () => {
    const result = await runCli(['dns', 'quiet.example.test', '--resolver', server.address, '-t', '150', '--retries', '0']);
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    // What to do first, once a run meets a resolver that does not answer; then the error.
    expect(result.stderr).toBe(
      `netintel: DNS server ${server.address} did not answer within 150 ms: if it is down, name another with --resolver; if it is slow, allow more time with --timeout\n` +
        `netintel: no answer from DNS server ${server.address} for quiet.example.test A within 150 ms (1 attempt)\n`,
    );
  });

  it('--dnssec: a chain question that gets no answer, or an answer without the anchor\'s keys, leaves DNSSEC unchecked (exit 7), not a verdict; a name outside the anchor is indeterminate (exit 0)', async () => {
    // The anchor's zone (test.) falls silent, so its DNSKEY question times out; the answer itself comes.
    const chainDown = await startDnsServer({ records: ZONE, behaviours: { test: 'silent' } });
    try {
      const anchor = ['--dnssec', '--trust-anchor', 'test/fixtures/dnssec/Ktest.anchor.key'];
      const run = await dns(['example.test', ...anchor, '-f', 'json'], { resolver: chainDown.address });
      expect(run.code).toBe(7);
      const record = JSON.parse(run.stdout);
      expect(record).toMatchObject({ status: 'answer', dnssec: { status: 'indeterminate', error: { code: 'timeout', message: expect.stringContaining('test DNSKEY') } } });
      expect(record.dnssec.findings).toEqual([expect.objectContaining({ id: 'dnssec_unchecked', severity: 'unknown', evidence: expect.objectContaining({ error: record.dnssec.error }) })]);
      const view = await dns(['example.test', ...anchor], { resolver: chainDown.address, env: { COLUMNS: '80' } });
      expect(view.code).toBe(7);
      expect(view.stdout.split('\n')[0]).toBe('example.test A: not checked (DNSSEC), 2 answers');
      expect(view.stdout).toMatch(/^DNSSEC +not checked$/m);
      expect(view.stdout.match(/for test DNSKEY within 500 ms/g)).toHaveLength(1);
      // The same server answering the DNSKEY question without keys, as a resolver that strips DNSSEC records does:
      // it could not give what validation needs (RFC 4035 §4.3), so DNSSEC was not checked either.
      const answered = await dns(['example.test', ...anchor, '-f', 'json']);
      expect(answered.code).toBe(7);
      const stripped = JSON.parse(answered.stdout).dnssec;
      expect(stripped).toMatchObject({ status: 'indeterminate', error: { code: 'upstream', message: expect.stringMatching(/gave no DNSKEY RRset for the trust anchor test\.: it does not pass DNSSEC records on/) } });
      expect(stripped.findings).toEqual([expect.objectContaining({ id: 'dnssec_unchecked', severity: 'unknown', evidence: expect.objectContaining({ error: stripped.error }) })]);
      // A name the anchor does not cover has no chain to check: undecided, a warning, as the user's choice of anchor says (RFC 4033 §5).
      const outside = await dns(['example.com', ...anchor, '-f', 'json']);
      expect(outside.code).toBe(0);
      expect(JSON.parse(outside.stdout).dnssec).toMatchObject({ status: 'indeterminate', error: null, findings: [{ id: 'dnssec_indeterminate', severity: 'warning' }] });
    } finally {
      await chainDown.close();
    }
  });

  it('asks again on timeout as often as --retries says', async () => {
    const result = await runCli(['dns', 'quiet.example.test', '--resolver', server.address, '-t', '100', '--retries', '2']);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('(3 attempts)');
    expect(server.queries).toHaveLength(3);
  });

  it('still prints the other types and exits 7 when one type of ALL fails with SERVFAIL', async () => {
    const result = await dns(['example.test', '--type', 'ALL', '-f', 'json'], { resolver: mxFailing.address });
    expect(result.code).toBe(7);
    const message = `DNS server ${mxFailing.address} answered SERVFAIL for example.test MX`;
    expect(result.stderr).toBe(`netintel: ${message} (${SERVFAIL_STEP})\n`);
    const printed = json<Array<{ type?: string; status?: string; query?: string; error?: { code: string; message: string } }>>(result);
    expect(printed.map((r) => r.type ?? `error:${r.query}`)).toEqual(['A', 'AAAA', 'CNAME', 'error:example.test MX', 'NS', 'SOA', 'TXT', 'CAA']);
    expect(printed[3]?.error).toMatchObject({ code: 'upstream', message });
    expect(printed.filter((r) => r.status === 'answer')).toHaveLength(6);
  });

  it('prints the failed type as an error row among the CSV rows of ALL', async () => {
    const result = await dns(['example.test', '--type', 'ALL', '-f', 'csv'], { resolver: mxFailing.address });
    expect(result.code).toBe(7);
    const rows = csvRecords(result);
    expect(rows.map((r) => [r.query, r.type, r['error.code']])).toEqual([
      ['example.test', 'A', ''],
      ['example.test', 'AAAA', ''],
      ['example.test', 'CNAME', ''],
      ['example.test MX', '', 'upstream'],
      ['example.test', 'NS', ''],
      ['example.test', 'SOA', ''],
      ['example.test', 'TXT', ''],
      ['example.test', 'CAA', ''],
    ]);
  });
});

describe('netintel dns: a reply holds only what answers the question', () => {
  // A resolver that sends what was not asked: records of another type, or a reply of another OPCODE.
  let odd: DnsTestServer;
  const reply = (query: DecodedPacket, fields: Partial<dnsPacket.Packet>): { message: Buffer }[] => [
    { message: dnsPacket.encode({ id: query.id, type: 'response', flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE, questions: query.questions, ...fields }) },
  ];
  beforeAll(async () => {
    odd = await startDnsServer({
      script: (query) => {
        const name = query.questions![0]!.name;
        if (name === 'nx.odd.test') return reply(query, { flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | 3, answers: [{ name, type: 'A', ttl: 60, data: '192.0.2.9' }] });
        if (name === 'gone.odd.test') return reply(query, { flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | 3, answers: [{ name, type: 'CNAME', ttl: 60, data: 'nowhere.odd.test' }] });
        // OPCODE 4 (NOTIFY) in bits 11-14, QR set by `type: 'response'`.
        if (name === 'notify.odd.test') return reply(query, { flags: (4 << 11) | dnsPacket.RECURSION_AVAILABLE, answers: [{ name, type: 'A', ttl: 60, data: '192.0.2.7' }] });
        return undefined;
      },
    });
  });
  afterAll(() => odd.close());

  it('leaves out a record of another type, counts it, and says so: an NXDOMAIN that carries an A record is no TXT answer', async () => {
    const shown = await runCli(['dns', 'nx.odd.test', '--type', 'TXT', '--resolver', odd.address, '--retries', '0']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^nx\.odd\.test TXT: no such domain \(NXDOMAIN\)\n/);
    expect(shown.stdout).not.toContain('192.0.2.9');
    expect(shown.stderr).toBe(`netintel: nx.odd.test TXT: ${odd.address} also sent 1 record of another name or type, not nx.odd.test TXT nor its aliases; ignored, not an answer\n`);
    const result = await runCli(['dns', 'nx.odd.test', '--type', 'TXT', '--resolver', odd.address, '--retries', '0', '-f', 'json', '-q']);
    expect(json(result)).toMatchObject({ status: 'nxdomain', rcode: 'NXDOMAIN', answers: [], ignored_answers: 1 });
  });

  it('shows an alias that leads to a name that does not exist as what it is, not as an answer', async () => {
    const shown = await runCli(['dns', 'gone.odd.test', '--resolver', odd.address, '--retries', '0']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^gone\.odd\.test A: no such domain \(NXDOMAIN\), after 1 alias\n/);
    expect(shown.stdout).toContain('nowhere.odd.test');
    const table = await runCli(['dns', 'gone.odd.test', 'nx.odd.test', '--resolver', odd.address, '--retries', '0', '-q']);
    expect(table.stdout).toContain('0 answers in 0 types');
    expect(table.stdout).toContain('gone.odd.test A: no such domain (NXDOMAIN), after 1 alias');
  });

  it('ignores a reply of another OPCODE (a NOTIFY is no answer to a query): the lookup times out, the reply counted as mismatched', async () => {
    const result = await runCli(['dns', 'notify.odd.test', '--resolver', odd.address, '--retries', '0', '-t', '300', '-f', 'json']);
    expect(result.code).toBe(4);
    expect(result.stdout).not.toContain('192.0.2.7');
    expect(result.stderr).toContain('1 mismatched reply ignored');
  });
});

describe('netintel dns: resolvers and transports', () => {
  it('fails over to the second --resolver when the first is silent and reports the one that answered', async () => {
    const result = await runCli(['dns', 'example.test', '-f', 'json', '--resolver', silent.address, '--resolver', server.address, '-t', '150', '--retries', '0']);
    expect(result.code).toBe(0);
    expect(json(result)).toMatchObject({ status: 'answer', resolver: server.address });
    expect((json(result).latency_ms as number) >= 140).toBe(true);
    expect(silent.queries).toHaveLength(1);
    expect(server.queries).toHaveLength(1);
  });

  it('fails over at once when the first resolver refuses (comma-separated --resolver)', async () => {
    const result = await runCli(['dns', 'example.test', '-f', 'json', '--resolver', `${refusing.address},${server.address}`, '-t', '5000', '--retries', '0']);
    expect(result.code).toBe(0);
    expect(json(result)).toMatchObject({ status: 'answer', resolver: server.address });
    expect((json(result).latency_ms as number) < 1000).toBe(true);
    expect(refusing.queries).toHaveLength(1);
  });

  it('reports the last error rcode when every resolver refuses or fails', async () => {
    const result = await runCli(['dns', 'broken.example.test', '--resolver', refusing.address, '--resolver', server.address, '--retries', '0']);
    expect(result.code).toBe(5);
    expect(result.stderr).toBe(`netintel: DNS server ${server.address} answered SERVFAIL for broken.example.test A (${SERVFAIL_STEP})\n`);
  });

  it('asks over TCP only with --tcp and says so in the record', async () => {
    const result = await dns(['example.test', '--type', 'MX', '--tcp', '-f', 'json']);
    expect(result.code).toBe(0);
    expect(json(result)).toMatchObject({ status: 'answer', transport: 'tcp' });
    expect(server.queries.map((q) => q.transport)).toEqual(['tcp']);
  });

  it('falls back to TCP after a truncated UDP reply', async () => {
    const result = await dns(['trunc.example.test', '-f', 'json']);
    expect(result.code).toBe(0);
    expect(json(result)).toMatchObject({
      transport: 'tcp',
      answers: [{ name: 'trunc.example.test', type: 'A', ttl_seconds: 300, data: '192.0.2.30' }],
    });
    expect(server.queries.map((q) => q.transport)).toEqual(['udp', 'tcp']);
  });

  it('gets an answer set larger than the EDNS payload over TCP, whole', async () => {
    const result = await dns(['big.example.test', '--type', 'TXT', '-f', 'json']);
    expect(result.code).toBe(0);
    const printed = json<{ transport: string; answers: Array<{ data: { text: string } }> }>(result);
    expect(printed.transport).toBe('tcp');
    expect(printed.answers.map((a) => a.data.text).sort()).toEqual(BIG_TXT);
  });
});

describe('netintel dns: names', () => {
  it('queries an internationalised name as punycode and shows both forms', async () => {
    const result = await dns(['bücher.example.test', '-f', 'json']);
    expect(result.code).toBe(0);
    expect(json(result)).toMatchObject({
      target: 'xn--bcher-kva.example.test',
      domain: 'xn--bcher-kva.example.test',
      domain_unicode: 'bücher.example.test',
      answers: [{ name: 'xn--bcher-kva.example.test', type: 'A', data: '192.0.2.20' }],
    });
    expect(server.queries.map((q) => q.name)).toEqual(['xn--bcher-kva.example.test']);

    const table = await dns(['bücher.example.test']);
    expect(table.stdout).toMatch(/^bücher\.example\.test A: 1 answer$/m);
    expect(table.stdout).toMatch(/^name +bücher\.example\.test \(xn--bcher-kva\.example\.test\)$/m);
  });

  const label64 = `${'x'.repeat(64)}.example.test`;
  const name254 = `${Array.from({ length: 4 }, () => 'a'.repeat(62)).join('.')}.test`;
  it.each([
    ['an empty name', '', 'the name is empty'],
    ['an empty label', 'a..example.test', 'it has an empty label'],
    ['a 64-octet label', label64, `the label "${'x'.repeat(64)}" is 64 octets long (at most 63)`],
    ['a name over 253 octets', name254, 'the name is 256 octets long (at most 253)'],
    ['a space', 'bad name.example.test', 'it contains a space'],
    ['a control character', 'bad\u0007.example.test', 'it contains a control character (U+0007)'],
  ])('exits 2 with invalid_input naming the input for %s, without asking the server', async (_what, input, reason) => {
    const result = await dns([input, '-f', 'json']);
    expect(result.code).toBe(2);
    const printed = json<{ query: string; error: { code: string; message: string; details: { input: string } } }>(result);
    expect(printed.query).toBe(input);
    expect(printed.error.code).toBe('invalid_input');
    expect(printed.error.details.input).toBe(input);
    expect(printed.error.message).toMatch(/^invalid domain name "/);
    expect(printed.error.message.endsWith(`: ${reason}`)).toBe(true);
    if (input.length <= 80) expect(printed.error.message).toContain(JSON.stringify(input));
    expect(result.stderr).toBe(`netintel: ${printed.error.message}\n`);
    expect(server.queries).toEqual([]);
  });

  it('exits 2 (usage) naming an unsupported --type', async () => {
    const result = await dns(['example.test', '--type', 'A,BOGUS']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unsupported DNS record type "BOGUS"');
    expect(server.queries).toEqual([]);
  });

  it('exits 2 naming a --resolver that is not an IP address', async () => {
    const result = await runCli(['dns', 'example.test', '--resolver', 'dns.example']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('invalid resolver "dns.example"');
  });

  it('exits 2 (usage) instead of waiting for typed input when there is no target and stdin is a terminal', async () => {
    const result = await dns([]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^netintel: dns needs a domain or an IP address/);
  });
});

describe('netintel dns: bulk from stdin', () => {
  const input = 'example.test\n# a comment\n\nbad name\nnope.example.test\r\nmx1.example.test';

  it('prints one row per name and type in input order, an error row for an invalid line, a summary on stderr, and exits 7', async () => {
    const result = await dns(['--type', 'A,MX', '-f', 'csv'], { stdin: input });
    expect(result.code).toBe(7);
    const rows = csvRecords(result);
    expect(rows.map((r) => [r.query, r.type, r.status, r['error.code']])).toEqual([
      ['example.test', 'A', 'answer', ''],
      ['example.test', 'MX', 'answer', ''],
      ['bad name', '', '', 'invalid_input'],
      ['nope.example.test', 'A', 'nxdomain', ''],
      ['nope.example.test', 'MX', 'nxdomain', ''],
      ['mx1.example.test', 'A', 'answer', ''],
      ['mx1.example.test', 'MX', 'nodata', ''],
    ]);
    expect(rows[2]?.['error.message']).toBe('invalid domain name "bad name": it contains a space');
    // Bulk runs keep per-row errors out of stderr: one summary line only.
    expect(result.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(result.stderr).toMatch(/^netintel: .*\b6 ok, 1 failed \(invalid_input: 1\)\n$/);
  });

  it('keeps input order when a later name is answered first', async () => {
    const names = ['slow.example.test', 'example.test', 'www.example.test', 'mx1.example.test'];
    const result = await dns(['-f', 'ndjson'], { stdin: `${names.join('\n')}\n`, resolver: slowFirst.address });
    expect(result.code).toBe(0);
    const records = ndjson(result);
    expect(records.map((r) => r.target)).toEqual(names);
    expect(records[0]).toMatchObject({ status: 'answer', answers: [{ data: '192.0.2.40' }] });
    expect(records[0]!.latency_ms as number).toBeGreaterThanOrEqual(140);
  });

  it('exits with the failure\'s own code when every line fails', async () => {
    const result = await dns(['-f', 'ndjson'], { stdin: 'bad name\na..b\n' });
    expect(result.code).toBe(2);
    expect(ndjson(result).map((r) => (r.error as { code: string }).code)).toEqual(['invalid_input', 'invalid_input']);
    expect(result.stderr).toMatch(/0 ok, 2 failed \(invalid_input: 2\)/);
  });

  it('exits 0 with an empty JSON array for empty input', async () => {
    const result = await dns(['-f', 'json'], { stdin: '# nothing\n\n' });
    expect(result.code).toBe(0);
    expect(json(result)).toEqual([]);
  });
});

describe('netintel dns: output formats', () => {
  it('writes CSV with the stable columns and the answers in zone-file form, separated by " | " (one row, one line)', async () => {
    const result = await dns(['example.test', 'nope.example.test', 'bad name', '--type', 'MX', '-f', 'csv']);
    expect(result.code).toBe(7);
    const table = parseCsv(result.stdout);
    expect(table[0]).toEqual(CSV_HEADER);
    expect(table.every((row) => row.length === CSV_HEADER.length)).toBe(true);
    expect(CSV_HEADER.slice(1, -2)).toEqual([...DNS_SCHEMA.columns]);
    const rows = csvRecords(result);
    expect(rows[0]).toEqual({
      query: 'example.test',
      target: 'example.test',
      domain: 'example.test',
      domain_unicode: 'example.test',
      type: 'MX',
      status: 'answer',
      rcode: 'NOERROR',
      answers: 'example.test. 3600 IN MX 10 mx1.example.test. | example.test. 3600 IN MX 20 mx2.example.test.',
      resolver: server.address,
      transport: 'udp',
      latency_ms: expect.stringMatching(/^\d+(\.\d)?$/),
      'error.code': '',
      'error.message': '',
    });
    expect(rows[1]).toMatchObject({ query: 'nope.example.test', status: 'nxdomain', rcode: 'NXDOMAIN', answers: '' });
    expect(rows[2]).toMatchObject({ query: 'bad name', type: '', answers: '', 'error.code': 'invalid_input' });
  });

  it.each<[string, string, string]>([
    ['example.test', 'SOA', 'example.test. 3600 IN SOA ns1.example.test. hostmaster.example.test. 2024010101 7200 900 1209600 300'],
    ['example.test', 'CAA', 'example.test. 3600 IN CAA 0 issue "letsencrypt.org"\nexample.test. 3600 IN CAA 128 iodef "mailto:security@example.test"'],
    ['quote.example.test', 'TXT', 'quote.example.test. 60 IN TXT "say \\"hi\\"" "back\\\\slash"'],
    ['_sip._tcp.example.test', 'SRV', '_sip._tcp.example.test. 120 IN SRV 10 60 5060 sip.example.test.'],
    ['example.test', 'AAAA', 'example.test. 600 IN AAAA 2001:db8::10'],
    ['example.test', 'NS', 'example.test. 86400 IN NS ns1.example.test.\nexample.test. 86400 IN NS ns2.example.test.'],
    ['192.0.2.10', 'PTR', '10.2.0.192.in-addr.arpa. 3600 IN PTR example.test.'],
    ['www.example.test', 'A', 'www.example.test. 120 IN CNAME web.example.test.\nweb.example.test. 60 IN CNAME origin.example.test.\norigin.example.test. 30 IN A 192.0.2.80'],
  ])('writes the answers of %s %s in the CSV as dig prints them', async (name, type, answers) => {
    const result = await dns([name, '--type', type, '-f', 'csv']);
    expect(result.code).toBe(0);
    // One physical line per row: the answers' line breaks are folded (src/output/csv-row.ts).
    expect(csvRecords(result)[0]?.answers).toBe(answers.replace(/\n/g, ' | '));
  });

  it('leaves out the header row with --no-header and keeps the columns', async () => {
    const result = await dns(['example.test', '--no-header', '-f', 'csv']);
    const rows = parseCsv(result.stdout);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toHaveLength(CSV_HEADER.length);
  });

  it('shows one lookup as a headline and its answers one line each', async () => {
    const result = await dns(['example.test', '--type', 'MX']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('example.test MX: 2 answers');
    expect(lines.slice(2, 5)).toEqual(['name          type   TTL  data', 'example.test  MX    3600  10 mx1.example.test.', 'example.test  MX    3600  20 mx2.example.test.']);
    expect(result.stdout).toMatch(new RegExp(`^resolver +${server.address.replace(/\./g, '\\.')} \\(udp\\), \\d+(\\.\\d)? ms$`, 'm'));
  });

  it('shows the answers of several lookups in one list, the failed lookups under it without repeating stderr', async () => {
    const result = await dns(['example.test', 'broken.example.test', '--type', 'A']);
    expect(result.code).toBe(7);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('2 lookups: 2 answers in 1 type, 1 failed lookup');
    expect(lines.slice(2, 5)).toEqual(['name          type  TTL  data', 'example.test  A     300  192.0.2.10', 'example.test  A     300  192.0.2.11']);
    expect(result.stdout).toContain('Failed\n  broken.example.test A: failed (upstream)\n');
    expect(result.stdout).not.toContain('SERVFAIL');
    expect(result.stderr).toBe(`netintel: DNS server ${server.address} answered SERVFAIL for broken.example.test A (${SERVFAIL_STEP})\n`);
  });

  it('prints nothing on stdout in the table view when the only lookup fails', async () => {
    const result = await dns(['broken.example.test']);
    expect(result).toEqual({ code: 5, stdout: '', stderr: `netintel: DNS server ${server.address} answered SERVFAIL for broken.example.test A (${SERVFAIL_STEP})\n` });
  });

  it('writes well-formed XML with typed answers and error elements', async () => {
    const result = await dns(['quote.example.test', 'bücher.example.test', 'bad\u0001name.test', '--type', 'TXT', '-f', 'xml']);
    expect(result.code).toBe(7);
    expect(XMLValidator.validate(result.stdout)).toBe(true);
    const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', isArray: (name) => ['record', 'item', 'error'].includes(name) }).parse(result.stdout) as {
      netintel: {
        '@_kind': string;
        record: Array<{ domain: string; domain_unicode: string; status: string; answers?: { item: Array<{ data: { text: string; strings: { item: string[] } } }> } }>;
        error: Array<{ '@_query': string; '@_code': string; '#text': string }>;
      };
    };
    expect(parsed.netintel['@_kind']).toBe('dns');
    expect(parsed.netintel.record.map((r) => [r.domain, r.domain_unicode, r.status])).toEqual([
      ['quote.example.test', 'quote.example.test', 'answer'],
      ['xn--bcher-kva.example.test', 'bücher.example.test', 'nodata'],
    ]);
    expect(parsed.netintel.record[0]?.answers?.item[0]?.data.strings.item).toEqual(['say "hi"', 'back\\slash']);
    expect(parsed.netintel.error).toEqual([
      { '@_query': 'bad\ufffdname.test', '@_code': 'invalid_input', '#text': 'invalid domain name "bad\\u0001name.test": it contains a control character (U+0001)' },
    ]);
  });

  it('writes one JSON line per record with ndjson, errors included', async () => {
    const result = await dns(['example.test', 'broken.example.test', '-f', 'ndjson']);
    expect(result.code).toBe(7);
    const lines = ndjson(result);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ kind: 'dns', domain: 'example.test', status: 'answer' });
    expect(lines[1]).toMatchObject({ query: 'broken.example.test A', error: { code: 'upstream' } });
  });

  it('prints a JSON array for several targets, in argument order', async () => {
    const result = await dns(['www.example.test', 'example.test', '192.0.2.10', '-f', 'json']);
    expect(result.code).toBe(0);
    expect(json<Array<{ target: string; type: string }>>(result).map((r) => `${r.target} ${r.type}`)).toEqual([
      'www.example.test A',
      'example.test A',
      '192.0.2.10 PTR',
    ]);
  });
});
