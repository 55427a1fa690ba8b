import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import { addressSubject } from '../server/client-address.js';
import type { AccountRecord } from '../store/account-store.js';
import type { AccountPagesDeps } from './account-pages.js';
import { DEVICE_COOKIE_SECONDS, DeviceCookies, type Device } from './device-cookie.js';
import { GATE_FULL, HashGate } from './hash-gate.js';
import type { Frame } from './layout.js';
import type { OidcPending } from './oidc.js';
import { messagePage, type Provider } from './pages.js';
import { FormThrottles, type Reservation, type ThrottleCheck, type Throttled } from './throttles.js';

declare module '@fastify/secure-session' {
  interface SessionData {
    /** The signed-in session's id: the database holds its hash (AccountStore.startSession). */
    sid: string;
    /** A social sign-in under way: the provider and what its callback is checked against. */
    oidc: { provider: string; pending: OidcPending };
    /** A one-time message for the next page. */
    flash: string;
  }
}

/** How long a sign-in lasts. */
export const SESSION_SECONDS = 7 * 24 * 3600;

/** The frame every page is drawn in: the form's CSRF token and who is signed in. */
export type PageBase = Pick<Frame, 'csrf' | 'signedIn'>;

/**
 * What the flows (flows/) share: the pages' fastify context, the stores,
 * the signed-in account of a request and signing in, the throttles and
 * the hash gate, and the page for a throttled request.
 */
export interface PagesContext {
  /** The pages' own fastify context (account-pages.ts): routes registered here get the form parser, session, CSRF and headers. */
  pages: FastifyInstance;
  deps: AccountPagesDeps;
  throttles: FormThrottles;
  /** The name of the device cookie (__Host- over https). */
  deviceCookie: string;
  /** Route options of a form's POST: its CSRF token is checked first. */
  protect: { preHandler: preHandlerHookHandler };
  /** The caller as the throttles count it: its address (the API's, trusted proxies applied), or its /64 for IPv6, as the API's limits count callers. */
  client(request: FastifyRequest): string;
  /** The signed-in account, or null; a session that no longer holds (ended, expired, account deleted or disabled) is cleared. */
  signedIn(request: FastifyRequest): Promise<AccountRecord | null>;
  /**
   * Starts a session for `account` in a new cookie, and marks this browser
   * as one the account knows; true when it did. With `checkedPassword` (the
   * hash the password was checked against) it does neither, and says false,
   * when a change or reset has replaced that password meanwhile.
   */
  signIn(request: FastifyRequest, reply: FastifyReply, account: AccountRecord, checkedPassword?: string): Promise<boolean>;
  /** The device cookie of the browser, when it names `account`. */
  knownDevice(request: FastifyRequest, account: AccountRecord | null): Device | null;
  /**
   * The throttles of one password attempt for `email` by this request: the log-in form's, and the
   * dashboard's when it asks for the current password, so that a stolen session guesses no faster.
   */
  passwordChecks(request: FastifyRequest, email: string | null, account: AccountRecord | null): ThrottleCheck[];
  /** The throttles of a message to `email` caused by this request. */
  mailChecks(request: FastifyRequest, email: string, account: AccountRecord | null): ThrottleCheck[];
  /** Hashing in its turn (hash-gate.ts); null when too much is waiting, after giving back what the request reserved. */
  hashing<T>(request: FastifyRequest, reservation: Reservation, work: () => Promise<T>): Promise<T | null>;
  base(reply: FastifyReply, account: AccountRecord | null): PageBase;
  /** The social sign-ins offered, if any. */
  providers(): Provider[];
  /** 429 with Retry-After: a throttle refused (`throttled`), or the hash gate was full (null). */
  throttledPage(reply: FastifyReply, throttled: Throttled | null, account: AccountRecord | null): FastifyReply;
}

export function createPagesContext(pages: FastifyInstance, deps: AccountPagesDeps): PagesContext {
  const { accounts, social, https } = deps;
  const now = deps.now ?? Date.now;
  const gate = deps.hashGate ?? new HashGate();
  const devices = new DeviceCookies(deps.sessionKey);
  const deviceCookie = https ? '__Host-netintel-device' : 'netintel-device';
  // One subscriber holds a whole IPv6 /64: counted per address, a client would pass every throttle by rotating through it.
  const client = (request: FastifyRequest) => addressSubject(request.netintel.client);
  const base = (reply: FastifyReply, account: AccountRecord | null): PageBase => ({ csrf: reply.generateCsrf(), signedIn: account?.email ?? null });

  const knownDevice = (request: FastifyRequest, account: AccountRecord | null): Device | null => {
    const device = devices.read(request.cookies[deviceCookie]);
    return device !== null && account !== null && device.accountId === account.id ? device : null;
  };

  return {
    pages,
    deps,
    throttles: new FormThrottles(deps.limits, now),
    deviceCookie,
    protect: { preHandler: pages.csrfProtection },
    client,
    signedIn: async (request) => {
      const sid = request.session.get('sid');
      if (typeof sid !== 'string') return null;
      const account = await accounts.sessionAccount(sid);
      if (account === null) request.session.set('sid', undefined);
      return account;
    },
    signIn: async (request, reply, account, checkedPassword) => {
      const sid = await accounts.startSession(account.id, SESSION_SECONDS * 1000, checkedPassword);
      if (sid === null) return false;
      // A new session at sign-in, so one planted before it (session fixation) holds nothing afterwards.
      request.session.regenerate();
      request.session.set('sid', sid);
      // This browser is now one the account knows: failures elsewhere do not block it (throttles.ts).
      reply.setCookie(deviceCookie, devices.issue(account.id), { path: '/', httpOnly: true, sameSite: 'lax', secure: https, maxAge: DEVICE_COOKIE_SECONDS });
      return true;
    },
    knownDevice,
    passwordChecks: (request, email, account) => {
      const device = knownDevice(request, account);
      if (device) return [['signInByDevice', device.id]];
      return [['signInByClient', client(request)], ...(email === null ? [] : ([['signInByAddressAndClient', `${email} ${client(request)}`], ['signInByAddress', email]] as const))];
    },
    mailChecks: (request, email, account) => {
      const device = knownDevice(request, account);
      // Counted per mailbox as mail systems deliver: the local part's case, which accounts keep (RFC 5321 §2.4),
      // reaches one inbox at nearly every provider, so spelling it differently must not multiply the messages.
      const mailbox = email.toLowerCase();
      return [['mailByAddressAndClient', `${mailbox} ${client(request)}`], device ? ['mailByDevice', device.id] : ['mailByAddress', mailbox]];
    },
    hashing: async (request, reservation, work) => {
      const result = await gate.run(client(request), work);
      if (result !== GATE_FULL) return result;
      await reservation.refund();
      return null;
    },
    base,
    providers: () => social?.providers() ?? [],
    throttledPage: (reply, throttled, account) => {
      const seconds = throttled?.retryAfterSeconds ?? 1;
      const minutes = Math.ceil(seconds / 60);
      reply.header('retry-after', seconds);
      const mail = throttled !== null && throttled.by.startsWith('mail');
      return sendPage(reply, 429, messagePage(base(reply, account), {
        title: 'Too many attempts',
        kind: 'error',
        text:
          throttled === null
            ? 'Too many attempts at once. Wait a moment and try again.'
            : mail
              ? `We have sent several messages to this address lately. Use the newest one in your mailbox (only its link works), or wait ${minutes === 1 ? 'a minute' : `${minutes} minutes`} and try again.`
              : `Too many attempts for now. Wait ${minutes === 1 ? 'a minute' : `${minutes} minutes`} and try again.`,
        next: { href: '/forgot', label: 'Forgotten your password?' },
      }));
    },
  };
}

export function sendPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(body);
}

/** The fields of a form as strings: absent, repeated or odd values read as empty. */
export function formFields(body: unknown): { email: string; password: string; current: string; token: string; label: string } {
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const text = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string) : '');
  return { email: text('email'), password: text('password'), current: text('current'), token: text('token'), label: text('label') };
}

export function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
