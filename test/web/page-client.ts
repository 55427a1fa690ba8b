/**
 * A browser's part in page tests over fastify's inject: keeps cookies as a
 * browser would (by name, dropped when expired or emptied), reads the CSRF
 * token of the last page, and posts forms with it.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

export interface Page {
  status: number;
  headers: LightMyRequestResponse['headers'];
  body: string;
  location: string | undefined;
}

export class PageClient {
  readonly cookies = new Map<string, string>();
  csrf = '';

  constructor(
    private readonly app: FastifyInstance,
    private readonly headers: Record<string, string> = {},
  ) {}

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
    const response = await this.app.inject({
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
    const setCookies = [response.headers['set-cookie'] ?? []].flat();
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
    return { status: response.statusCode, headers: response.headers, body: response.body, location: typeof location === 'string' ? location : undefined };
  }
}
