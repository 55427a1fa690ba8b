import { NetintelError } from '../errors.js';
import type { ApiKeyRecord } from '../keys/key-store.js';
import type { PlanTable } from '../keys/plans.js';
import type { LinkPurpose } from './link-tokens.js';

/** An account as `netintel accounts` shows it: never its password hash. */
export interface AccountRecord {
  kind: 'account';
  id: string;
  email: string;
  emailVerifiedAt: string | null;
  plan: string;
  /** False for an account that signs in only through another provider. */
  hasPassword: boolean;
  createdAt: string;
  disabledAt: string | null;
}

export interface CreateAccountInput {
  email: string;
  /** A hash from passwords.ts, or null for an account without a password. */
  passwordHash: string | null;
  /** Default 'free'. */
  plan?: string;
}

export interface NewLinkRow {
  accountId: string;
  purpose: LinkPurpose;
  /** hashLinkToken of the token (link-tokens.ts): the token itself is never stored. */
  tokenHash: string;
  expiresAt: Date;
}

/**
 * Accounts of the self-service pages, in the database of the keys (the
 * same `--db`): SQLite (sqlite-account-store.ts) or PostgreSQL
 * (postgres-account-store.ts). Methods naming an account by id throw
 * NetintelError `not_found` when there is none.
 */
export interface AccountStore {
  readonly location: string;
  /** @throws NetintelError `usage` for an e-mail address that cannot be one, or one an account already has. */
  create(input: CreateAccountInput): Promise<AccountRecord>;
  byId(id: string): Promise<AccountRecord | null>;
  /** Finds by the normalised address (normaliseEmail). */
  byEmail(email: string): Promise<AccountRecord | null>;
  /** An id, else an e-mail address (anything with an @): what operators type. */
  find(idOrEmail: string): Promise<AccountRecord>;
  list(): Promise<AccountRecord[]>;
  /** The stored password hash, or null; for signing in. */
  passwordHash(id: string): Promise<string | null>;
  /** Marks the address verified; a second call keeps the first date. */
  markVerified(id: string): Promise<AccountRecord>;
  setPasswordHash(id: string, hash: string | null): Promise<AccountRecord>;
  /**
   * Sets the plan of the account and of every key it has, in one transaction.
   *
   * @throws NetintelError `usage` for a plan not in `plans` (effectivePlan).
   */
  setPlan(id: string, plan: string, plans: PlanTable): Promise<AccountRecord>;
  /** Disables the account: `check` refuses its keys from then on. A second call keeps the first date. */
  disable(id: string): Promise<AccountRecord>;
  /** Deletes the account, its keys and its links in one transaction; returns what it was. */
  delete(id: string): Promise<AccountRecord>;
  storeLink(link: NewLinkRow): Promise<void>;
  /**
   * Uses a mailed link's token once: marks it used if it is unused, of
   * `purpose`, and not expired at `now`, in one statement, so of two
   * requests at once exactly one gets the account id; the other (and any
   * later one) gets null.
   */
  consumeLink(token: string, purpose: LinkPurpose, now?: Date): Promise<string | null>;
  /** The account a link would act for, without using it: null when it is unknown, used, expired or of another purpose. */
  linkHolder(token: string, purpose: LinkPurpose, now?: Date): Promise<AccountRecord | null>;
  keysOf(id: string): Promise<ApiKeyRecord[]>;
  /** The account's session counter: a session made under a lower one is over. */
  sessionEpoch(id: string): Promise<number>;
  /** Ends every session of the account (raises its counter); returns the new counter. */
  endSessions(id: string): Promise<number>;
  /**
   * The key that seals the account pages' session cookies: 32 random bytes
   * made by the first server that asks and kept in the database, so every
   * server sharing it reads every session.
   */
  sessionKey(): Promise<Buffer>;
  close(): Promise<void>;
}

/**
 * The form an address is stored and looked up in: trimmed, the domain
 * lower-cased. The local part keeps its case (RFC 5321 section 2.4 leaves
 * it to the receiving host).
 *
 * @throws NetintelError `usage` when there is no local part or domain.
 */
export function normaliseEmail(email: string): string {
  const trimmed = email.trim();
  const at = trimmed.lastIndexOf('@');
  const local = trimmed.slice(0, at);
  const domain = trimmed.slice(at + 1);
  if (at <= 0 || domain === '' || /\s/.test(trimmed) || domain.includes('@') || trimmed.length > 254) {
    throw new NetintelError('usage', `${JSON.stringify(email)} is not an e-mail address (give local@domain)`, { details: { email } });
  }
  return `${local}@${domain.toLowerCase()}`;
}

export function accountNotFound(idOrEmail: string): NetintelError {
  return new NetintelError('not_found', `no account has the ${idOrEmail.includes('@') ? 'e-mail address' : 'id'} ${JSON.stringify(idOrEmail)}`, {
    details: { account: idOrEmail },
  });
}

export function emailTaken(email: string): NetintelError {
  return new NetintelError('usage', `an account with the e-mail address ${JSON.stringify(email)} exists already (use another address)`, { details: { email } });
}
