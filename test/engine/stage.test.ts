/**
 * The engine's progress listener (EngineContext.onStage): which stages an
 * SMTP probe, an MX check, an MTA-STS check and a blocklist check report,
 * against real servers on 127.0.0.1; and that a listener is optional and
 * cannot break a lookup.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBlacklist } from '../../src/engine/blacklist/check-blacklist.js';
import { createEngineContext, type EngineContext } from '../../src/engine/context.js';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { checkMtaSts } from '../../src/engine/mail/check-mta-sts.js';
import { resolveMx } from '../../src/engine/mail/resolve-mx.js';
import { probeSmtp } from '../../src/engine/smtp/probe-smtp.js';
import type { Stage } from '../../src/engine/stage.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { createCertificateAuthority, issueCertificate, startSmtpTestServer, type SmtpTestServer, type TestCertificate } from '../support/smtp-servers.js';
import { MAIL_BEHAVIOURS, MAIL_ZONE, MX_ZONE } from './mail/mail-zone.js';
import { closedPort } from '../support/peers.js';

const HOST = 'mx.example.test';
let ca: TestCertificate;
let smtp: SmtpTestServer;
let dns: DnsTestServer;

beforeAll(async () => {
  ca = createCertificateAuthority();
  smtp = await startSmtpTestServer({
    certificate: issueCertificate({ commonName: HOST, issuer: ca }),
    auth: { user: 'alice', pass: 'Tr0ub4dor&3', methods: ['PLAIN'] },
  });
  dns = await startDnsServer({ records: [...MAIL_ZONE, ...MX_ZONE], behaviours: MAIL_BEHAVIOURS });
});

afterAll(async () => {
  await smtp.close();
  await dns.close();
});

/** A context whose stages are collected; closed by the caller. */
function listening(): { ctx: EngineContext; stages: Stage[] } {
  const stages: Stage[] = [];
  const ctx = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 2000, dnsRetries: 0, onStage: (stage) => stages.push(stage) });
  return { ctx, stages };
}

describe('onStage', () => {
  it('reports every SMTP stage of a probe in order, the server as host:port', async () => {
    const { ctx, stages } = listening();
    try {
      const result = await probeSmtp(ctx, {
        host: HOST,
        address: '127.0.0.1',
        port: smtp.port,
        reverseDns: false,
        tlsCa: [ca.cert],
        auth: { user: 'alice', pass: 'Tr0ub4dor&3' },
        envelope: { from: 'a@example.test', to: 'b@example.test' },
      });
      expect(result.auth.result).toBe('success');
    } finally {
      await ctx.close();
    }
    expect(stages).toEqual(
      ['connect', 'greeting', 'EHLO', 'STARTTLS', 'AUTH', 'MAIL FROM', 'RCPT TO'].map((detail) => ({ kind: 'smtp', target: `${HOST}:${smtp.port}`, detail })),
    );
  });

  it('reports the DNS questions of an MX check: the MX records, then each host\'s addresses', async () => {
    const { ctx, stages } = listening();
    try {
      await resolveMx(ctx, 'good.test');
    } finally {
      await ctx.close();
    }
    expect(stages[0]).toEqual({ kind: 'dns', target: 'good.test', detail: 'MX' });
    expect(stages.every((stage) => stage.kind === 'dns')).toBe(true);
    const asked = stages.map((stage) => `${stage.target} ${stage.detail}`);
    expect(asked).toEqual(expect.arrayContaining(['mx1.good.test A', 'mx1.good.test AAAA', 'mx2.good.test A']));
  });

  it('reports the policy fetch of an MTA-STS check after its TXT question, and no fetch without a record', async () => {
    const { ctx, stages } = listening();
    try {
      // Nothing listens on a port this test closed: the fetch fails, after the stage was reported.
      await checkMtaSts(ctx, 'good.test', { fetch: { port: await closedPort() } });
      const fetched = stages.findIndex((stage) => stage.kind === 'mta-sts');
      expect(stages[fetched]).toEqual({ kind: 'mta-sts', target: 'mta-sts.good.test', detail: null });
      expect(stages.findIndex((stage) => stage.target === '_mta-sts.good.test' && stage.detail === 'TXT')).toBeLessThan(fetched);
      stages.length = 0;
      await checkMtaSts(ctx, 'mailhost.test');
    } finally {
      await ctx.close();
    }
    expect(stages).toContainEqual({ kind: 'dns', target: '_mta-sts.mailhost.test', detail: 'TXT' });
    expect(stages.some((stage) => stage.kind === 'mta-sts')).toBe(false);
  });

  it('reports a blocklist round with the number of lists asked', async () => {
    const { ctx, stages } = listening();
    try {
      await checkBlacklist(ctx, '192.0.2.1', { zones: 'zen.spamhaus.org,bl.spamcop.net' });
    } finally {
      await ctx.close();
    }
    expect(stages).toContainEqual({ kind: 'blacklist', target: '192.0.2.1', detail: '2' });
  });

  it('keeps a lookup going when the listener throws', async () => {
    const ctx = createEngineContext({
      resolvers: [parseResolverAddress(dns.address)],
      timeoutMs: 2000,
      dnsRetries: 0,
      onStage: () => {
        throw new Error('display failed');
      },
    });
    try {
      await expect(resolveMx(ctx, 'good.test')).resolves.toMatchObject({ status: 'mx' });
    } finally {
      await ctx.close();
    }
  });
});
