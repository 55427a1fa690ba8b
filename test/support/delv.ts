/**
 * BIND's delv as a reference validator for the DNSSEC differential tests,
 * with the Debian programs those tests need beside it: NSD to serve the
 * zones, bind9-utils to sign them, delv (bind9-dnsutils) and Unbound.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createDnsTransport } from '../../src/engine/dns/dns-transport.js';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { findExecutable } from './peers.js';

const run = promisify(execFile);

export type ValidationStatus = 'secure' | 'insecure' | 'bogus' | 'indeterminate';

/** The programs a DNSSEC differential test runs; null where one is not installed. */
export const DNSSEC_TOOLS = {
  nsd: findExecutable('nsd'),
  'dnssec-keygen': findExecutable('dnssec-keygen'),
  'dnssec-signzone': findExecutable('dnssec-signzone'),
  'dnssec-dsfromkey': findExecutable('dnssec-dsfromkey'),
  delv: findExecutable('delv'),
  unbound: findExecutable('unbound'),
};

/** NSD's readiness for startNsd: the signed root it serves on `port` answers its SOA. */
export async function servesRoot(port: number): Promise<boolean> {
  const transport = createDnsTransport({ resolvers: [parseResolverAddress(`127.0.0.1:${port}`)], timeoutMs: 200, retries: 0 });
  try {
    return (await transport.query('.', 'SOA')).rcode === 'NOERROR';
  } finally {
    await transport.close();
  }
}

/** The names of the programs missing; says so once, loudly, for `testFile`, which then skips. */
export function missingDnssecTools(testFile: string): string[] {
  const missing = Object.entries(DNSSEC_TOOLS).filter(([, path]) => !path).map(([name]) => name);
  if (missing.length > 0) console.warn(`SKIPPING ${testFile}: ${missing.join(', ')} not found (Debian nsd, bind9-utils, bind9-dnsutils, unbound)`);
  return missing;
}

/** delv's whole output (stdout, then stderr) for one question to the server on 127.0.0.1:`port`, validated from `anchorFile`. */
export async function askDelv(port: number, anchorFile: string, name: string, type: string): Promise<string> {
  const output = await run(DNSSEC_TOOLS.delv!, ['@127.0.0.1', '-p', String(port), '-a', anchorFile, name, type], { timeout: 15_000 }).catch(
    (error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '' }),
  );
  return `${output.stdout}\n${output.stderr}`;
}

/** delv's verdict on one question (see readDelv). */
export async function delvVerdict(port: number, anchorFile: string, name: string, type: string): Promise<ValidationStatus> {
  return readDelv(await askDelv(port, anchorFile, name, type));
}

/**
 * delv's verdict from its output: `; fully validated`, `; unsigned answer`,
 * `; negative response, fully validated` or `; negative response, unsigned
 * answer` when it resolved; `resolution failed` with a validation error
 * otherwise (a proven NXDOMAIN or NODATA also prints "resolution failed:
 * ncache ..." before its negative-response line).
 */
export function readDelv(text: string): ValidationStatus {
  if (/; negative response, fully validated/.test(text)) return 'secure';
  if (/; negative response, unsigned answer/.test(text)) return 'insecure';
  if (/resolution failed|validation failed|broken trust chain|no valid (RRSIG|DS|KEY)|insecurity proof failed/.test(text)) return 'bogus';
  if (/; fully validated/.test(text)) return 'secure';
  if (/; unsigned answer/.test(text)) return 'insecure';
  return 'indeterminate';
}
