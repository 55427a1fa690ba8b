/**
 * What one hostile answer can make netintel do, against peers that attack
 * on purpose (test/support/hostile-peers.ts): a DNS answer of 2,000 MX
 * records or 4,000 addresses, records for names nobody asked, malformed
 * replies, referrals, SMTP replies with mixed codes, DoT to a plain TCP
 * port, HTTP/2 floods; and the attacks already held off (pointer loops,
 * truncated replies, spoofed ids, endless greetings, escape sequences), so
 * that they stay held off. Each case bounds what the peer saw (connections,
 * queries), the exit code and message, and the time against the deadline.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { createDnsTransport } from '../../src/engine/dns/dns-transport.js';
import { runCli, tempDir } from '../support/cli.js';
import { DECOY_ADDRESS, startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import {
  ESCAPE_BANNER,
  HOSTILE_NAMES,
  startCountingSmtp,
  startEndlessBannerSmtp,
  startEscapeBannerSmtp,
  startH2FloodPeer,
  startHostileDns,
  startMixedCodeSmtp,
  startPlainTcpPeer,
  VICTIM_ADDRESS,
} from '../support/hostile-peers.js';
import type { ScriptedSmtpServer } from '../support/smtp-servers.js';
import { startScriptedSmtpServer } from '../support/smtp-servers.js';
import { createTestPki, type TestPki } from '../engine/dns/doh-servers.js';
import { startTestServer } from '../server/harness.js';
import { closedPort } from '../support/peers.js';

const DEADLINE_MS = 1000;

let dns: DnsTestServer;
let smtp: ScriptedSmtpServer;
let dnsFlags: string[];
let pki: TestPki;
const scratch = tempDir('netintel-hostile-');
let caFile: string;

beforeAll(async () => {
  [dns, smtp] = await Promise.all([startHostileDns(), startCountingSmtp()]);
  dnsFlags = ['--resolver', dns.address, '--timeout', String(DEADLINE_MS), '--retries', '0'];
  pki = createTestPki();
  caFile = join(scratch.path, 'ca.pem');
  writeFileSync(caFile, pki.ca.cert);
});

afterAll(async () => {
  await Promise.all([dns.close(), smtp.close()]);
  scratch.remove();
});

/** Runs the CLI in-process and says how long it took and what the peers saw meanwhile. */
async function measured(argv: string[]): Promise<{ code: number; stdout: string; stderr: string; ms: number; queries: number; connections: number }> {
  const queriesBefore = dns.queries.length;
  const connectionsBefore = smtp.connections();
  const started = Date.now();
  const run = await runCli(argv);
  return { ...run, ms: Date.now() - started, queries: dns.queries.length - queriesBefore, connections: smtp.connections() - connectionsBefore };
}

function ids(findings: Array<{ id: string }>): string[] {
  return findings.map((item) => item.id);
}

describe('one answer does not become thousands of connections (fan-out caps)', () => {
  it('email: 2,000 MX records in one TCP answer lead to 10 SMTP connections and a warning, not 2,000', async () => {
    const run = await measured(['email', HOSTILE_NAMES.manyMx, '--port', String(smtp.port), '--no-dnssec', '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(0);
    expect(run.connections).toBe(10);
    expect(run.queries).toBeLessThan(150);
    expect(run.stdout.length).toBeLessThan(200_000);
    const report = JSON.parse(run.stdout);
    expect(report.mx.records).toHaveLength(10);
    expect(report.smtp).toHaveLength(10);
    const capped = report.findings.find((item: { id: string }) => item.id === 'mx_hosts_limited');
    expect(capped).toMatchObject({ severity: 'warning', evidence: { total: 2000, checked: 10, limit: 10 } });
    expect(capped.message).toContain('2000 MX hosts of many-mx.test');
  });

  it('email: --max-mx and --max-smtp-connections lower the caps', async () => {
    const fewer = await measured(['email', HOSTILE_NAMES.manyMx, '--port', String(smtp.port), '--no-dnssec', '--max-mx', '3', '-f', 'json', ...dnsFlags]);
    expect(fewer.connections).toBe(3);
    const budget = await measured(['email', HOSTILE_NAMES.manyMx, '--port', String(smtp.port), '--no-dnssec', '--max-smtp-connections', '2', '-f', 'json', ...dnsFlags]);
    expect(budget.connections).toBe(2);
    const report = JSON.parse(budget.stdout);
    expect(report.smtp.filter((server: { probe: unknown }) => server.probe !== null)).toHaveLength(2);
    expect(ids(report.findings).filter((id) => id === 'smtp_connections_limited')).toHaveLength(8);
  });

  it('smtp: 4,000 addresses of one host lead to 10 connections, not 4,000; --max-addresses lowers it', async () => {
    const run = await measured(['smtp', HOSTILE_NAMES.manyAddresses, '--port', String(smtp.port), '--no-dane', '--no-ptr', '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(0);
    expect(run.connections).toBe(10);
    const records = JSON.parse(run.stdout) as Array<{ findings: Array<{ id: string; evidence: unknown }> }>;
    expect(records).toHaveLength(10);
    expect(records[0]!.findings.find((item) => item.id === 'smtp_addresses_limited')).toMatchObject({ evidence: { host: HOSTILE_NAMES.manyAddresses, total: 4000, checked: 10 } });
    const fewer = await measured(['smtp', HOSTILE_NAMES.manyAddresses, '--port', String(smtp.port), '--no-dane', '--no-ptr', '--max-addresses', '2', '-f', 'json', ...dnsFlags]);
    expect(fewer.connections).toBe(2);
  });

  it('mx: 2,000 MX records lead to a bounded number of queries and a bounded record', async () => {
    const run = await measured(['mx', HOSTILE_NAMES.manyMx, '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(0);
    // The MX question, then A, AAAA, PTR and the PTR names' A of 10 hosts.
    expect(run.queries).toBeLessThanOrEqual(1 + 10 * 4);
    expect(run.stdout.length).toBeLessThan(100_000);
    expect(ids(JSON.parse(run.stdout).findings)).toContain('mx_hosts_limited');
  });

  it('blacklist: the mail hosts of 2,000 MX records are looked up 10 at most', async () => {
    const run = await measured(['blacklist', HOSTILE_NAMES.manyMx, '--zones', 'bl.hostile.test:ip', '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(0);
    // The MX question (over UDP, then TCP), A and AAAA of 10 hosts, the zone's two test points and the one address.
    expect(run.queries).toBeLessThanOrEqual(2 + 10 * 2 + 2 + 1);
    const record = JSON.parse(run.stdout);
    expect(record.mx.hosts).toHaveLength(10);
    expect(record.findings.find((item: { id: string }) => item.id === 'blacklist_mx_hosts_limited')).toMatchObject({ severity: 'warning', evidence: { total: 2000, checked: 10 } });
  });

  it('serve: a caller choosing the domain gets the server\'s lower caps, and no parameter raises them', async () => {
    const server = await startTestServer({ engine: { resolvers: [parseResolverAddress(dns.address)], timeoutMs: DEADLINE_MS }, allowPrivateTargets: true, smtpPorts: [25, smtp.port] });
    try {
      const before = smtp.connections();
      const answer = await server.app.inject({ method: 'GET', url: `/api/email-tests?domain=${HOSTILE_NAMES.manyMx}&port=${smtp.port}&dnssec=false` });
      expect(answer.statusCode).toBe(200);
      expect(smtp.connections() - before).toBe(5);
      expect(answer.json().findings.find((item: { id: string }) => item.id === 'mx_hosts_limited')).toMatchObject({ evidence: { total: 2000, checked: 5, limit: 5 } });
      const raised = await server.app.inject({ method: 'GET', url: `/api/email-tests?domain=${HOSTILE_NAMES.manyMx}&port=${smtp.port}&dnssec=false&max_mx=2000` });
      expect(raised.statusCode).toBe(400);
      expect(smtp.connections() - before).toBe(5);
    } finally {
      await server.close();
    }
  });

  it('serve: the operator\'s caps hold for every caller', async () => {
    const server = await startTestServer({
      engine: { resolvers: [parseResolverAddress(dns.address)], timeoutMs: DEADLINE_MS },
      allowPrivateTargets: true,
      smtpPorts: [25, smtp.port],
      fanOut: { maxMxHosts: 2, maxAddresses: 1, maxSmtpConnections: 1 },
    });
    try {
      const before = smtp.connections();
      const answer = await server.app.inject({ method: 'GET', url: `/api/email-tests?domain=${HOSTILE_NAMES.manyMx}&port=${smtp.port}&dnssec=false` });
      expect(answer.statusCode).toBe(200);
      expect(smtp.connections() - before).toBe(1);
      expect(ids(answer.json().findings)).toEqual(expect.arrayContaining(['mx_hosts_limited', 'smtp_connections_limited']));
    } finally {
      await server.close();
    }
  });

  it('remote mode refuses the cap flags the server decides', async () => {
    const run = await runCli(['mx', HOSTILE_NAMES.manyMx, '--max-mx', '50', '--server', `http://127.0.0.1:${await closedPort()}`]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('remote mode cannot send --max-mx');
  });
});

describe('records for names that were not asked are not answers', () => {
  it('smtp does not connect to the address of a record for another name', async () => {
    const victim = await startScriptedSmtpServer((connection) => connection.send('220 victim'));
    try {
      const run = await measured(['smtp', HOSTILE_NAMES.unrelated, '--port', String(victim.port), '--no-dane', ...dnsFlags]);
      expect(victim.connections()).toBe(0);
      expect(run.code).toBe(3);
      expect(run.stderr).toContain(`${HOSTILE_NAMES.unrelated} has no A or AAAA records`);
    } finally {
      await victim.close();
    }
  });

  it('dns shows no answer, counts the ignored record in the record and says so on stderr', async () => {
    const run = await measured(['dns', HOSTILE_NAMES.unrelated, '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(0);
    const record = JSON.parse(run.stdout);
    expect(record).toMatchObject({ status: 'nodata', answers: [], ignored_answers: 1 });
    expect(run.stdout).not.toContain(VICTIM_ADDRESS);
    expect(run.stderr).toContain(`${HOSTILE_NAMES.unrelated} A: ${dns.address} also sent 1 record of another name or type`);
    const table = await runCli(['dns', HOSTILE_NAMES.unrelated, ...dnsFlags]);
    expect(table.stdout).toContain('no A records');
    expect(table.stdout).not.toContain(VICTIM_ADDRESS);
    const quiet = await runCli(['dns', HOSTILE_NAMES.unrelated, '-q', ...dnsFlags]);
    expect(quiet.stderr).toBe('');
  });

  it('keeps the CNAME chain and drops only the stray record', async () => {
    const run = await runCli(['dns', HOSTILE_NAMES.aliasWithStray, '-f', 'json', ...dnsFlags]);
    const record = JSON.parse(run.stdout);
    expect(record.answers.map((answer: { data: unknown }) => answer.data)).toEqual(['target.evil.test', '192.0.2.7']);
    expect(record).toMatchObject({ status: 'answer', ignored_answers: 1 });
  });
});

describe('malformed replies are the resolver\'s failure, not silence', () => {
  const cases: Array<[string, string]> = [
    [HOSTILE_NAMES.pointerLoop, 'points forward or to itself'],
    [HOSTILE_NAMES.pointerPastEnd, 'points past the end of the message'],
    [HOSTILE_NAMES.truncatedRecord, 'record 1 of the answer section is cut short'],
    [HOSTILE_NAMES.nameOver255, 'a name is longer than 255 octets'],
    [HOSTILE_NAMES.rdlengthPastEnd, 'record 1 of the answer section claims 200 octets of data, 194 past the end of the message'],
    [HOSTILE_NAMES.headerOnly, 'a name runs past the end of the message'],
  ];
  it.each(cases)('%s: "malformed reply" (upstream, exit 5) after waiting out the deadline for a valid one', async (name, reason) => {
    const run = await measured(['dns', name, ...dnsFlags]);
    expect(run.code).toBe(5);
    expect(run.stderr.startsWith(`netintel: malformed reply from DNS server ${dns.address} for ${name} A: `)).toBe(true);
    expect(run.stderr).toContain(reason);
    expect(run.queries).toBe(1);
    expect(run.ms).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(run.ms).toBeLessThan(DEADLINE_MS + 4000);
    expect(run.stdout).not.toContain('hello');
  });

  it('a zero-length TCP frame is a malformed reply', async () => {
    const run = await measured(['dns', HOSTILE_NAMES.zeroFrame, '--tcp', ...dnsFlags]);
    expect(run.code).toBe(5);
    expect(run.stderr).toBe(`netintel: malformed reply from DNS server ${dns.address} for ${HOSTILE_NAMES.zeroFrame} A: a zero-length TCP frame, not a DNS message (try another DNS server with --resolver)\n`);
    expect(run.ms).toBeLessThan(DEADLINE_MS + 4000);
  });

  it('a spoofed garbage datagram does not beat the real answer that follows it', async () => {
    const run = await measured(['dns', HOSTILE_NAMES.spoofedGarbage, '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'answer', answers: [{ data: '192.0.2.8' }] });
    expect(run.ms).toBeLessThan(DEADLINE_MS);
  });

  it('a malformed reply moves on to the next resolver, which answers', async () => {
    const good = await startDnsServer({ records: [{ name: HOSTILE_NAMES.pointerLoop, type: 'A', data: '192.0.2.99' }] });
    const transport = createDnsTransport({ resolvers: [parseResolverAddress(dns.address), parseResolverAddress(good.address)], timeoutMs: 300, retries: 0 });
    try {
      const exchange = await transport.query(HOSTILE_NAMES.pointerLoop, 'A');
      expect(exchange.answers.map((answer) => answer.data)).toEqual(['192.0.2.99']);
      expect(exchange.resolver).toBe(good.address);
    } finally {
      await transport.close();
      await good.close();
    }
  });
});

describe('a referral is not an answer', () => {
  it('spf: a resolver that does not recurse is an error (exit 5), not "publishes no SPF record"', async () => {
    const run = await measured(['spf', HOSTILE_NAMES.referral, ...dnsFlags]);
    expect(run.code).toBe(5);
    expect(run.stderr).toContain(`DNS server ${dns.address} is not a recursive resolver: it answered referral.test TXT with a referral to ns1.referral.test, ns2.referral.test`);
    expect(run.stdout).not.toMatch(/no SPF record/i);
  });

  it('dns and mx say the same, from the one place in the DNS layer', async () => {
    for (const command of [['dns', HOSTILE_NAMES.referral], ['mx', HOSTILE_NAMES.referral]]) {
      const run = await runCli([...command, ...dnsFlags]);
      expect(run.code, command.join(' ')).toBe(5);
      expect(run.stderr, command.join(' ')).toContain('is not a recursive resolver');
    }
  });
});

describe('SMTP replies', () => {
  it('a multi-line greeting with mixed codes (220-, 250-, 554) is a protocol error, not a 554 greeting', async () => {
    const peer = await startMixedCodeSmtp();
    try {
      const run = await runCli(['smtp', '127.0.0.1', '--port', String(peer.port), '--no-ptr', '-f', 'json', ...dnsFlags]);
      const record = JSON.parse(run.stdout);
      expect(record.banner).toBeNull();
      const error = record.findings.find((item: { id: string }) => item.id === 'smtp_protocol_error');
      expect(error.message).toContain('a multi-line reply whose lines carry different codes (220, then 250)');
      expect(ids(record.findings)).not.toContain('smtp_banner_refused');
    } finally {
      await peer.close();
    }
  });

  it('a greeting that never ends is cut at 200 lines (already held)', async () => {
    const peer = await startEndlessBannerSmtp();
    try {
      const started = Date.now();
      const run = await runCli(['smtp', '127.0.0.1', '--port', String(peer.port), '--no-ptr', '-f', 'json', ...dnsFlags]);
      expect(Date.now() - started).toBeLessThan(10_000);
      const record = JSON.parse(run.stdout);
      expect(record.findings.find((item: { id: string }) => item.id === 'smtp_protocol_error').message).toContain('a reply of more than 200 lines');
      expect(peer.connections()).toBe(1);
    } finally {
      await peer.close();
    }
  });

  it('escape sequences in a greeting reach the terminal as text (already held)', async () => {
    const peer = await startEscapeBannerSmtp();
    try {
      const run = await runCli(['smtp', '127.0.0.1', '--port', String(peer.port), '--no-ptr', '--transcript', ...dnsFlags]);
      expect(run.stdout).toContain('mx.hostile.test');
      expect(run.stdout).not.toContain('\u001b');
      expect(run.stdout).not.toContain('\u202e');
      expect(run.stdout).not.toContain(ESCAPE_BANNER.slice(4));
    } finally {
      await peer.close();
    }
  });
});

describe('DNS over TLS and HTTPS peers that break the protocol', () => {
  it('DoT to a plain TCP port says the server does not speak TLS there, not OpenSSL\'s words', async () => {
    const plain = await startPlainTcpPeer();
    try {
      const run = await runCli(['dns', 'example.test', '--resolver', `tls://127.0.0.1:${plain.port}`, '--resolver-ca', caFile, '--timeout', '3000', '--retries', '0']);
      expect(run.code).toBe(5);
      expect(run.stderr).toBe(`netintel: TLS with DNS server tls://127.0.0.1:${plain.port} failed for example.test A: the server does not speak TLS on this port (it answered in plain text)\n`);
    } finally {
      await plain.close();
    }
  });

  const floods: Array<['ping' | 'settings', number | undefined]> = [
    ['ping', undefined],
    ['settings', undefined],
    ['ping', 300],
    ['settings', 300],
  ];
  it.each(floods)('a DoH peer flooding %s frames (%s a second, else as fast as read) is a protocol violation, reported within the deadline', async (frames, perSecond) => {
    const flood = await startH2FloodPeer(frames, pki.server, perSecond);
    try {
      const started = Date.now();
      const run = await runCli(['dns', 'example.test', '--resolver', `https://127.0.0.1:${flood.port}/dns-query`, '--resolver-ca', caFile, '--timeout', '3000', '--retries', '0']);
      expect(Date.now() - started).toBeLessThan(3000 + 2000);
      expect(run.code).toBe(5);
      expect(run.stderr).toContain(`DNS server https://127.0.0.1:${flood.port}/dns-query did not answer example.test A with a DNS message: it flooded the HTTP/2 connection with`);
      expect(run.stderr).toContain('a protocol violation by the peer');
      expect(flood.connections()).toBe(1);
    } finally {
      await flood.close();
    }
  });
});

describe('attacks already held off stay held off', () => {
  it('a reply with a spoofed id is ignored and the real answer taken', async () => {
    const spoofing = await startDnsServer({ records: [{ name: 'spoofed-id.test', type: 'A', data: '192.0.2.44' }], behaviours: { 'spoofed-id.test': 'wrong-id-first' } });
    const transport = createDnsTransport({ resolvers: [parseResolverAddress(spoofing.address)], timeoutMs: DEADLINE_MS, retries: 0 });
    try {
      const exchange = await transport.query('spoofed-id.test', 'A');
      expect(exchange.answers.map((answer) => answer.data)).toEqual(['192.0.2.44']);
      expect(JSON.stringify(exchange.answers)).not.toContain(DECOY_ADDRESS);
    } finally {
      await transport.close();
      await spoofing.close();
    }
  });

  it('a truncated UDP reply whose records are cut is asked again over TCP, not called malformed', async () => {
    const run = await measured(['dns', HOSTILE_NAMES.truncatedUdp, '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'answer', answers: [{ data: '192.0.2.9' }], transport: 'tcp' });
    expect(dns.queries.slice(-2).map((query) => query.transport)).toEqual(['udp', 'tcp']);
  });
});
