import { ipVersionOf } from '../engine/address/ip-text.js';
import { readTargetAddress, refusedTarget, targetRefusal } from '../engine/connect-guard.js';
import { NetintelError } from '../errors.js';

/** Ports an SMTP probe may use unless the operator says otherwise: SMTP, submissions (RFC 8314), submission, and 2525. */
export const DEFAULT_SMTP_PORTS: readonly number[] = [25, 465, 587, 2525];

/**
 * Ports `GET /api/tls-check` may probe: HTTPS, the mail ports (SMTP, submission, IMAP, POP3 and their
 * TLS forms), FTP and FTPS, LDAP and LDAPS, XMPP, DNS over TLS, PostgreSQL, and 8443.
 */
export const DEFAULT_TLS_PORTS: readonly number[] = [21, 25, 110, 143, 389, 443, 465, 587, 636, 853, 990, 993, 995, 2525, 5222, 5223, 5269, 5432, 8443];

export interface ResolvedTarget {
  /** The name as asked (for TLS SNI and certificate checks, EHLO, messages), or the canonical address. */
  host: string;
  /** The checked address to connect to: nothing resolves the name again. */
  address: string;
}

/**
 * Server-side probes (SMTP, mail checks, a caller-chosen DNS resolver) go
 * where a caller points them. Left alone they would let anyone on the
 * Internet reach the server's own network (SSRF): its loopback services,
 * private ranges, link-local cloud metadata.
 *
 * The rule that holds is the engine's connect guard (src/engine/connect-guard.ts),
 * which buildServer puts in the context: every probe calls it with the
 * address it is about to connect to. This guard answers before any probe
 * starts, with the same verdicts, so that a refused host is a 403 naming
 * the host rather than a probe that stops at connect, and checks what the
 * connect guard cannot see: every address of a name (not only the one
 * used) and the ports.
 */
export interface TargetGuard {
  readonly allowPrivate: boolean;
  /**
   * Refuses what the connect guard refuses (see targetRefusal): special-purpose
   * addresses in any text form, IPv6 forms carrying one, metadata addresses.
   *
   * @throws NetintelError `forbidden`; `invalid_input` for a non-address.
   */
  checkAddress(address: string, what: string): void;
  /**
   * Resolves a host name (or takes an IP address) and checks every address
   * it has; returns the first, which the probe must connect to. A refused
   * address is refused in any form inet_aton reads too (`0x7f.1` is
   * 127.0.0.1). Every address is
   * checked, not just the one used, so that a name cannot mix a public
   * address with a private one and hope for the other to be picked.
   *
   * @throws NetintelError `forbidden` for a refused address; DNS errors as resolved.
   */
  resolve(host: string, what: string): Promise<ResolvedTarget>;
  /** @throws NetintelError `forbidden` for a port SMTP probes may not use. */
  checkSmtpPort(port: number): void;
  /** @throws NetintelError `forbidden` for a port TLS checks may not use (`--tls-ports`, default DEFAULT_TLS_PORTS). */
  checkTlsPort(port: number): void;
}

export interface TargetGuardOptions {
  /** `--allow-private-targets`: let probes reach any address (a trusted, internal deployment). */
  allowPrivate: boolean;
  /** Every A and AAAA address of a name (the engine's resolveHostAddresses). */
  resolveHost(name: string): Promise<string[]>;
  /** Ports SMTP probes may use (`--smtp-ports`). */
  smtpPorts?: readonly number[];
  /** Ports TLS checks may use (`--tls-ports`). */
  tlsPorts?: readonly number[];
}

export function createTargetGuard(options: TargetGuardOptions): TargetGuard {
  const smtpPorts = options.smtpPorts ?? DEFAULT_SMTP_PORTS;
  const tlsPorts = options.tlsPorts ?? DEFAULT_TLS_PORTS;
  const checkAddress = (address: string, what: string, name?: string): void => {
    if (options.allowPrivate) return;
    const refusal = targetRefusal(address);
    if (refusal !== null) throw refusedTarget(refusal, name === undefined ? { what } : { what, name });
  };
  return {
    allowPrivate: options.allowPrivate,
    checkAddress: (address, what) => checkAddress(address, what),
    async resolve(host: string, what: string): Promise<ResolvedTarget> {
      const name = host.replace(/^\[(.*)\]$/, '$1');
      // Any spelling of a refused address is refused, also one getaddrinfo reads as an address
      // (`0x7f.1`, `2130706433`) and the engine as a name.
      if (readTargetAddress(name) !== null) checkAddress(name, what);
      // A zone index (`fe80::1%eth0`, reachable only with --allow-private-targets) is kept for the connection.
      if (ipVersionOf(name) !== 0) return { host: name, address: name };
      // Anything else, a public address in an old form (`0x8.8.8.8`) too, is a name, as the CLI reads it.
      const addresses = await options.resolveHost(name);
      for (const address of addresses) checkAddress(address, what, name);
      return { host: name, address: addresses[0]! };
    },
    checkSmtpPort(port: number): void {
      if (smtpPorts.includes(port)) return;
      throw new NetintelError('forbidden', `port ${port} is not a mail port this server probes (${smtpPorts.join(', ')})`, {
        details: { port, allowed: smtpPorts, rule: 'smtp-port' },
      });
    },
    checkTlsPort(port: number): void {
      if (tlsPorts.includes(port)) return;
      throw new NetintelError('forbidden', `port ${port} is not a port this server checks TLS on (${tlsPorts.join(', ')})`, {
        details: { port, allowed: tlsPorts, rule: 'tls-port' },
      });
    },
  };
}
