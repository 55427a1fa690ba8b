import type { FastifyRequest } from 'fastify';
import type { SmtpStage } from '../engine/smtp/smtp-result.js';
import type { ApiContext } from '../server/api-route.js';

/**
 * GET /api/smtp-test's answer (docs/api.md, Endpoints): the probe of one
 * address of the host, through the target guard first (SSRF: docs/design.md,
 * The public-target guard). Loaded with the route's first request.
 */

interface SmtpTestQuery {
  host: string;
  port?: number;
  tls?: boolean;
  address?: string;
  ehlo?: string;
  quit_after?: SmtpStage;
  ptr?: boolean;
  transcript?: boolean;
}

export async function smtpTest(request: FastifyRequest, api: ApiContext): Promise<unknown> {
  const query = request.query as SmtpTestQuery;
  const port = query.port ?? 25;
  api.guard.checkSmtpPort(port);
  let target: { host: string; address: string };
  if (query.address === undefined) target = await api.guard.resolve(query.host, 'SMTP server');
  else {
    // One chosen address of the host (as `netintel smtp --ip`, and remote mode testing each address in turn).
    api.guard.checkAddress(query.address, 'SMTP server address');
    target = { host: query.host.replace(/^\[(.*)\]$/, '$1'), address: query.address };
  }
  const { probeSmtp } = await import('../engine/smtp/probe-smtp.js');
  return probeSmtp(api.ctx, {
    host: target.host,
    port,
    // The checked address is the one connected to: the name is not resolved again.
    address: target.address,
    ...(query.tls === true ? { tls: port === 465 ? 'implicit' : 'required' } : query.tls === false ? { quitAfter: 'ehlo' as const } : {}),
    ...(query.quit_after === undefined ? {} : { quitAfter: query.quit_after }),
    ...(query.ehlo === undefined ? {} : { ehloName: query.ehlo }),
    ...(query.ptr === undefined ? {} : { reverseDns: query.ptr }),
    ...(query.transcript === undefined ? {} : { transcript: query.transcript }),
  });
}

