import { isIP } from 'node:net';
import { parseIpAddress } from '../engine/ip/ip-address.js';
import { specialPurposeOf } from '../engine/ip/special-ranges.js';
import { NetintelError } from '../errors.js';

/**
 * Cloud metadata services on ordinary-looking addresses. The usual one,
 * 169.254.169.254 (and AWS's fd00:ec2::254), is link-local or unique local
 * and refused with those; these are not.
 */
const METADATA_ADDRESSES: ReadonlyMap<string, string> = new Map([
  ['168.63.129.16', 'Azure platform (WireServer) address'],
  ['100.100.100.200', 'Alibaba Cloud metadata service'],
]);

/** Ports an SMTP probe may use unless the operator says otherwise: SMTP, submissions (RFC 8314), submission, and 2525. */
export const DEFAULT_SMTP_PORTS: readonly number[] = [25, 465, 587, 2525];

export interface ResolvedTarget {
  /** The name as asked (for TLS SNI and certificate checks, EHLO, messages). */
  host: string;
  /** The checked address to connect to: nothing resolves the name again. */
  address: string;
}

/**
 * Server-side probes (SMTP, mail checks, a caller-chosen DNS resolver) go
 * where a caller points them. Left alone they would let anyone on the
 * Internet reach the server's own network (SSRF): its loopback services,
 * private ranges, link-local cloud metadata. The guard refuses those.
 */
export interface TargetGuard {
  readonly allowPrivate: boolean;
  /**
   * Refuses an address in a special-purpose block (private, loopback,
   * link-local, CGNAT, unique local, NAT64, documentation, multicast, ...;
   * see src/engine/ip/special-ranges.ts) or a metadata address.
   *
   * @throws NetintelError `forbidden`.
   */
  checkAddress(address: string, what: string): void;
  /**
   * Resolves a host name (or takes an IP address) and checks every address
   * it has; returns the first, which the probe must connect to. Every
   * address is checked, not just the one used, so that a name cannot mix a
   * public address with a private one and hope for the other to be picked.
   *
   * @throws NetintelError `forbidden` for a refused address; DNS errors as resolved.
   */
  resolve(host: string, what: string): Promise<ResolvedTarget>;
  /** @throws NetintelError `forbidden` for a port SMTP probes may not use. */
  checkSmtpPort(port: number): void;
}

export interface TargetGuardOptions {
  /** `--allow-private-targets`: let probes reach any address (a trusted, internal deployment). */
  allowPrivate: boolean;
  /** Every A and AAAA address of a name (the engine's resolveHostAddresses). */
  resolveHost(name: string): Promise<string[]>;
  /** Ports SMTP probes may use (`--smtp-ports`). */
  smtpPorts?: readonly number[];
}

export function createTargetGuard(options: TargetGuardOptions): TargetGuard {
  const smtpPorts = options.smtpPorts ?? DEFAULT_SMTP_PORTS;
  const checkAddress = (address: string, what: string): void => {
    if (options.allowPrivate) return;
    const parsed = parseIpAddress(address);
    const reason = specialPurposeOf(parsed) ?? METADATA_ADDRESSES.get(parsed.text) ?? null;
    if (reason !== null) {
      throw new NetintelError(
        'forbidden',
        `${what} ${parsed.text} is ${reason}: this server does not probe private, loopback, link-local or metadata addresses`,
        { details: { address: parsed.text, reason, rule: 'private-target' } },
      );
    }
  };
  return {
    allowPrivate: options.allowPrivate,
    checkAddress,
    async resolve(host: string, what: string): Promise<ResolvedTarget> {
      const name = host.replace(/^\[(.*)\]$/, '$1');
      const addresses = isIP(name) !== 0 ? [name] : await options.resolveHost(name);
      for (const address of addresses) checkAddress(address, isIP(name) !== 0 ? what : `${what} ${name} resolves to`);
      return { host: name, address: addresses[0]! };
    },
    checkSmtpPort(port: number): void {
      if (smtpPorts.includes(port)) return;
      throw new NetintelError('forbidden', `port ${port} is not a mail port this server probes (${smtpPorts.join(', ')})`, {
        details: { port, allowed: smtpPorts, rule: 'smtp-port' },
      });
    },
  };
}
