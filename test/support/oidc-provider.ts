/**
 * A real OpenID Provider for tests (oidc-provider on 127.0.0.1 port 0),
 * with accounts whose claims the tests choose, and a browser's part in its
 * log-in and consent pages (devInteractions), driven with fetch.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { expect } from 'vitest';

export const CLIENT_ID = 'netintel-web';
export const CLIENT_SECRET = 'test-client-secret-5b0f0c3e9d1a4f7e';
// The provider redirects the browser here; the test reads the Location instead of serving it.
export const REDIRECT_URI = 'http://127.0.0.1:9/login/corp/callback';

/** Accounts of the test provider: their claims are what the ID token or userinfo carry. */
export const ACCOUNTS: Record<string, Record<string, unknown>> = {
  'ada': { email: 'Ada@Example.COM', email_verified: true, name: 'Ada' },
  'mallory': { email: 'ada@example.com', email_verified: false, name: 'Mallory' },
  'noemail': { name: 'No Mail' },
};

export interface TestIssuer {
  issuer: string;
  port: number;
  /** Paths the provider was asked for, in order. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * A real OpenID Provider (oidc-provider) on 127.0.0.1. `claimsInIdToken` false keeps the
 * provider's default (OpenID Connect Core 1.0 §5.4: scope claims come from userinfo when an
 * access token is issued); true puts them into the ID token as well.
 */
export async function startIssuer(options: { claimsInIdToken: boolean; port?: number; redirectUris?: string[] }): Promise<TestIssuer> {
  const server: Server = createServer();
  server.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: options.redirectUris ?? [REDIRECT_URI],
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code'],
      response_types: ['code'],
    }],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    conformIdTokenClaims: !options.claimsInIdToken,
    cookies: { keys: ['netintel-test-cookie-key'] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    async findAccount(_ctx: unknown, sub: string) {
      const claims = ACCOUNTS[sub];
      if (claims === undefined) return undefined;
      return { accountId: sub, claims: async () => ({ sub, ...claims }) };
    },
  });
  const requests: string[] = [];
  const handle = provider.callback();
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    requests.push(new URL(request.url ?? '/', issuer).pathname);
    void handle(request, response);
  });
  return {
    issuer,
    port,
    requests,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** A browser for one login: it keeps the provider's cookies and follows redirects by hand. */
export class ProviderBrowser {
  private readonly cookies = new Map<string, string>();

  /** `redirectUri`: where the provider sends the browser back; the walk stops there. */
  constructor(private readonly redirectUri: string = REDIRECT_URI) {}

  async request(url: string, init: { method?: string; body?: URLSearchParams } = {}): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    if (init.body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(url, { method: init.method ?? 'GET', headers, body: init.body, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((attribute) => /^\s*expires=.*1970/i.test(attribute));
      if (value === '' || expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  /**
   * Walks from the authorization URL through the provider's login and consent pages to the
   * redirect back to netintel, and returns that callback URL. `choice` says what the person does
   * on the login page: log in as an account, or cancel.
   */
  async logIn(authorizationUrl: string, choice: { account: string } | 'cancel'): Promise<URL> {
    let url = authorizationUrl;
    let init: { method?: string; body?: URLSearchParams } = {};
    for (let step = 0; step < 20; step += 1) {
      if (url.startsWith(this.redirectUri)) return new URL(url);
      const response = await this.request(url, init);
      init = {};
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location !== null) {
        url = new URL(location, url).href;
        await response.arrayBuffer();
        continue;
      }
      const page = await response.text();
      expect(response.status, page).toBe(200);
      const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
      if (prompt === 'login' && choice === 'cancel') {
        url = new URL(`${new URL(url).pathname}/abort`, url).href;
      } else if (prompt === 'login' && choice !== 'cancel') {
        init = { method: 'POST', body: new URLSearchParams({ prompt: 'login', login: choice.account, password: 'any' }) };
      } else if (prompt === 'consent') {
        init = { method: 'POST', body: new URLSearchParams({ prompt: 'consent' }) };
      } else {
        throw new Error(`unexpected page at ${url}: ${page.slice(0, 300)}`);
      }
    }
    throw new Error('the login did not come back to the redirect URI');
  }
}
