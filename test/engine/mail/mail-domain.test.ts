import { describe, expect, it } from 'vitest';
import { createEngineContext } from '../../../src/engine/context.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { checkDmarc } from '../../../src/engine/mail/check-dmarc.js';
import { checkEmail } from '../../../src/engine/mail/check-email.js';
import { checkMtaSts } from '../../../src/engine/mail/check-mta-sts.js';
import { checkSpf } from '../../../src/engine/mail/check-spf.js';
import { checkTlsRpt } from '../../../src/engine/mail/check-tls-rpt.js';
import { resolveMx } from '../../../src/engine/mail/resolve-mx.js';

// Any query would fail as unreachable: invalid_input proves none was sent.
const ctx = createEngineContext({ resolvers: [parseResolverAddress('224.0.0.1')], timeoutMs: 200, dnsRetries: 0 });

describe('mail checks on names that are no mail domain', () => {
  const checks = {
    checkSpf: (input: string) => checkSpf(ctx, input),
    checkDmarc: (input: string) => checkDmarc(ctx, input),
    checkTlsRpt: (input: string) => checkTlsRpt(ctx, input),
    checkMtaSts: (input: string) => checkMtaSts(ctx, input),
    resolveMx: (input: string) => resolveMx(ctx, input),
    checkEmail: (input: string) => checkEmail(ctx, input),
  };

  it.each(Object.entries(checks))('%s rejects "." as invalid_input before any DNS query (it once crashed the server)', async (_name, check) => {
    await expect(check('.')).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringContaining('not a mail domain') });
  });

  it.each(Object.entries(checks))('%s rejects "..", "1e3.0.0.1", "xn--.com" and a zero-width space as invalid_input', async (_name, check) => {
    for (const input of ['..', '1e3.0.0.1', 'xn--.com', 'ex\u200bample.com']) {
      await expect(check(input), input).rejects.toMatchObject({ code: 'invalid_input' });
    }
  });
});
