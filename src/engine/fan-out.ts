import type { Finding } from './findings.js';

/**
 * How far one check may fan out from what DNS answered. A domain chooses
 * its MX records and a host its addresses, so one answer could otherwise
 * turn one check into thousands of lookups and connections: 2,000 MX
 * records made one `email` run open 2,000 SMTP connections. Each check (one
 * domain of `email`, `mx` or `blacklist`, one host of `smtp`) keeps to
 * these caps and says in a finding when one applied.
 */
export interface FanOutLimits {
  /** MX hosts of a domain looked up, probed and checked, in preference order. */
  maxMxHosts: number;
  /** Addresses of one host used (PTR-checked, probed, looked up on blocklists), A records before AAAA. */
  maxAddresses: number;
  /** SMTP connections one check opens. */
  maxSmtpConnections: number;
}

/** The caps of the CLI and of the library (docs/limits.md). */
export const DEFAULT_FAN_OUT: Readonly<FanOutLimits> = { maxMxHosts: 10, maxAddresses: 10, maxSmtpConnections: 20 };

/**
 * The caps of `netintel serve`, where a caller anywhere chooses the domain:
 * lower than the CLI's, set by the operator (`serve --max-mx` ...), never
 * by the caller.
 */
export const SERVER_FAN_OUT: Readonly<FanOutLimits> = { maxMxHosts: 5, maxAddresses: 4, maxSmtpConnections: 5 };

/** The caps a context sets, or the defaults. */
export function fanOutLimits(given: { fanOut?: FanOutLimits | null | undefined }): FanOutLimits {
  return given.fanOut ?? DEFAULT_FAN_OUT;
}

/**
 * The SMTP connections left to one check. `take()` is true (and counts one)
 * while the check may open another.
 */
export interface ConnectionBudget {
  readonly limit: number;
  readonly used: number;
  take(): boolean;
}

export function createConnectionBudget(limit: number): ConnectionBudget {
  let used = 0;
  return {
    limit,
    get used() {
      return used;
    },
    take() {
      if (used >= limit) return false;
      used += 1;
      return true;
    },
  };
}

/**
 * The first `limit` items, and when some were left out, the finding
 * `found(total)` makes of it (see {@link capMessage}, {@link capEvidence}).
 */
export function capList<T>(items: readonly T[], limit: number, found: (total: number) => Finding): { kept: T[]; finding: Finding | null } {
  if (items.length <= limit) return { kept: [...items], finding: null };
  return { kept: items.slice(0, limit), finding: found(items.length) };
}

/**
 * The words of a cap's finding: `There are 2000 MX hosts of example.com;
 * only the first 10 were checked (the limit of MX hosts per check), the
 * other 1990 were not`. `what` names the items in plural, `limitName` the cap.
 */
export function capMessage(total: number, limit: number, what: string, limitName: string): string {
  return `There are ${total} ${what}; only the first ${limit} were checked (the limit of ${limitName}), the other ${total - limit} were not`;
}

/** The evidence of a cap's finding: what it is about, and how many of how many were checked. */
export function capEvidence(total: number, limit: number, about: Record<string, unknown>): Record<string, unknown> {
  return { ...about, total, checked: limit, limit };
}
