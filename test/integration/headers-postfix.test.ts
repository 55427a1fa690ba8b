/**
 * `netintel headers` on a message that real MTAs relayed (Debian package
 * postfix): a DKIM-signed message goes through the relay chain of
 * test/support/mail-relay.ts, Postfix mx1.origin.test, then a forwarding
 * service that authenticates it, seals it with ARC and holds it for a
 * second, then Postfix mx2.dest.test, to a sink that delivers it. Every
 * Received field is the relaying MTA's own; a DNS peer on 127.0.0.1 serves
 * the sender's DKIM key, SPF and DMARC records and the sealer's key.
 *
 * Needs root (Postfix's master starts as root) and the postfix binaries;
 * skipped, with a warning, otherwise.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../src/engine/context.js';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { analyzeHeaders, type HeadersReport } from '../../src/engine/mail/headers/analyze-headers.js';
import { dkimTxt, mailauthSign, rsaKey } from '../engine/mail/dkim-zone.js';
import { REPO_ROOT, spawnCli } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { FIRST_HOP, FORWARDER, LAST_HOP, startMailRelayChain, type MailRelayChain } from '../support/mail-relay.js';
import { POSTFIX_SKIP_REASON } from '../support/postfix.js';

if (POSTFIX_SKIP_REASON) console.warn(`SKIPPING test/integration/headers-postfix.test.ts: ${POSTFIX_SKIP_REASON}`);

const senderKey = rsaKey(2048);
const sealerKey = rsaKey(2048);

describe.skipIf(POSTFIX_SKIP_REASON !== null)('a message relayed by two real Postfix instances and an ARC-sealing forwarder', () => {
  let dns: DnsTestServer;
  let ctx: EngineContext;
  let chain: MailRelayChain;
  /** The message as the sink delivered it. */
  let delivered = '';

  beforeAll(async () => {
    dns = await startDnsServer({
      records: [
        dkimTxt('s1._domainkey.sender.test', `v=DKIM1; k=rsa; p=${senderKey.p}`),
        // The forwarder checks SPF of the loopback hop it received from; the published policy names the loopback.
        { name: 'sender.test', type: 'TXT', data: 'v=spf1 ip4:127.0.0.1 -all' },
        { name: '_dmarc.sender.test', type: 'TXT', data: 'v=DMARC1; p=reject' },
        dkimTxt('arc._domainkey.lists.test', `v=DKIM1; k=rsa; p=${sealerKey.p}`),
      ],
    });
    ctx = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 2000, dnsRetries: 0 });
    chain = await startMailRelayChain({ dns: dns.address, arcSeal: { signingDomain: 'lists.test', selector: 'arc', privateKey: sealerKey.pem }, forwarderDelayMs: 1100 });
    const content = [
      'From: Alice <alice@sender.test>',
      'To: Bob <bob@dest.test>',
      'Subject: relayed three times',
      `Date: ${new Date().toUTCString().replace('GMT', '+0000')}`,
      `Message-ID: <${Date.now()}@sender.test>`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'The figures are attached.',
      '',
    ].join('\r\n');
    const signer = { signingDomain: 'sender.test', selector: 's1', privateKey: senderKey.pem };
    const signed = await mailauthSign(content, { canonicalization: 'relaxed/relaxed', ...signer, signatureData: [signer] });
    delivered = (await chain.relay(Buffer.from(signed.signatures + content), { from: 'bounce@sender.test', to: 'bob@dest.test' })).toString('latin1');
  }, 90_000);

  afterAll(async () => {
    await chain?.close();
    await ctx?.close();
    await dns?.close();
  });

  const hopsOf = (report: HeadersReport) => report.hops.map((hop) => ({ by: hop.by_host, parsed: hop.parsed, ip: hop.from_ip, scope: hop.address?.scope, special: hop.address?.special_purpose }));

  it('reads the three hops oldest first, the TLS of the Postfix ones, and the forwarder\'s hold as the last hop\'s delay', async () => {
    const report = await analyzeHeaders(ctx, Buffer.from(delivered, 'latin1'), 'delivered');
    const loopback = { parsed: true, ip: '127.0.0.1', scope: 'special', special: 'loopback (RFC 1122)' };
    expect(hopsOf(report)).toEqual([
      { by: FIRST_HOP, ...loopback },
      { by: FORWARDER, ...loopback },
      { by: LAST_HOP, ...loopback },
    ]);
    const [first, forwarded, last] = report.hops;
    // nodemailer and each MTA use STARTTLS when offered; Postfix writes the TLS facts with smtpd_tls_received_header.
    expect(first).toMatchObject({ from_helo: 'submit.origin.test', from_rdns: 'localhost', protocol: 'ESMTPS', for: 'bob@dest.test' });
    expect(forwarded).toMatchObject({ from_helo: FIRST_HOP, from_rdns: 'localhost', protocol: 'ESMTPS', for: 'bob@dest.test' });
    expect(last).toMatchObject({ from_helo: FORWARDER, from_rdns: 'localhost', protocol: 'ESMTPS', for: 'bob@dest.test' });
    for (const hop of [first!, last!]) {
      expect(hop.tls_version).toMatch(/^TLSv1\.[23]$/);
      expect(hop.tls_cipher).toMatch(/^[A-Z0-9_-]+$/);
    }
    for (const hop of report.hops) {
      expect(hop.id).toMatch(/^[0-9A-Za-z]+$/);
      expect(hop.clock_skew_seconds).toBeNull();
      expect(hop.delay_seconds).toBeGreaterThanOrEqual(0);
    }
    expect(last!.delay_seconds).toBeGreaterThanOrEqual(1);
    expect(report.total_transit_seconds).toBeLessThan(60);
  });

  it('recomputes DKIM, DMARC and ARC as passing, SPF as not checked (every hop is loopback), agreeing with the forwarder\'s results', async () => {
    const report = await analyzeHeaders(ctx, Buffer.from(delivered, 'latin1'), 'delivered');
    expect(report.authentication).toMatchObject({
      spf: { result: 'not_checked', hop: null },
      dkim: { result: 'pass', signatures: [{ domain: 'sender.test', result: 'pass', aligned: true }] },
      dmarc: { result: 'pass', policy: 'reject', dkim_aligned: true },
      arc: { result: 'pass', instances: 1, seals: [{ instance: 1, domain: 'lists.test', cv: 'none' }] },
    });
    expect(report.findings.filter((item) => item.severity === 'error' || item.severity === 'warning' || item.severity === 'unknown')).toEqual([]);
  });

  it('finds a body changed after delivery: DKIM and ARC fail, DMARC fails under p=reject, the stated results disagree', async () => {
    const tampered = delivered.replace('attached.', 'attached. New bank details below.');
    const report = await analyzeHeaders(ctx, Buffer.from(tampered, 'latin1'), 'tampered');
    expect([report.authentication.dkim.result, report.authentication.dmarc.result, report.authentication.arc.result]).toEqual(['fail', 'fail', 'fail']);
    expect(report.findings.map((item) => item.id)).toEqual(expect.arrayContaining(['headers_dkim_fail', 'headers_dmarc_fail', 'headers_arc_broken', 'headers_auth_results_disagree']));
  });

  it('prints the same through the built CLI, one CSV row per hop', async () => {
    if (!existsSync(join(REPO_ROOT, 'dist', 'bundle', 'main.cjs'))) throw new Error('dist/ is missing: run `npm run build` first');
    const json = await spawnCli(['headers', '-', '-f', 'json', '--resolver', dns.address, '--retries', '0'], { input: delivered });
    expect(json.stderr).toBe('');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ kind: 'headers', source: 'stdin', authentication: { dkim: { result: 'pass' }, arc: { result: 'pass' } } });
    const csv = await spawnCli(['headers', '-', '-f', 'csv', '--resolver', dns.address, '--retries', '0'], { input: delivered });
    expect(csv.code).toBe(0);
    expect(csv.stdout.trim().split('\n')).toHaveLength(4);
  });
});
