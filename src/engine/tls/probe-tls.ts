/**
 * `netintel tls`: the certificate chain a server presents and how it
 * validates, the protocol versions it accepts, OCSP stapling, embedded SCTs
 * and DANE, over TLS on connect or after a STARTTLS preamble.
 */
import { X509Certificate } from 'node:crypto';
import type { Socket } from 'node:net';
import type { ConnectionOptions, TLSSocket } from 'node:tls';
import { NetintelError } from '../../errors.js';
import type { EngineContext } from '../context.js';
import type { DaneOptions } from '../smtp/dane.js';
import { resolveHostAddresses } from '../dns/host-addresses.js';
import { reportStage } from '../stage.js';
import { certificateFields, keyDetails } from './certificate-details.js';
import { PREAMBLES, PreambleError } from './starttls.js';
import { connectTcp } from './tcp-connect.js';
import { selfSigned } from './path-faults.js';
import { judgeStapledOcsp, type StapledOcsp } from './stapled-ocsp.js';
import { judgeCertificate, peerChainDer, presentedChainDer, probeTlsOptions, trustAnchorFingerprints } from './tls-certificate.js';
import { tlsFindings } from './tls-findings.js';
import { tlsHandshake } from './tls-handshake.js';
import type { StarttlsProtocol, TlsCertificateSummary, TlsChainCertificate, TlsDane, TlsProtocols, TlsResult, VersionSupport } from './tls-result.js';
import { DEFAULT_EXPIRY_DAYS, TLS_VERSIONS } from './tls-result.js';
import { DEFAULT_PORTS, parseTlsTarget, type TlsTarget } from './tls-target.js';

const DAY_MS = 86_400_000;

export interface ProbeTlsOptions {
  /** `host`, `host:port`, `[v6]:port`; the port defaults to the STARTTLS protocol's, else 443. */
  target: string;
  starttls?: StarttlsProtocol | null;
  /** PEM CA certificates trusted on top of the bundled roots. */
  ca?: readonly string[];
  /** `tls_expires_soon` below this many days (default 21). */
  expiryDays?: number;
  /** Try TLS 1.0 to 1.3 one by one (default true). */
  versions?: boolean;
  /** Look up and match TLSA records (default true; only for host names). */
  dane?: boolean;
  /** How the TLSA records' DNSSEC is judged (default: validated from the IANA root trust anchor). */
  daneOptions?: DaneOptions;
  /** Deadline of each connection (connect, preamble, handshake); default ctx.timeoutMs. */
  timeoutMs?: number;
  /** Connect to this address of the host (checked already: the server's target guard) instead of resolving the name. */
  address?: string;
}

interface Session {
  socket: TLSSocket;
  ocspResponse: Buffer | null;
}

type Opened = { ok: true; session: Session; address: string } | { ok: false; stage: 'connect' | 'starttls' | 'handshake'; code: NonNullable<TlsResult['failure']>['code']; message: string; errorCode: string | null; address: string | null };

/**
 * Probes one target. Problems of the server (its certificate, its
 * protocols) are findings; a target that could not be reached, refused
 * STARTTLS or failed the handshake is a record with `failure`.
 *
 * @throws NetintelError `invalid_input` for a target that is not host[:port]; `not_found` for a name without addresses;
 *   `forbidden` from the connect guard.
 */
export async function probeTls(ctx: EngineContext, options: ProbeTlsOptions): Promise<TlsResult> {
  const starttls = options.starttls ?? null;
  const parsed = parseTlsTarget(options.target, DEFAULT_PORTS[starttls ?? 'none']);
  // A name is resolved once, by the context's resolvers (as every lookup is): each connection of the probe goes to the first address.
  const address = options.address ?? (parsed.isIp ? parsed.host : (await resolveHostAddresses(ctx, parsed.host))[0]!);
  const target: TlsTarget & { address: string } = { ...parsed, address };
  const ca = options.ca ?? [];
  const timeoutMs = options.timeoutMs ?? ctx.timeoutMs;
  const result = emptyResult(options.target, target, starttls);
  reportStage(ctx, 'tls', `${target.host}:${target.port}`, 'handshake');
  const opened = await openTls(ctx, target, starttls, withOcspRequest(probeTlsOptions(target.isIp ? null : target.host, ca)), timeoutMs);
  result.address = opened.address;
  if (!opened.ok) {
    result.connected = opened.stage !== 'connect';
    result.failure = { code: opened.code, message: opened.message };
    return result;
  }
  result.connected = true;
  result.established = true;
  const { socket, ocspResponse } = opened.session;
  result.protocol = socket.getProtocol() ?? null;
  result.cipher = socket.getCipher()?.name ?? null;
  const judged = judgeCertificate(socket, target.host, ctx, ca);
  const chainDer = peerChainDer(socket);
  const presentedDer = presentedChainDer(socket);
  socket.destroy();
  result.chain = describeChain(chainDer, ctx.now(), trustAnchorFingerprints(ca, ctx.extraTrustAnchors));
  const ocsp = ocspResponse !== null && ocspResponse.length > 0 && chainDer.length > 0 ? judgeStapledOcsp(ocspResponse, new X509Certificate(chainDer[0]!), chainDer[1] ? new X509Certificate(chainDer[1]) : null, ctx.now()) : null;
  result.certificate = judged ? certificateSummary(judged, ocsp, result.chain) : null;
  const [protocols, dane] = await Promise.all([
    options.versions === false ? null : probeVersions(ctx, target, starttls, ca, timeoutMs),
    options.dane === false || target.isIp ? null : checkTlsDane(ctx, target, presentedDer, options.daneOptions ?? {}),
  ]);
  result.protocols = protocols;
  result.dane = dane?.summary ?? null;
  result.findings = tlsFindings(result, { expiryDays: options.expiryDays ?? DEFAULT_EXPIRY_DAYS, now: ctx.now(), daneReasons: dane?.reasons ?? [], ocsp });
  return result;
}

/** The record before anything is known: nothing connected, nothing found. */
function emptyResult(given: string, target: TlsTarget, starttls: StarttlsProtocol | null): TlsResult {
  return {
    kind: 'tls',
    target: given.trim(),
    host: target.host,
    port: target.port,
    address: null,
    starttls,
    connected: false,
    established: false,
    protocol: null,
    cipher: null,
    protocols: null,
    certificate: null,
    chain: [],
    dane: null,
    findings: [],
    failure: null,
  };
}

/** The server certificate's verdicts: the shared judgement, the chain's completeness, the stapled OCSP response and the leaf's SCTs. */
function certificateSummary(judged: NonNullable<ReturnType<typeof judgeCertificate>>, ocsp: StapledOcsp | null, chain: readonly TlsChainCertificate[]): TlsCertificateSummary {
  return {
    subject: judged.subject,
    issuer: judged.issuer,
    valid_to: judged.valid_to,
    days_left: judged.days_left,
    checked_name: judged.checked_name,
    hostname_match: judged.hostname_match,
    trusted: judged.trusted,
    self_signed: judged.self_signed,
    chain_incomplete: chainIncomplete(judged.verify_error, judged.self_signed),
    verify_error: judged.verify_error,
    ocsp_stapled: ocsp !== null,
    ocsp_status: ocsp?.status ?? null,
    embedded_scts: chain[0]?.embedded_scts ?? 0,
  };
}

/** Asks for a stapled OCSP response (RFC 6066 §8): tls.connect passes `requestOCSP` to its socket, though its type does not list it. */
function withOcspRequest(options: ConnectionOptions): ConnectionOptions {
  return { ...options, requestOCSP: true } as ConnectionOptions;
}

/** The verification errors of a chain the server sent without the certificates that lead to a trust anchor. */
const INCOMPLETE_CHAIN_ERRORS = new Set(['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT']);

function chainIncomplete(verifyError: string | null, selfSigned: boolean): boolean {
  return !selfSigned && verifyError !== null && INCOMPLETE_CHAIN_ERRORS.has(verifyError);
}

/**
 * One connection through to the end of the handshake: TCP (through the
 * connect guard), the STARTTLS preamble, TLS.
 */
async function openTls(ctx: EngineContext, target: TlsTarget & { address: string }, starttls: StarttlsProtocol | null, tlsOptions: ConnectionOptions, timeoutMs: number): Promise<Opened> {
  const tcp = await connectTcp(ctx.connectGuard, { what: 'TLS server', name: target.host, address: target.address, port: target.port }, timeoutMs);
  if (!tcp.ok) return { ok: false, stage: 'connect', code: tcp.code, message: `cannot connect to ${target.address} port ${target.port}: ${tcp.reason}`, errorCode: null, address: null };
  const address = tcp.socket.remoteAddress ?? target.host;
  let plain: Socket = tcp.socket;
  if (starttls !== null) {
    try {
      plain = await PREAMBLES[starttls](tcp.socket, target.host, performance.now() + timeoutMs);
    } catch (error) {
      tcp.socket.destroy();
      if (!(error instanceof PreambleError)) throw error;
      return { ok: false, stage: 'starttls', code: error.code, message: `${starttls} STARTTLS with ${target.host} port ${target.port} failed: ${error.message}`, errorCode: null, address };
    }
  }
  const outcome = await tlsHandshake(plain, tlsOptions, timeoutMs);
  if (!outcome.ok) {
    return { ok: false, stage: 'handshake', code: outcome.code === 'ETIMEDOUT' ? 'timeout' : 'tls', message: `TLS handshake with ${target.host} port ${target.port} failed: ${outcome.error}`, errorCode: outcome.code, address };
  }
  return { ok: true, session: { socket: outcome.socket, ocspResponse: outcome.ocspResponse }, address };
}

/** OpenSSL's errors when the client itself cannot offer the version (a security level or build without it). */
const CLIENT_CANNOT_OFFER = new Set(['ERR_SSL_NO_PROTOCOLS_AVAILABLE', 'ERR_SSL_NO_CIPHERS_AVAILABLE', 'ERR_TLS_INVALID_PROTOCOL_VERSION', 'ERR_TLS_PROTOCOL_VERSION_CONFLICT']);

/** Each version on a connection of its own, minVersion = maxVersion, at security level 0 so that old versions can be offered at all. */
async function probeVersions(ctx: EngineContext, target: TlsTarget & { address: string }, starttls: StarttlsProtocol | null, ca: readonly string[], timeoutMs: number): Promise<TlsProtocols> {
  const base = probeTlsOptions(target.isIp ? null : target.host, ca);
  const supports = await Promise.all(
    TLS_VERSIONS.map(async ({ version }): Promise<VersionSupport> => {
      const opened = await openTls(ctx, target, starttls, { ...base, minVersion: version, maxVersion: version, ciphers: 'DEFAULT:@SECLEVEL=0' }, timeoutMs);
      if (opened.ok) {
        const negotiated = opened.session.socket.getProtocol();
        opened.session.socket.destroy();
        return negotiated === version ? 'accepted' : 'refused';
      }
      if (opened.stage !== 'handshake' || opened.code === 'timeout') return 'failed';
      return opened.errorCode !== null && CLIENT_CANNOT_OFFER.has(opened.errorCode) ? 'not_tried' : 'refused';
    }),
  );
  return { tls1_0: supports[0]!, tls1_1: supports[1]!, tls1_2: supports[2]!, tls1_3: supports[3]! };
}

/** Each certificate of the chain (leaf first) with its key, signature algorithm, dates and SCTs. */
function describeChain(chainDer: readonly Buffer[], now: Date, anchors: ReadonlySet<string>): TlsChainCertificate[] {
  return chainDer.map((der) => {
    const x509 = new X509Certificate(der);
    const fields = certificateFields(der);
    const key = keyDetails(x509);
    const notAfter = new Date(x509.validTo).getTime();
    const fingerprint = x509.fingerprint256;
    return {
      subject: x509.subject.split('\n').join(', '),
      issuer: x509.issuer.split('\n').join(', '),
      san: (x509.subjectAltName ?? '').split(/,\s*/).filter((entry) => entry.length > 0),
      key_type: key.type,
      key_bits: key.bits,
      signature_algorithm: fields.signatureAlgorithm,
      valid_from: new Date(x509.validFrom).toISOString(),
      valid_to: new Date(notAfter).toISOString(),
      days_left: Math.floor((notAfter - now.getTime()) / DAY_MS),
      self_signed: selfSigned(x509),
      trust_anchor: anchors.has(fingerprint.replace(/:/g, '')),
      embedded_scts: fields.embeddedScts,
      fingerprint_sha256: fingerprint,
    };
  });
}

/** DANE for any service (RFC 6698 §3: `_<port>._tcp.<host>`), with the matching of the SMTP probe; a failed lookup is a verdict, not an exception. */
async function checkTlsDane(ctx: EngineContext, target: TlsTarget, chainDer: readonly Buffer[], daneOptions: DaneOptions): Promise<{ summary: TlsDane; reasons: string[] }> {
  const { checkDane, mismatchReasons, tlsaName } = await import('../smtp/dane.js');
  try {
    const dane = await checkDane(ctx, target.host, chainDer, { ...daneOptions, port: target.port });
    const error =
      dane.tlsa.status === 'failed'
        ? (dane.tlsa.error?.message ?? null)
        : dane.dnssec.status === 'bogus'
          ? `DNSSEC validation fails: ${dane.dnssec.reason ?? 'bogus'}`
          : // The verdict is `failed` for each of these (dane.ts); this says which, in words.
            dane.dnssec.status === 'indeterminate' && dane.tlsa.records.length > 0
            ? `DNSSEC could not be decided: ${dane.dnssec.reason ?? 'unknown'}`
            : null;
    return {
      summary: { verdict: dane.verdict, tlsa_name: dane.tlsa.name, records: dane.tlsa.records.length, dnssec: dane.dnssec.status, error },
      reasons: mismatchReasons(dane.matches),
    };
  } catch (error) {
    if (error instanceof NetintelError && error.code === 'forbidden') throw error;
    return {
      summary: { verdict: 'failed', tlsa_name: tlsaName(target.host, target.port), records: 0, dnssec: 'indeterminate', error: error instanceof Error ? error.message : String(error) },
      reasons: [],
    };
  }
}
