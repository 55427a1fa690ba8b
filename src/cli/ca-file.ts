import { parseResolverCa } from '../engine/dns/resolver-address.js';
import { readBoundedFileSync } from '../read-file-bounded.js';

/** A CA bundle is a few hundred KiB (Debian's holds about 150 certificates in 220 KiB). */
const MAX_CA_FILE_BYTES = 4 * 1024 * 1024;

/**
 * The PEM CA certificates of a file given to `--resolver-ca`, `--tls-ca` or `--ca`:
 * read with the bounded reader (a file over 4 MiB, /dev/zero or a silent
 * FIFO is one usage line), each CERTIFICATE block checked to be X.509.
 *
 * @throws NetintelError `usage` naming the flag and the file.
 */
export function readCaFile(path: string, flag: '--resolver-ca' | '--tls-ca' | '--ca'): string[] {
  const text = readBoundedFileSync(path, { maxBytes: MAX_CA_FILE_BYTES, what: `${flag} file`, hint: `give ${flag} a PEM file of CA certificates` }).toString('utf8');
  return parseResolverCa(text, `the ${flag} file ${path}`);
}

/**
 * The certificates of the file NODE_EXTRA_CA_CERTS names, which Node added
 * to its default trust store when the process started (its documentation of
 * the variable): what the engine counts as anchors beside the bundled roots
 * (EngineContext.extraTrustAnchors). None when it is unset, or when the file
 * cannot be read as PEM certificates: Node then warned and went on without
 * them.
 */
export function nodeExtraCaCertificates(env: Readonly<Record<string, string | undefined>>): string[] {
  const file = env.NODE_EXTRA_CA_CERTS;
  if (!file) return [];
  try {
    return readCaFile(file, '--ca');
  } catch {
    return [];
  }
}
