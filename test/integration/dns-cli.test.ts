/**
 * `netintel dns` as users run it: `node bin/netintel.js` in a child process
 * (needs `npm run build` first; the `test` script builds).
 *
 * - Against the test DNS server (test/support/dns-server.ts): exit codes,
 *   stdout/stderr split and bulk input through real pipes.
 * - Against NLnet Labs NSD serving a zone file: the answers column of
 *   `-f csv` compared line by line with `dig +noall +answer` for the same
 *   questions, every record type and the presentation corner cases
 *   (escaped quotes and octets in TXT and CAA, null MX, SRV ".", escaped
 *   owner names, DNAME, RFC 3597 unknown types). Needs the Debian packages
 *   nsd and bind9-dnsutils; skipped, with a warning, when either is missing.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RecordType } from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNsd, type RunningNsd } from '../support/nsd.js';
import { findExecutable } from '../support/peers.js';
import { toDnsAnswer } from '../../src/engine/dns/dns-records.js';
import { createDnsTransport, type DnsTransport } from '../../src/engine/dns/dns-transport.js';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { presentDnsAnswer } from '../../src/output/dns-presentation.js';
import { parseCsv } from '../output/parse-csv.js';
import { REPO_ROOT, spawnCli, type SpawnResult } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';

const run = promisify(execFile);

beforeAll(() => {
  if (!existsSync(join(REPO_ROOT, 'dist', 'bundle', 'main.cjs'))) {
    throw new Error('dist/bundle/main.cjs is missing: run `npm run build` before the process tests');
  }
});

/** CSV rows of a run as objects keyed by the header. */
function csvRecords(result: SpawnResult): Array<Record<string, string>> {
  const [header, ...rows] = parseCsv(result.stdout);
  return rows.map((row) => Object.fromEntries(header!.map((name, i) => [name, row[i]!])));
}

describe('netintel dns as a process, against the test DNS server', () => {
  let server: DnsTestServer;

  beforeAll(async () => {
    server = await startDnsServer({
      records: [
        { name: 'example.test', type: 'A', ttl: 300, data: '192.0.2.10' },
        { name: 'example.test', type: 'MX', ttl: 3600, data: { preference: 10, exchange: 'mx1.example.test' } },
        { name: 'example.test', type: 'TXT', ttl: 600, data: ['v=spf1 ', 'mx -all'] },
      ],
      behaviours: { 'broken.example.test': 'servfail', 'quiet.example.test': 'silent' },
    });
  });

  afterAll(async () => {
    await server?.close();
  });

  const flags = () => ['--resolver', server.address, '-t', '300', '--retries', '0'];

  it('prints the typed JSON record and exits 0 with nothing on stderr', async () => {
    const result = await spawnCli(['dns', 'example.test', '--type', 'MX', '-f', 'json', ...flags()]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toMatchObject({
      kind: 'dns',
      domain: 'example.test',
      type: 'MX',
      status: 'answer',
      answers: [{ name: 'example.test', type: 'MX', ttl_seconds: 3600, data: { preference: 10, exchange: 'mx1.example.test' } }],
      resolver: server.address,
      transport: 'udp',
    });
  });

  it('reads names from a stdin pipe: ordered CSV rows, an error row, the summary on stderr, exit 7', async () => {
    const result = await spawnCli(['dns', '--type', 'A,TXT', '-f', 'csv', ...flags()], {
      input: 'example.test\nnot a name\n# skipped\nnope.example.test\n',
    });
    expect(result.code).toBe(7);
    expect(csvRecords(result).map((r) => [r.query, r.type, r.status, r.answers, r['error.code']])).toEqual([
      ['example.test', 'A', 'answer', 'example.test. 300 IN A 192.0.2.10', ''],
      ['example.test', 'TXT', 'answer', 'example.test. 600 IN TXT "v=spf1 " "mx -all"', ''],
      ['not a name', '', '', '', 'invalid_input'],
      ['nope.example.test', 'A', 'nxdomain', '', ''],
      ['nope.example.test', 'TXT', 'nxdomain', '', ''],
    ]);
    expect(result.stderr).toMatch(/^netintel: .*\b4 ok, 1 failed \(invalid_input: 1\)\n$/);
  });

  it('exits 5 on SERVFAIL with the rcode on stderr and an error record on stdout with -f ndjson', async () => {
    const result = await spawnCli(['dns', 'broken.example.test', '-f', 'ndjson', ...flags()]);
    expect(result.code).toBe(5);
    expect(result.stderr).toBe(`netintel: DNS server ${server.address} answered SERVFAIL for broken.example.test A (a broken or DNSSEC-bogus zone, or a server that cannot reach it: try another with --resolver)\n`);
    expect(JSON.parse(result.stdout)).toMatchObject({ query: 'broken.example.test A', error: { code: 'upstream', details: { rcode: 'SERVFAIL' } } });
  });

  it('exits 4 when the server stays silent, after the deadline and not much later', async () => {
    const result = await spawnCli(['dns', 'quiet.example.test', ...flags()]);
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      [
        `netintel: DNS server ${server.address} did not answer within 300 ms: if it is down, name another with --resolver; if it is slow, allow more time with --timeout`,
        `netintel: no answer from DNS server ${server.address} for quiet.example.test A within 300 ms (1 attempt)`,
        '',
      ].join('\n'),
    );
    expect(result.durationMs).toBeLessThan(5000);
  });
});

// ---------------------------------------------------------------- NSD and dig

const NSD = findExecutable('nsd');
const DIG = findExecutable('dig');
const missing = [NSD ? null : 'nsd (Debian package nsd)', DIG ? null : 'dig (Debian package bind9-dnsutils)'].filter(
  (item): item is string => item !== null,
);
if (missing.length > 0) {
  console.warn(`SKIPPING the NSD/dig comparison in test/integration/dns-cli.test.ts: ${missing.join(' and ')} not found on PATH or in /usr/sbin`);
}

const BIG_TXT = Array.from({ length: 6 }, (_, i) => `big 60 IN TXT "${String(i).repeat(250)}"`).join('\n');
const UNKNOWN_HEX = Buffer.from(Array.from({ length: 40 }, (_, i) => i)).toString('hex');

const FORWARD_ZONE = `$ORIGIN cli.test.
$TTL 300
@         3600  IN SOA   ns1.cli.test. john\\.doe.cli.test. 2024010101 7200 900 1209600 300
@         86400 IN NS    ns1.cli.test.
@         86400 IN NS    ns2.cli.test.
@               IN A     192.0.2.10
@               IN A     192.0.2.11
@         600   IN AAAA  2001:db8:0:0:1:0:0:1
@         3600  IN MX    10 mx1.cli.test.
@         3600  IN MX    20 mx2.cli.test.
@         3600  IN CAA   0 issue "letsencrypt.org"
@         3600  IN CAA   128 iodef "mailto:security@cli.test"
@         600   IN TXT   "v=spf1 mx -all"
nullmx          IN MX    0 .
caa             IN CAA   0 issue "ca.example; account=\\"x\\""
quotes          IN TXT   "say \\"hi\\"" "back\\\\slash" "semi;colon" "tab\\009x" "nl\\010" "utf8 b\\195\\188cher" "del\\127" ""
multi     60    IN TXT   "${'a'.repeat(255)}" "${'b'.repeat(255)}" "with  two spaces"
${BIG_TXT}
_sip._tcp 120   IN SRV   10 60 5060 sip.cli.test.
_none._tcp      IN SRV   0 0 0 .
www       120   IN CNAME web.cli.test.
web       60    IN CNAME origin.cli.test.
origin    30    IN A     192.0.2.80
odd             IN CNAME a\\032b.cli.test.
a\\032b         IN A     192.0.2.81
xn--bcher-kva   IN A     192.0.2.20
d               IN DNAME target.cli.test.
x.target        IN A     192.0.2.82
u               IN TYPE65534 \\# 6 0a0000010203
wide            IN TYPE65535 \\# 40 ${UNKNOWN_HEX}
`;

const REVERSE_V4_ZONE = `$ORIGIN 2.0.192.in-addr.arpa.
$TTL 3600
@   IN SOA ns1.cli.test. hostmaster.cli.test. 1 7200 900 1209600 300
@   IN NS  ns1.cli.test.
10  IN PTR cli.test.
`;

const REVERSE_V6_ZONE = `$ORIGIN 8.b.d.0.1.0.0.2.ip6.arpa.
$TTL 3600
@   IN SOA ns1.cli.test. hostmaster.cli.test. 1 7200 900 1209600 300
@   IN NS  ns1.cli.test.
1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0 IN PTR v6.cli.test.
`;

/** The questions asked through the CLI, by type: one spawned bulk run per type. */
const QUESTIONS: Record<string, string[]> = {
  A: ['cli.test', 'www.cli.test', 'odd.cli.test', 'bücher.cli.test', 'x.d.cli.test'],
  AAAA: ['cli.test'],
  MX: ['cli.test', 'nullmx.cli.test'],
  NS: ['cli.test'],
  SOA: ['cli.test'],
  TXT: ['cli.test', 'quotes.cli.test', 'multi.cli.test', 'big.cli.test'],
  CAA: ['cli.test', 'caa.cli.test'],
  SRV: ['_sip._tcp.cli.test', '_none._tcp.cli.test'],
  CNAME: ['www.cli.test'],
  PTR: ['192.0.2.10', '2001:db8::1'],
};

/** A port free for both UDP and TCP on 127.0.0.1 at the time of asking. */
/**
 * One line of dig's answer section made comparable: the tabs and runs of
 * spaces dig puts between owner, TTL, class and type become one space, and
 * the spaces dig puts between the hex words of RFC 3597 data are removed.
 */
function normaliseDigLine(line: string): string {
  const fields = line.trim().replace(/^(\S+)\s+(\d+)\s+(\S+)\s+(\S+)\s+/, '$1 $2 $3 $4 ');
  const generic = /^(\S+ \d+ \S+ \S+ \\# \d+ )(.*)$/.exec(fields);
  return generic ? `${generic[1]}${generic[2]!.replace(/\s+/g, '')}` : fields;
}

describe.skipIf(missing.length > 0)('netintel dns CSV answers against NSD, compared with dig +noall +answer', () => {
  let port = 0;
  let nsd: RunningNsd | undefined;
  let transport: DnsTransport | undefined;
  const runs = new Map<string, SpawnResult>();

  async function digAnswers(name: string, type: string): Promise<string[]> {
    const { stdout } = await run(DIG!, ['@127.0.0.1', '-p', String(port), '+tries=1', '+time=2', '+noall', '+answer', name, type]);
    return stdout
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith(';'))
      .map(normaliseDigLine);
  }

  beforeAll(async () => {
    nsd = await startNsd(
      NSD!,
      [
        { name: 'cli.test', text: FORWARD_ZONE },
        { name: '2.0.192.in-addr.arpa', text: REVERSE_V4_ZONE },
        { name: '8.b.d.0.1.0.0.2.ip6.arpa', text: REVERSE_V6_ZONE },
      ],
      async (candidate) => {
        transport ??= createDnsTransport({ resolvers: [parseResolverAddress(`127.0.0.1:${candidate}`)], timeoutMs: 300, retries: 0 });
        const exchange = await transport.query('cli.test', 'SOA');
        return (exchange.response.answers ?? []).length > 0;
      },
    );
    port = nsd.port;

    await Promise.all(
      Object.entries(QUESTIONS).map(async ([type, names]) => {
        const result = await spawnCli(['dns', '--type', type, '-f', 'csv', '--resolver', `127.0.0.1:${port}`, '-t', '2000', '--retries', '1'], {
          input: `${names.join('\n')}\n`,
        });
        runs.set(type, result);
      }),
    );
  }, 30_000);

  afterAll(async () => {
    await transport?.close();
    await nsd?.stop();
  });

  const cases = Object.entries(QUESTIONS).flatMap(([type, names]) => names.map((name): [string, string] => [name, type]));

  it.each(cases)('prints the answers of %s %s as dig does, one after another on the row\'s line', async (name, type) => {
    const result = runs.get(type)!;
    expect(result.code, result.stderr).toBe(0);
    const row = csvRecords(result).find((r) => r.query === name);
    expect(row, `no CSV row for ${name}`).toBeDefined();
    expect(row!.status).toBe('answer');
    const expected = await digAnswers(row!.domain!, type);
    expect(expected.length).toBeGreaterThan(0);
    expect(row!.answers!.split(' | ')).toEqual(expected);
  });

  it('writes one CSV row per question with the same columns, and shows an IDN in both forms', () => {
    for (const [type, names] of Object.entries(QUESTIONS)) {
      const table = parseCsv(runs.get(type)!.stdout);
      expect(table).toHaveLength(names.length + 1);
      expect(new Set(table.map((row) => row.length)).size).toBe(1);
    }
    const idn = csvRecords(runs.get('A')!).find((r) => r.query === 'bücher.cli.test');
    expect(idn).toMatchObject({ domain: 'xn--bcher-kva.cli.test', domain_unicode: 'bücher.cli.test' });
  });

  it('fell back to TCP for the answer too big for UDP', () => {
    const rows = csvRecords(runs.get('TXT')!);
    expect(rows.find((r) => r.query === 'big.cli.test')?.transport).toBe('tcp');
    expect(rows.find((r) => r.query === 'cli.test')?.transport).toBe('udp');
  });

  it.each([
    ['u.cli.test', 65534],
    ['wide.cli.test', 65535],
  ])('presents the unknown type of %s in RFC 3597 form as dig does', async (name, code) => {
    const exchange = await transport!.query(name, `UNKNOWN_${code}` as RecordType);
    const answers = (exchange.response.answers ?? []).map(toDnsAnswer).filter((a) => a !== null);
    expect(answers.map((a) => a.type)).toEqual([`TYPE${code}`]);
    expect(answers.map(presentDnsAnswer)).toEqual(await digAnswers(name, `TYPE${code}`));
  });
});
