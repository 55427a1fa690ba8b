/**
 * The relay chain of ./mail-relay.ts delivers what it is given, with the
 * Received lines of the MTAs that relayed it, a DKIM signature that still
 * verifies and an ARC set that validates (checked with mailauth, which the
 * chain's forwarder also uses, so this proves the corpus, not netintel).
 */
import { Resolver } from 'node:dns/promises';
import { authenticate } from 'mailauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dkimTxt, mailauthSign, rsaKey } from '../engine/mail/dkim-zone.js';
import { startDnsServer, type DnsTestServer } from './dns-server.js';
import { FIRST_HOP, FORWARDER, LAST_HOP, startMailRelayChain, type MailRelayChain } from './mail-relay.js';
import { POSTFIX_SKIP_REASON } from './postfix.js';

if (POSTFIX_SKIP_REASON) console.warn(`SKIPPING test/support/mail-relay.test.ts: ${POSTFIX_SKIP_REASON}`);

describe.skipIf(POSTFIX_SKIP_REASON !== null)('a message relayed through two real Postfix instances and an ARC-sealing forwarder', () => {
  const senderKey = rsaKey(2048);
  const arcKey = rsaKey(2048);
  let dns: DnsTestServer;
  let chain: MailRelayChain;

  beforeAll(async () => {
    dns = await startDnsServer({
      records: [
        dkimTxt('s1._domainkey.origin.test', `v=DKIM1; k=rsa; p=${senderKey.p}`),
        dkimTxt('arc._domainkey.lists.test', `v=DKIM1; k=rsa; p=${arcKey.p}`),
        { name: 'origin.test', type: 'TXT', data: ['v=spf1 ip4:127.0.0.1 -all'] },
        { name: '_dmarc.origin.test', type: 'TXT', data: ['v=DMARC1; p=reject'] },
      ],
    });
    chain = await startMailRelayChain({ dns: dns.address, arcSeal: { signingDomain: 'lists.test', selector: 'arc', privateKey: arcKey.pem }, forwarderDelayMs: 1100 });
  }, 60_000);

  afterAll(async () => {
    await chain?.close();
    await dns?.close();
  });

  it('arrives with three Received lines, newest first, TLS details from Postfix, and DKIM and ARC intact', async () => {
    const body = 'From: Alice <alice@origin.test>\r\nTo: bob@dest.test\r\nSubject: journey\r\nMessage-ID: <journey@origin.test>\r\nDate: Sun, 29 Nov 2026 12:00:00 +0000\r\n\r\nHello over three hops.\r\n';
    const signer = { signingDomain: 'origin.test', selector: 's1', privateKey: senderKey.pem };
    const { signatures } = await mailauthSign(body, { canonicalization: 'relaxed/relaxed', ...signer, signatureData: [signer] });
    const delivered = await chain.relay(Buffer.from(signatures + body), { from: 'alice@origin.test', to: 'bob@dest.test' });
    const text = delivered.toString("latin1");
    const received = [...text.matchAll(/^Received: (.*(?:\r?\n[ \t].*)*)/gm)].map((match) => match[1]!.replace(/\r?\n[ \t]+/g, ' '));
    expect(received).toHaveLength(3);
    expect(received[0]).toMatch(new RegExp(`^from ${FORWARDER} \\(localhost \\[127\\.0\\.0\\.1\\]\\) \\(using TLSv1\\.[23] with cipher \\S+ .*by ${LAST_HOP} \\(Postfix\\) with ESMTPS id \\w+ for <bob@dest\\.test>; `));
    expect(received[1]).toMatch(new RegExp(`^from ${FIRST_HOP} \\(localhost \\[127\\.0\\.0\\.1\\]\\) by ${FORWARDER} with ESMTPS id [0-9A-F]{12} for <bob@dest\\.test>; `));
    expect(received[2]).toMatch(new RegExp(`^from submit\\.origin\\.test \\(localhost \\[127\\.0\\.0\\.1\\]\\) \\(using TLSv1\\.[23] .*by ${FIRST_HOP} \\(Postfix\\) with ESMTPS id \\w+ for <bob@dest\\.test>; `));
    const times = received.map((line) => Date.parse(line.slice(line.lastIndexOf(';') + 1).trim().replace(/ \(\w+\)$/, '')));
    expect(times.every(Number.isFinite)).toBe(true);
    // The forwarder held the message for 1.1 s between its hop and the last one.
    expect(times[0]! - times[1]!).toBeGreaterThanOrEqual(1000);

    const resolver = new Resolver();
    resolver.setServers([dns.address]);
    const result = await authenticate(delivered, { ip: '127.0.0.1', helo: FORWARDER, sender: 'alice@origin.test', mta: 'check.test', resolver: (name: string, type: string) => resolver.resolve(name, type as 'TXT') });
    expect(result.dkim.results.map((row) => [row.signingDomain, row.status.result])).toEqual([['origin.test', 'pass']]);
    expect(result.arc).toMatchObject({ status: { result: 'pass' }, i: 1 });
    const arcResults = /^ARC-Authentication-Results: (.*(?:\r?\n[ \t].*)*)/m.exec(text)?.[1]?.replace(/\r?\n[ \t]+/g, ' ');
    expect(arcResults).toMatch(/^i=1; fwd\.lists\.test; dkim=pass header\.i=@origin\.test header\.s=s1 .*; spf=pass .*; dmarc=pass \(p=REJECT arc=none\) header\.from=origin\.test/);
  }, 60_000);
});
