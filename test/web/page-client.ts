/**
 * A browser's part in page tests, over fastify's inject or over HTTP to a
 * running server: keeps cookies as a browser would (by name, dropped when
 * expired or emptied), reads the CSRF token of the last page, and posts
 * forms with it. Redirects are not followed: tests look at them.
 */
import type { FastifyInstance } from 'fastify';

export interface Page {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  location: string | undefined;
}

type Send = (request: { method: 'GET' | 'POST'; url: string; headers: Record<string, string>; payload?: string }) => Promise<Omit<Page, 'location'>>;

function viaInject(app: FastifyInstance): Send {
  return async ({ method, url, headers, payload }) => {
    const response = await app.inject({ method, url, headers, ...(payload !== undefined ? { payload } : {}) });
    return { status: response.statusCode, headers: response.headers, body: response.body };
  };
}

/** Over HTTP: `base` is a server's address, e.g. http://127.0.0.1:8080. */
function viaHttp(base: string): Send {
  return async ({ method, url, headers, payload }) => {
    const response = await fetch(new URL(url, base), { method, headers, body: payload, redirect: 'manual' });
    const collected: Page['headers'] = Object.fromEntries(response.headers);
    collected['set-cookie'] = response.headers.getSetCookie();
    return { status: response.status, headers: collected, body: await response.text() };
  };
}

export class PageClient {
  readonly cookies = new Map<string, string>();
  csrf = '';

  private send: Send;

  /** `server`: an app to inject into, or the address of a running server (then `use` switches servers, as a load balancer would). */
  constructor(
    server: FastifyInstance | string,
    private readonly headers: Record<string, string> = {},
  ) {
    this.send = typeof server === 'string' ? viaHttp(server) : viaInject(server);
  }

  /** From now on, the same browser (its cookies) talks to another server, as behind a load balancer. */
  use(server: FastifyInstance | string): this {
    this.send = typeof server === 'string' ? viaHttp(server) : viaInject(server);
    return this;
  }

  async get(url: string): Promise<Page> {
    return this.request('GET', url);
  }

  /** Posts a form; the page's CSRF token is added unless the fields name `_csrf` themselves. */
  async post(url: string, fields: Record<string, string>): Promise<Page> {
    const form = new URLSearchParams({ _csrf: this.csrf, ...fields });
    return this.request('POST', url, form.toString());
  }

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private async request(method: 'GET' | 'POST', url: string, payload?: string): Promise<Page> {
    const response = await this.send({
      method,
      url,
      headers: {
        ...this.headers,
        ...(this.cookies.size > 0 ? { cookie: this.cookieHeader() } : {}),
        ...(payload !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(payload !== undefined ? { payload } : {}),
    });
    // Kept as sent (still URL-encoded), as a browser returns them.
    const setCookies = [response.headers['set-cookie'] ?? []].flat().map(String);
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
      const equals = pair.indexOf('=');
      const name = pair.slice(0, equals);
      const value = pair.slice(equals + 1);
      const expired = attributes.some((attribute) => /^max-age=0$/i.test(attribute) || (/^expires=/i.test(attribute) && Date.parse(attribute.slice(8)) <= Date.now()));
      if (value === '' || expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const token = /name="_csrf" value="([^"]+)"/.exec(response.body);
    if (token) this.csrf = token[1]!;
    const location = response.headers.location;
    return { ...response, location: typeof location === 'string' ? location : undefined };
  }
}
