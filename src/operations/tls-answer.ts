import type { FastifyRequest } from 'fastify';
import type { StarttlsProtocol } from '../engine/tls/tls-result.js';
import type { ApiContext } from '../server/api-route.js';

/**
 * GET /api/tls-check's answer (docs/api.md, Endpoints): the probe of the
 * host's first address, through the target guard first (SSRF:
 * docs/design.md, The public-target guard). Loaded with the route's first request.
 */

interface TlsCheckQuery {
  host: string;
  port?: number;
  starttls?: StarttlsProtocol;
  expiry_days?: number;
  versions?: boolean;
  dane?: boolean;
}

export async function tlsCheck(request: FastifyRequest, api: ApiContext): Promise<unknown> {
  const query = request.query as TlsCheckQuery;
  const { splitTlsTarget, DEFAULT_PORTS } = await import('../engine/tls/tls-target.js');
  const { host, port } = splitTlsTarget(query.host, query.port ?? DEFAULT_PORTS[query.starttls ?? 'none']);
  api.guard.checkTlsPort(port);
  // Every address of the host is checked, in any spelling; the probe connects to the checked one and does not resolve the name again.
  const { address } = await api.guard.resolve(host, 'TLS server');
  const { probeTls } = await import('../engine/tls/probe-tls.js');
  const target = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const result = await probeTls(api.ctx, {
    target,
    address,
    starttls: query.starttls ?? null,
    ...(query.expiry_days === undefined ? {} : { expiryDays: query.expiry_days }),
    ...(query.versions === undefined ? {} : { versions: query.versions }),
    ...(query.dane === undefined ? {} : { dane: query.dane }),
  });
  return { ...result, target: query.host };
}
