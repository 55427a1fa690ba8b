import csrfProtection from '@fastify/csrf-protection';
import formBody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import secureSession from '@fastify/secure-session';
import type { FastifyError, FastifyInstance } from 'fastify';
import { NetintelError } from '../errors.js';
import { messagePage } from './pages.js';
import { SESSION_SECONDS, sendPage } from './pages-context.js';

const FORM_BODY_LIMIT = 16 * 1024;

/**
 * What every account page stands behind, registered on the pages' own
 * context: the form parser (and no other), the sealed session cookie, CSRF
 * tokens, the security headers, no caching, and errors answered as pages.
 */
export async function registerPageProtections(pages: FastifyInstance, options: { sessionKey: Buffer; https: boolean }): Promise<void> {
  const { https } = options;
  // Forms are application/x-www-form-urlencoded, and nothing else: the API's JSON and text parsers do not apply here (415).
  pages.removeAllContentTypeParsers();
  await pages.register(formBody, { bodyLimit: FORM_BODY_LIMIT });
  await pages.register(secureSession, {
    key: options.sessionKey,
    // The __Host- prefix makes browsers refuse the cookie unless it is Secure, host-only and for path / (RFC 6265bis §4.1.3.2).
    cookieName: https ? '__Host-netintel-session' : 'netintel-session',
    expiry: SESSION_SECONDS,
    cookie: { path: '/', httpOnly: true, sameSite: 'lax', secure: https, maxAge: SESSION_SECONDS },
  });
  await pages.register(csrfProtection, { sessionPlugin: '@fastify/secure-session' });
  await pages.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
        ...(https ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    // HSTS only where the pages are served over https; on http it would be ignored, or wrong behind a proxy that adds its own.
    strictTransportSecurity: https ? { maxAge: 15_552_000, includeSubDomains: false } : false,
    referrerPolicy: { policy: 'no-referrer' },
  });

  pages.addHook('onSend', (_request, reply, payload, done) => {
    // Pages carry CSRF tokens, keys and account details: never stored by a cache.
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    done(null, payload);
  });

  pages.setErrorHandler((error: FastifyError | NetintelError, request, reply) => {
    const base = { csrf: '', signedIn: null };
    if ((error as FastifyError).code?.startsWith('FST_CSRF')) {
      return sendPage(reply, 403, messagePage(base, {
        title: 'Form expired',
        kind: 'error',
        text: 'This form has expired or did not come from this site. Go back, reload the page and send it again.',
        next: { href: request.url.split('?')[0] ?? '/', label: 'Reload the form' },
      }));
    }
    const status = (error as FastifyError).statusCode;
    // The account database or the throttles' store (Redis) did not answer in time: a moment later they may.
    if (error instanceof NetintelError && (error.code === 'data_unavailable' || error.code === 'unreachable' || error.code === 'timeout')) {
      request.log.error({ err: error }, 'account page failed: a store did not answer');
      reply.header('retry-after', 30);
      return sendPage(reply, 503, messagePage(base, { title: 'Try again shortly', kind: 'error', text: 'The account service cannot answer just now. Try again in a minute.' }));
    }
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return sendPage(reply, status, messagePage(base, { title: 'That did not work', kind: 'error', text: 'The request could not be read. Go back and send the form again.', next: { href: '/', label: 'Start again' } }));
    }
    request.log.error({ err: error, path: request.url.split('?')[0] }, 'account page failed');
    return sendPage(reply, 500, messagePage(base, { title: 'Something went wrong', kind: 'error', text: 'The page failed; the server logged why. Try again in a minute.' }));
  });
}
