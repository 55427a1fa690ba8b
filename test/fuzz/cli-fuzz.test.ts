/**
 * Fuzzing every command of the CLI in-process (fast, most of the cases),
 * through the program (src/app/main.ts). test/fuzz/cli-fuzz-process.test.ts
 * runs a share through the built CLI as a child process.
 *
 * Seeded and reproducible: a failure prints fast-check's counterexample and
 * seed; FUZZ_SEED=<seed> replays the run, FUZZ_SCALE=<n> runs n times more
 * cases. Peers are local: the DNS server below, an SMTP server, unbound
 * loopback ports; test/support/loopback-only.cjs redirects and records anything else.
 */
import fc from 'fast-check';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/app/main.js';
import { runEntry, tempDir } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { loopbackOnly, WELL_KNOWN_PORTS } from '../support/loopback-only.js';
import { closedPort } from '../support/peers.js';
import { startRdapServer, type RdapTestServer } from '../support/rdap-server.js';
import { startSmtpTestServer, type SmtpTestServer } from '../support/smtp-servers.js';
import {
  brokenProperty,
  FUZZ_SCALE,
  FUZZ_SEED,
  hostileAsn,
  hostileDomain,
  hostileFields,
  hostileFormat,
  hostileGlobalFlags,
  hostileIp,
  hostileList,
  hostilePort,
  hostileResolver,
  hostileSmtpHost,
  hostileZones,
} from './hostile-inputs.js';

// Ports of loopback a service may listen on (127.0.0.1:1, :53, :25 in the inputs) go to a port this test closed.
const { redirected: violations } = loopbackOnly({ closedPort: await closedPort(), loopbackPorts: WELL_KNOWN_PORTS });

const scratch = tempDir('netintel-fuzz-');
let dns: DnsTestServer;
let smtp: SmtpTestServer;
let rdap: RdapTestServer;
const rdapCa = join(scratch.path, 'rdap-ca.pem');

/** The zone every fuzzed name is asked of: a few real answers, NXDOMAIN for the rest. */
export const FUZZ_ZONE = [
  { name: 'fuzz.test', type: 'A', data: '127.0.0.1' },
  { name: 'fuzz.test', type: 'MX', data: { preference: 10, exchange: 'mx.fuzz.test' } },
  { name: 'fuzz.test', type: 'TXT', data: ['v=spf1 include:spf.fuzz.test ip4:127.0.0.1 -all'] },
  { name: 'spf.fuzz.test', type: 'TXT', data: ['v=spf1 a mx include:fuzz.test ~all'] },
  { name: '_dmarc.fuzz.test', type: 'TXT', data: ['v=DMARC1; p=reject'] },
  { name: 'mx.fuzz.test', type: 'A', data: '127.0.0.1' },
  { name: '1.0.0.127.in-addr.arpa', type: 'PTR', data: 'mx.fuzz.test' },
  { name: '2.0.0.127.bl.fuzz.test', type: 'A', data: '127.0.0.2' },
] as const;

beforeAll(async () => {
  dns = await startDnsServer({ records: FUZZ_ZONE.map((record) => ({ ...record })) as never });
  smtp = await startSmtpTestServer({ name: 'mx.fuzz.test' });
  // The default data dir's RDAP bootstrap sends the test TLD, the documentation networks and AS64496-64511 to a local registry.
  rdap = await startRdapServer({ slowMs: 300 });
  rdap.bootstrapInto(join(scratch.path, 'data', 'netintel'));
  writeFileSync(rdapCa, rdap.ca);
});

afterAll(async () => {
  await Promise.all([dns?.close(), smtp?.close(), rdap?.close()]);
  scratch.remove();
});

/** The variables of every run: local resolver and short deadlines even when a flag is lost after `--`. */
function fuzzEnv(): Record<string, string> {
  return {
    NETINTEL_RESOLVER: dns.address,
    NETINTEL_TIMEOUT: '800',
    NETINTEL_RETRIES: '0',
    NETINTEL_DB: join(scratch.path, 'keys.db'),
    XDG_DATA_HOME: join(scratch.path, 'data'),
  };
}

/** Runs argv in-process, as bin/netintel.js runs it. */
async function run(argv: string[], stdin: Buffer | undefined) {
  // A piped stdin always (empty when none): a run without targets must not look up this machine's public address.
  return runEntry(main, argv, { env: fuzzEnv(), stdin: stdin ?? '' });
}

const safety = () => ['-t', '800', '--retries', '0'];

function fuzzCommand(name: string, runs: number, argvOf: () => fc.Arbitrary<{ argv: string[]; stdin?: Buffer }>): void {
  it(`${name}: ${runs * FUZZ_SCALE} hostile runs keep the exit-code, stdout and stderr contract (seed ${FUZZ_SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(argvOf(), async ({ argv, stdin }) => {
        const before = violations.length;
        const result = await run(argv, stdin);
        const outside = violations.slice(before);
        const broken = outside.length > 0 ? `connections outside loopback: ${outside.join(', ')}` : brokenProperty(argv, result);
        expect(broken, `netintel ${JSON.stringify(argv)}${stdin ? ` <<< ${JSON.stringify(stdin.toString('latin1'))}` : ''}\nexit ${result.code}\nstderr: ${result.stderr.slice(0, 500)}\nstdout: ${result.stdout.slice(0, 300)}`).toBeNull();
      }),
      { seed: FUZZ_SEED, numRuns: runs * FUZZ_SCALE, interruptAfterTimeLimit: 45_000 * FUZZ_SCALE },
    );
  }, 60_000 * FUZZ_SCALE);
}

const targets = (arb: fc.Arbitrary<string>, max = 3) => fc.array(arb, { minLength: 1, maxLength: max });
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });

describe('CLI fuzzing, in-process', () => {
  fuzzCommand('ip', 200, () =>
    fc
      .record({ targets: targets(fc.oneof({ weight: 4, arbitrary: hostileIp }, { weight: 1, arbitrary: hostileDomain })), flags: hostileGlobalFlags, list: maybe(hostileList(hostileIp)) })
      .map(({ targets: t, flags, list }) => ({ argv: ['ip', ...safety(), ...flags, ...t], stdin: list })),
  );

  fuzzCommand('asn', 150, () =>
    fc.record({ targets: targets(fc.oneof(hostileAsn, hostileIp)), flags: hostileGlobalFlags }).map(({ targets: t, flags }) => ({ argv: ['asn', ...safety(), ...flags, ...t] })),
  );

  fuzzCommand('vpn', 150, () =>
    fc
      .record({ targets: targets(hostileIp), flags: hostileGlobalFlags, list: maybe(hostileList(hostileIp)) })
      .map(({ targets: t, flags, list }) => ({ argv: ['vpn', ...safety(), ...flags, ...t], stdin: list })),
  );

  fuzzCommand('bulk', 200, () =>
    fc
      .record({
        list: hostileList(fc.oneof(hostileIp, hostileAsn)),
        flags: hostileGlobalFlags,
        files: fc.constantFrom([], [], ['-'], ['/nonexistent/list.txt'], ['/dev/null'], [scratch.path]),
      })
      .map(({ list, flags, files }) => ({ argv: ['bulk', ...safety(), ...flags, ...files], stdin: list })),
  );

  fuzzCommand('grep', 150, () =>
    fc
      .record({
        list: hostileList(fc.oneof(hostileIp, hostileDomain)),
        flags: hostileGlobalFlags,
        grepFlags: fc.subarray(['-o', '-c', '--unique', '--v4', '--v6', '--cidr', '--exclude-reserved', '-n', '-H', '--no-filename']),
        files: fc.constantFrom([], [], ['-'], ['/nonexistent/log.txt'], ['/dev/null'], [scratch.path], ['-', '/dev/null']),
      })
      .map(({ list, flags, grepFlags, files }) => ({ argv: ['grep', ...flags, ...grepFlags, ...files], stdin: list })),
  );

  fuzzCommand('summarize', 150, () =>
    fc
      .record({
        list: hostileList(fc.oneof(hostileIp, hostileDomain)),
        flags: hostileGlobalFlags,
        top: maybe(fc.constantFrom('1', '3', '1000', '0', '1001', '-1', 'ten', '', ' 5', '1e3', '0x10')),
        svg: maybe(fc.constantFrom('', ' ', '/', '/nonexistent/map.svg', scratch.path, `${scratch.path}/map.svg`, `${scratch.path}/map\n\u001b[31m.svg`, '/dev/null')),
        files: fc.constantFrom([], [], ['-'], ['/nonexistent/log.txt'], ['/dev/null'], [scratch.path], ['-', '/dev/null']),
      })
      .map(({ list, flags, top, svg, files }) => ({
        argv: ['summarize', ...safety(), ...flags, ...(top === undefined ? [] : ['--top', top]), ...(svg === undefined ? [] : ['--svg', svg]), ...files],
        stdin: list,
      })),
  );

  fuzzCommand('ptr', 150, () =>
    fc
      .record({
        targets: targets(fc.oneof({ weight: 4, arbitrary: hostileIp }, { weight: 1, arbitrary: hostileDomain })),
        resolver: fc.constant(null).chain(() => hostileResolver(dns.address)),
        flags: hostileGlobalFlags,
        list: maybe(hostileList(hostileIp)),
      })
      .map(({ targets: t, resolver, flags, list }) => ({ argv: ['ptr', ...safety(), '--resolver', resolver, ...flags, ...t], stdin: list })),
  );

  fuzzCommand('rdap', 150, () =>
    fc
      .record({
        targets: targets(fc.oneof(hostileIp, hostileDomain, hostileAsn, fc.constantFrom('192.0.2.7', '192.0.2.0/24', '2001:db8::/33', 'AS64496', 'example.test', 'redacted.test', 'missing.test', 'broken.test', 'huge.test', 'soon.test', 'gone.test'))),
        flags: hostileGlobalFlags,
        days: maybe(fc.constantFrom('30', '0', '3650', '3651', '-1', 'ten', '', '1e3')),
        failOn: maybe(fc.constantFrom('warning', 'error', 'info', '')),
        trust: fc.constantFrom([], ['--tls-ca', rdapCa], ['--tls-ca', '/nonexistent/ca.pem'], ['--tls-ca', '/dev/null']),
        list: maybe(hostileList(fc.oneof(hostileIp, hostileDomain))),
      })
      .map(({ targets: t, flags, days, failOn, trust, list }) => ({
        argv: ['rdap', ...safety(), ...trust, ...(days === undefined ? [] : ['--expiry-days', days]), ...(failOn === undefined ? [] : ['--fail-on', failOn]), ...flags, ...t],
        stdin: list,
      })),
  );

  fuzzCommand('dns', 200, () =>
    fc
      .record({
        targets: targets(fc.oneof({ weight: 3, arbitrary: hostileDomain }, { weight: 1, arbitrary: hostileIp })),
        type: maybe(fc.constantFrom('A', 'ALL', 'TXT,MX', 'PTR', 'bogus', '', 'a,,mx', 'constructor', 'ANY', 'SRV', 'CAA', 'SOA', 'NS', 'AAAA', 'DS', 'DNSKEY,RRSIG', 'NSEC3', 'TLSA', 'HTTPS,SVCB')),
        resolver: fc.constant(null).chain(() => hostileResolver(dns.address)),
        dnssec: maybe(fc.constantFrom(['--dnssec'], ['--trust-anchor', '/nonexistent/anchor.key'], ['--trust-anchor', '/dev/null'], ['--trust-anchor', scratch.path], ['--dnssec', '--trust-anchor', '/etc/hostname'])),
        flags: hostileGlobalFlags,
        list: maybe(hostileList(hostileDomain)),
      })
      .map(({ targets: t, type, resolver, dnssec, flags, list }) => ({
        argv: ['dns', ...safety(), '--resolver', resolver, ...(type === undefined ? [] : ['--type', type]), ...(dnssec ?? []), ...flags, ...t],
        stdin: list,
      })),
  );

  for (const command of ['mx', 'spf'] as const) {
    fuzzCommand(command, 150, () =>
      fc
        .record({ targets: targets(hostileDomain, 2), flags: hostileGlobalFlags, ip: maybe(hostileIp), failOn: maybe(fc.constantFrom('warning', 'error', 'bogus', '')) })
        .map(({ targets: t, flags, ip, failOn }) => ({
          argv: [
            command,
            ...safety(),
            ...(command === 'spf' && ip !== undefined ? ['--ip', ip] : []),
            ...(failOn === undefined ? [] : ['--fail-on', failOn]),
            ...flags,
            ...t,
          ],
        })),
    );
  }

  fuzzCommand('email', 150, () =>
    fc
      .record({
        targets: targets(hostileDomain, 2),
        type: maybe(fc.constantFrom('general', 'mx', 'spf', 'smtp', 'dkim', 'bimi', 'dnssec', 'dane', 'bogus')),
        host: maybe(hostileSmtpHost),
        port: maybe(fc.oneof(hostilePort, fc.constant('SMTP_PORT'))),
        flags: hostileGlobalFlags,
      })
      .map(({ targets: t, type, host, port, flags }) => ({
        argv: [
          'email',
          ...safety(),
          '--no-smtp',
          ...(type === undefined ? [] : ['--type', type]),
          ...(host === undefined ? [] : ['--host', host]),
          ...(port === undefined ? [] : ['--port', port === 'SMTP_PORT' ? String(smtp.port) : port]),
          ...flags,
          ...t,
        ],
      })),
  );

  fuzzCommand('smtp', 150, () =>
    fc
      .record({
        host: hostileSmtpHost,
        port: fc.oneof({ weight: 2, arbitrary: fc.constant('SMTP_PORT') }, { weight: 1, arbitrary: hostilePort }),
        ip: maybe(fc.constantFrom('127.0.0.1', '::1', 'bogus', '127.0.0.1\r\n', '', '::ffff:127.0.0.1')),
        ehlo: maybe(fc.oneof(hostileDomain, fc.constantFrom('x\r\nMAIL FROM:<a@b>', ''))),
        from: maybe(fc.constantFrom('a@fuzz.test', 'a@b\r\nRCPT TO:<c@d>', '<>', '', 'not an address', '\x00@x')),
        stage: maybe(fc.constantFrom('connect', 'greeting', 'ehlo', 'tls', 'auth', 'bogus')),
        extra: fc.subarray(['--relay-test', '--transcript', '--no-ptr', '--tls', '--tls-on-connect', '--dane', '--no-dane']),
        flags: hostileGlobalFlags,
      })
      .map(({ host, port, ip, ehlo, from, stage, extra, flags }) => ({
        argv: [
          'smtp',
          ...safety(),
          '--greeting-timeout',
          '800',
          '--port',
          port === 'SMTP_PORT' ? String(smtp.port) : port,
          ...(ip === undefined ? [] : ['--ip', ip]),
          ...(ehlo === undefined ? [] : ['--ehlo', ehlo]),
          ...(from === undefined ? [] : ['--from', from]),
          ...(stage === undefined ? [] : ['--quit-after', stage]),
          ...extra,
          ...flags,
          host,
        ],
      })),
  );

  fuzzCommand('tls', 120, () =>
    fc
      .record({
        hosts: fc.array(hostileSmtpHost, { minLength: 0, maxLength: 2 }),
        port: maybe(fc.oneof({ weight: 2, arbitrary: fc.constant('SMTP_PORT') }, { weight: 1, arbitrary: hostilePort })),
        starttls: maybe(fc.constantFrom('smtp', 'imap', 'pop3', 'ftp', 'xmpp', 'ldap', 'postgres', 'bogus', '')),
        expiryDays: maybe(fc.constantFrom('0', '21', '-1', '3651', 'x', '')),
        ca: maybe(fc.constantFrom('/nonexistent/ca.pem', '/dev/null', '/etc/hostname')),
        extra: fc.subarray(['--no-versions', '--no-dane']),
        failOn: maybe(fc.constantFrom('warning', 'error', 'bogus')),
        flags: hostileGlobalFlags,
        list: maybe(hostileList(hostileSmtpHost)),
      })
      .map(({ hosts, port, starttls, expiryDays, ca, extra, failOn, flags, list }) => ({
        argv: [
          'tls',
          ...safety(),
          ...(starttls === undefined ? [] : ['--starttls', starttls]),
          ...(expiryDays === undefined ? [] : ['--expiry-days', expiryDays]),
          ...(ca === undefined ? [] : ['--ca', ca]),
          ...(failOn === undefined ? [] : ['--fail-on', failOn]),
          ...extra,
          ...flags,
          ...hosts.map((host) => (port === undefined ? host : `${host}:${port === 'SMTP_PORT' ? String(smtp.port) : port}`)),
        ],
        stdin: list,
      })),
  );

  fuzzCommand('dkim', 120, () =>
    fc
      .record({
        targets: targets(hostileDomain, 2),
        selector: maybe(fc.oneof(hostileDomain, fc.constantFrom('s1,s2', ',', '', 'a b', '..', '_x', 'selector1,selector1', '\x1b[2J'))),
        message: maybe(fc.constantFrom('-', '/nonexistent/saved.eml', '/dev/null', 'MESSAGE')),
        flags: hostileGlobalFlags,
        list: maybe(hostileList(hostileDomain)),
      })
      .map(({ targets: t, selector, message, flags, list }) => ({
        argv: [
          'dkim',
          ...safety(),
          ...(selector === undefined ? [] : ['--selector', selector]),
          ...(message === undefined ? [] : ['--message', message === 'MESSAGE' ? scratch.path : message]),
          ...flags,
          ...(message === undefined ? t : []),
        ],
        // A saved message on stdin: header-shaped hostile text, DKIM-Signature headers included.
        stdin: message === '-' ? Buffer.from(`DKIM-Signature: v=1; a=rsa-sha256; d=${t[0]}; s=${selector ?? 'x'}; b=;\r\nFrom: a@${t[0]}\r\n\r\n${list?.toString('latin1') ?? ''}`, 'latin1') : list,
      })),
  );

  fuzzCommand('headers', 120, () => {
    // Header-shaped hostile lines: trace fields with hostile hosts and addresses, authentication fields, folding, 8-bit octets.
    const line = fc.oneof(
      fc.tuple(hostileDomain, hostileIp, hostileDomain).map(([from, ip, by]) => `Received: from ${from} (${from} [${ip}]) by ${by} with ESMTPS id X; Tue, 1 Jul 2025 10:00:00 +0000`),
      fc.constantFrom(
        'Authentication-Results: mx.fuzz.test; spf=pass smtp.mailfrom=fuzz.test; dkim=fail; dmarc=pass',
        'DKIM-Signature: v=1; a=rsa-sha256; d=fuzz.test; s=x; b=; bh=;',
        'ARC-Seal: i=1; a=rsa-sha256; cv=none; d=fuzz.test; s=x; b=AAAA',
        'Return-Path: <bounce@fuzz.test>',
        'From: a@fuzz.test',
        'From: =?UTF-8?B?w6k=?= <a@fuzz.test>, b@fuzz.test',
        'Date: Tue, 1 Jul 2025 09:59:00 +0000',
        'Received: (qmail 1 invoked by uid 89); 1 Jul 2025 10:00:00 -0000',
        'Received: from x by y; not a date',
        '\tfolded (comment',
        '',
        'From sender Tue Jul  1 10:00:00 2025',
      ),
      hostileDomain.map((text) => `Subject: ${text}`),
    );
    return fc
      .record({
        lines: fc.array(line, { maxLength: 14 }),
        end: fc.constantFrom('\n', '\r\n'),
        blacklist: fc.boolean(),
        file: maybe(fc.constantFrom('-', '/nonexistent/saved.eml', '/dev/null', 'DIRECTORY')),
        flags: hostileGlobalFlags,
      })
      .map(({ lines, end, blacklist, file, flags }) => ({
        argv: ['headers', ...safety(), ...(blacklist ? ['--blacklist'] : []), ...flags, ...(file === undefined ? [] : [file === 'DIRECTORY' ? scratch.path : file])],
        stdin: Buffer.from(lines.join(end), 'latin1'),
      }));
  });

  fuzzCommand('bimi', 120, () =>
    fc
      .record({
        targets: targets(hostileDomain, 2),
        selector: maybe(fc.oneof(hostileDomain, fc.constantFrom('default', '', 'a b', '..', '\x00'))),
        ca: maybe(fc.constantFrom('/nonexistent/ca.pem', '/dev/null', '/etc/hostname')),
        flags: hostileGlobalFlags,
      })
      .map(({ targets: t, selector, ca, flags }) => ({
        argv: ['bimi', ...safety(), ...(selector === undefined ? [] : ['--selector', selector]), ...(ca === undefined ? [] : ['--tls-ca', ca]), ...flags, ...t],
      })),
  );

  fuzzCommand('range', 150, () =>
    fc
      .record({
        targets: targets(
          fc.oneof(
            hostileIp,
            fc.tuple(hostileIp, fc.integer({ min: -2, max: 130 })).map(([ip, prefix]) => `${ip}/${prefix}`),
            fc.tuple(hostileIp, hostileIp).map(([a, b]) => `${a}-${b}`),
            fc.constantFrom('0.0.0.0/0', '::/0', '10.0.0.9-10.0.0.1', '1.2.3.4-::1', '/', '-', '1.2.3.4/', '/24', 'fe80::1%eth0/64'),
          ),
        ),
        flags: hostileGlobalFlags,
        list: maybe(hostileList(hostileIp)),
      })
      .map(({ targets: t, flags, list }) => ({ argv: ['range', ...flags, ...t], stdin: list })),
  );

  fuzzCommand('blacklist', 150, () =>
    fc
      .record({ targets: targets(fc.oneof(hostileIp, hostileDomain), 2), zones: maybe(hostileZones), list: fc.boolean(), flags: hostileGlobalFlags, failOn: maybe(fc.constantFrom('warning', 'error', 'x')) })
      .map(({ targets: t, zones, list, flags, failOn }) => ({
        argv: [
          'blacklist',
          ...safety(),
          '--zones',
          zones ?? 'bl.fuzz.test:ip',
          ...(list ? ['--list-zones'] : []),
          ...(failOn === undefined ? [] : ['--fail-on', failOn]),
          ...flags,
          ...t,
        ],
      })),
  );

  fuzzCommand('dmarc-report', 100, () =>
    fc
      .record({
        files: fc.array(fc.constantFrom('test/fixtures/dmarc/google.xml', 'test/fixtures/dmarc/reports.mbox', 'test/fixtures/dmarc/entities.xml', 'test/fixtures/dmarc', 'no/such/file', '-'), { minLength: 1, maxLength: 3 }),
        since: maybe(fc.oneof(fc.constantFrom('2026-01-01', '2026-01-01T12:00:00Z', '9999-99-99', 'yesterday', ''), fc.string({ maxLength: 30 }))),
        domain: maybe(hostileDomain),
        stdin: maybe(fc.oneof(fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)), fc.string({ maxLength: 300 }).map((text) => Buffer.from(`<feedback>${text}`)))),
        flags: hostileGlobalFlags,
        failOn: maybe(fc.constantFrom('warning', 'error', 'x')),
      })
      .map(({ files, since, domain, stdin, flags, failOn }) => ({
        argv: [
          'dmarc-report',
          ...safety(),
          '--no-ptr',
          ...(since === undefined ? [] : ['--since', since]),
          ...(domain === undefined ? [] : ['--domain', domain]),
          ...(failOn === undefined ? [] : ['--fail-on', failOn]),
          ...flags,
          ...files,
        ],
        ...(stdin === undefined ? {} : { stdin }),
      })),
  );

  fuzzCommand('data status', 100, () =>
    fc
      .record({ sources: fc.array(fc.constantFrom('tor-exit', 'bogus', '__proto__', 'constructor', '', 'asn', 'all', '\x1b[2J'), { maxLength: 2 }), flags: hostileGlobalFlags })
      .map(({ sources, flags }) => ({ argv: ['data', 'status', ...flags, ...sources] })),
  );

  fuzzCommand('keys', 100, () =>
    fc
      .oneof(
        fc.record({ plan: fc.constantFrom('free', 'pro', 'enterprise', 'bogus', '', '__proto__', 'constructor'), label: maybe(fc.string({ unit: 'binary', maxLength: 20 })), daily: maybe(fc.constantFrom('0', '-1', '10', 'x', '1e99')) }).map(({ plan, label, daily }) => [
          'create',
          '--plan',
          plan,
          ...(label === undefined ? [] : ['--label', label]),
          ...(daily === undefined ? [] : ['--daily', daily]),
        ]),
        fc.constant(['list']),
        fc.oneof(hostileDomain, fc.constantFrom('abcdefghijkl', '', '__proto__')).map((id) => ['revoke', id]),
      )
      .chain((sub) => hostileGlobalFlags.map((flags) => ({ argv: ['keys', ...sub, ...flags] }))),
  );

  fuzzCommand('accounts', 100, () => {
    const who = fc.oneof(hostileDomain, fc.string({ unit: 'binary', maxLength: 30 }), fc.constantFrom('a@b.example', 'A@B.EXAMPLE', '@', 'a@', '', '__proto__', 'abcdefghijkl'));
    const plan = fc.constantFrom('free', 'pro', 'bogus', '', '__proto__', 'toString', 'constructor');
    return fc
      .oneof(
        fc.constant(['list']),
        who.map((target) => ['create', '--email', target]),
        who.map((target) => ['show', target]),
        fc.tuple(who, plan).map(([target, name]) => ['set-plan', target, name]),
        who.map((target) => ['disable', target]),
        who.map((target) => ['delete', target]),
      )
      .chain((sub) => hostileGlobalFlags.map((flags) => ({ argv: ['accounts', ...sub, ...flags] })));
  });

  fuzzCommand('quota', 100, () =>
    fc
      .record({ server: fc.constantFrom('http://127.0.0.1:1', 'http://[::1]:1/', 'ftp://127.0.0.1', 'not a url', ''), key: maybe(fc.constantFrom('ni_bogus', '', 'x\r\ny', '\x00')), flags: hostileGlobalFlags })
      .map(({ server, key, flags }) => ({ argv: ['quota', ...safety(), '--server', server, ...(key === undefined ? [] : ['--api-key', key]), ...flags] })),
  );

  fuzzCommand('global flags and command words', 150, () =>
    fc
      .record({
        word: fc.constantFrom('ip', 'asn', 'vpn', 'bulk', 'dns', 'mx', 'spf', 'email', 'blacklist', 'data', 'keys', 'accounts', 'completion', 'quota', 'help', '', 'nope', '-x', '--version', '-V', '--help', 'IP', 'constructor', '__proto__'),
        flags: hostileGlobalFlags,
        format: maybe(hostileFormat),
        fields: maybe(hostileFields),
        rest: fc.array(fc.oneof(hostileIp, hostileDomain), { maxLength: 2 }),
      })
      .map(({ word, flags, format, fields, rest }) => ({
        argv: [
          ...flags,
          ...(format === undefined ? [] : ['-f', format]),
          ...(fields === undefined ? [] : ['--fields', fields]),
          ...safety(),
          // `data update` downloads and `serve` listens: not fuzzed here.
          ...(word === 'data' ? ['data', 'status'] : [word]),
          ...rest,
        ].filter((arg) => arg !== 'update' && arg !== 'serve'),
      })),
  );
});
