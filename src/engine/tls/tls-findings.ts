import { finding, type Finding } from '../findings.js';
import { pathFaultText } from './path-faults.js';
import type { StapledOcsp } from './stapled-ocsp.js';
import type { TlsChainCertificate, TlsResult } from './tls-result.js';

export interface TlsFindingOptions {
  /** `tls_expires_soon` below this many days left. */
  expiryDays: number;
  now: Date;
  /** Why no TLSA record matched (dane.ts's mismatchReasons), for `tls_dane_mismatch`. */
  daneReasons?: readonly string[];
  /** The stapled OCSP response's verdict, null when none was stapled. */
  ocsp?: StapledOcsp | null;
}

/** Where a certificate sits, for messages: the server certificate, or the chain's n-th. */
function which(index: number, certificate: TlsChainCertificate): string {
  return index === 0 ? 'the server certificate' : `chain certificate ${index} (${certificate.subject})`;
}

/**
 * The findings of a completed handshake: the certificate's dates, name and
 * trust, the chain's keys and signatures (trust anchors left out: their
 * signatures are not checked and their keys are the store's business), the
 * protocol versions, OCSP stapling, SCTs and DANE.
 */
export function tlsFindings(result: TlsResult, options: TlsFindingOptions): Finding[] {
  const findings: Finding[] = [...dateFindings(result, options), ...trustFindings(result), ...chainFindings(result), ...protocolFindings(result), ...ocspFindings(result, options.ocsp ?? null), ...extraFindings(result, options.daneReasons ?? [])];
  const problems = findings.some((item) => item.severity === 'error' || item.severity === 'warning');
  const certificate = result.certificate;
  if (!problems && certificate) {
    findings.unshift(
      finding('tls_ok', 'pass', `${result.protocol ?? 'TLS'} with ${result.cipher ?? '?'}; the certificate is trusted, names ${certificate.checked_name} and has ${certificate.days_left} days left`, 'RFC 8446', {
        protocol: result.protocol,
        cipher: result.cipher,
        days_left: certificate.days_left,
      }),
    );
  }
  return findings;
}

function dateFindings(result: TlsResult, options: TlsFindingOptions): Finding[] {
  const findings: Finding[] = [];
  result.chain.forEach((certificate, index) => {
    if (certificate.trust_anchor && index > 0) return;
    const evidence = { depth: index, subject: certificate.subject, valid_from: certificate.valid_from, valid_to: certificate.valid_to, days_left: certificate.days_left };
    const notBefore = new Date(certificate.valid_from).getTime();
    if (certificate.days_left < 0 || new Date(certificate.valid_to).getTime() < options.now.getTime()) {
      findings.push(finding('tls_expired', 'error', `${which(index, certificate)} expired on ${certificate.valid_to.slice(0, 10)}`, 'RFC 5280 §4.1.2.5', evidence));
    } else if (notBefore > options.now.getTime()) {
      findings.push(finding('tls_not_yet_valid', 'error', `${which(index, certificate)} is not valid before ${certificate.valid_from.slice(0, 10)}`, 'RFC 5280 §4.1.2.5', evidence));
    } else if (certificate.days_left < options.expiryDays) {
      findings.push(
        finding('tls_expires_soon', 'warning', `${which(index, certificate)} expires in ${certificate.days_left} day${certificate.days_left === 1 ? '' : 's'} (${certificate.valid_to.slice(0, 10)}), under the ${options.expiryDays} days of --expiry-days`, 'RFC 5280 §4.1.2.5', {
          ...evidence,
          expiry_days: options.expiryDays,
        }),
      );
    }
  });
  return findings;
}

function trustFindings(result: TlsResult): Finding[] {
  const certificate = result.certificate;
  if (!certificate) return [];
  const findings: Finding[] = [];
  if (!certificate.hostname_match) {
    findings.push(
      finding('tls_hostname_mismatch', 'error', `the certificate does not name ${certificate.checked_name}`, 'RFC 6125 §6', {
        checked_name: certificate.checked_name,
        san: result.chain[0]?.san ?? [],
        subject: certificate.subject,
      }),
    );
  }
  if (!certificate.trusted) {
    const evidence = { verify_error: certificate.verify_error, issuer: certificate.issuer };
    if (certificate.self_signed) {
      findings.push(finding('tls_self_signed', 'error', 'the certificate is self-signed: no client trusts it unless told to', 'RFC 5280 §6.1', evidence));
    } else if (certificate.chain_incomplete) {
      findings.push(
        finding(
          'tls_chain_incomplete',
          'error',
          `the chain stops before a trust anchor (${certificate.verify_error}): the server leaves out an intermediate certificate, or its issuer is unknown`,
          'RFC 8446 §4.4.2',
          evidence,
        ),
      );
    } else {
      const fault = pathFaultText(certificate.verify_error);
      const message = fault === null ? `the chain does not lead to a trusted root (${certificate.verify_error ?? 'unknown'})` : `the chain fails verification: ${fault} (${certificate.verify_error})`;
      findings.push(finding('tls_untrusted', 'error', message, 'RFC 5280 §6', evidence));
    }
  }
  return findings;
}

function chainFindings(result: TlsResult): Finding[] {
  const findings: Finding[] = [];
  result.chain.forEach((certificate, index) => {
    if (certificate.trust_anchor && index > 0) return;
    if (weakKey(certificate)) {
      findings.push(
        finding('tls_weak_key', 'error', `${which(index, certificate)} has a ${certificate.key_bits}-bit ${certificate.key_type?.toUpperCase() ?? ''} key, under 112 bits of security`, 'RFC 8603 §4', {
          depth: index,
          key_type: certificate.key_type,
          key_bits: certificate.key_bits,
        }),
      );
    }
    if (/md5|sha1/i.test(certificate.signature_algorithm)) {
      findings.push(
        finding('tls_weak_signature', 'error', `${which(index, certificate)} is signed with ${certificate.signature_algorithm}, which collisions can forge`, 'RFC 9155', {
          depth: index,
          signature_algorithm: certificate.signature_algorithm,
        }),
      );
    }
  });
  return findings;
}

/** RSA and DSA under 2048 bits, elliptic curves under 224: less than 112 bits of security. */
function weakKey(certificate: TlsChainCertificate): boolean {
  const bits = certificate.key_bits;
  if (bits === null) return false;
  if (certificate.key_type === 'ec') return bits < 224;
  return (certificate.key_type === 'rsa' || certificate.key_type === 'rsa-pss' || certificate.key_type === 'dsa') && bits < 2048;
}

function protocolFindings(result: TlsResult): Finding[] {
  const protocols = result.protocols;
  if (!protocols) return [];
  const findings: Finding[] = [];
  const old = [protocols.tls1_0 === 'accepted' ? 'TLS 1.0' : null, protocols.tls1_1 === 'accepted' ? 'TLS 1.1' : null].filter((name): name is string => name !== null);
  if (old.length > 0) {
    findings.push(finding('tls_weak_protocol', 'warning', `the server accepts ${old.join(' and ')}, deprecated since 2021`, 'RFC 8996', { accepted: old }));
  }
  if (protocols.tls1_3 === 'refused') findings.push(finding('tls_no_tls13', 'info', 'the server does not accept TLS 1.3', 'RFC 8446', null));
  const unchecked = Object.entries(protocols).filter(([, support]) => support === 'not_tried' || support === 'failed');
  if (unchecked.length > 0) {
    const notTried = unchecked.filter(([, support]) => support === 'not_tried').map(([member]) => member);
    const failed = unchecked.filter(([, support]) => support === 'failed').map(([member]) => member);
    const why = [notTried.length > 0 ? `this client's OpenSSL cannot offer ${notTried.join(', ')}` : null, failed.length > 0 ? `the connections trying ${failed.join(', ')} failed` : null].filter(Boolean).join('; ');
    findings.push(finding('tls_protocol_unchecked', 'unknown', `whether the server accepts every version is unknown: ${why}`, 'RFC 8996', { not_tried: notTried, failed }));
  }
  return findings;
}

/** What a stapled OCSP response says, once verified (RFC 6960 §3.2); nothing stapled is `tls_no_ocsp_stapling`, below. */
function ocspFindings(result: TlsResult, ocsp: StapledOcsp | null): Finding[] {
  if (ocsp === null || !result.certificate) return [];
  const evidence = { ...ocsp };
  switch (ocsp.status) {
    case 'revoked':
      return [
        finding(
          'tls_ocsp_revoked',
          'error',
          `the stapled OCSP response says the certificate was revoked on ${ocsp.revoked_at!.slice(0, 10)}${ocsp.revocation_reason ? ` (${ocsp.revocation_reason})` : ''}: clients refuse it`,
          'RFC 6960 §2.2',
          evidence,
        ),
      ];
    case 'unknown':
      return [finding('tls_ocsp_unknown', 'warning', 'the stapled OCSP response says its responder does not know the certificate', 'RFC 6960 §2.2', evidence)];
    case 'invalid':
      return [finding('tls_ocsp_invalid', 'warning', `the stapled OCSP response does not verify, so clients ignore it: ${ocsp.reason}`, 'RFC 6960 §3.2', evidence)];
    case 'unchecked':
      return [finding('tls_ocsp_unchecked', 'unknown', `the stapled OCSP response could not be checked: ${ocsp.reason}`, 'RFC 6960 §3.2', evidence)];
    default:
      return [];
  }
}

function extraFindings(result: TlsResult, daneReasons: readonly string[]): Finding[] {
  const certificate = result.certificate;
  if (!certificate) return [];
  const findings: Finding[] = [];
  if (!certificate.ocsp_stapled) {
    findings.push(finding('tls_no_ocsp_stapling', 'info', 'no OCSP response is stapled to the handshake: clients must ask the CA themselves', 'RFC 6066 §8', null));
  }
  if (certificate.trusted && certificate.embedded_scts === 0 && !certificate.self_signed) {
    findings.push(
      finding('tls_no_embedded_sct', 'info', 'the certificate embeds no Certificate Transparency SCTs (SCTs sent in the TLS extension are not read)', 'RFC 6962 §3.3', null),
    );
  }
  const dane = result.dane;
  if (dane?.verdict === 'matched') findings.push(finding('tls_dane_match', 'pass', `the chain matches the TLSA records at ${dane.tlsa_name}`, 'RFC 6698 §2.1', { ...dane }));
  if (dane?.verdict === 'mismatch') {
    const why = daneReasons.length > 0 ? ` (${daneReasons.join('; ')})` : '';
    findings.push(finding('tls_dane_mismatch', 'error', `no TLSA record at ${dane.tlsa_name} matches the chain${why}`, 'RFC 6698 §2.1', { ...dane, reasons: [...daneReasons] }));
  }
  if (dane?.verdict === 'failed' && dane.dnssec === 'bogus') {
    findings.push(finding('tls_dane_bogus', 'error', `the TLSA records at ${dane.tlsa_name} fail DNSSEC validation (${dane.error}): DANE clients refuse the service`, 'RFC 6698 §4.1', { ...dane }));
  } else if (dane?.verdict === 'failed') {
    // The summary's error is words (a reason), not a failed lookup's { code, message }: it goes as the reason.
    const { error: reason, ...summary } = dane;
    findings.push(finding('tls_dane_check_failed', 'unknown', `DANE at ${dane.tlsa_name} could not be checked (${reason})`, 'RFC 6698 §4', { ...summary, reason }));
  }
  return findings;
}
