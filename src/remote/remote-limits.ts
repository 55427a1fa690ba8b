const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * The bounds remote mode keeps to with a netintel server, so that a huge,
 * slow, deep or hostile answer ends a call with an error that names the
 * bound instead of filling memory or holding the run. docs/limits.md
 * ("Remote mode") lists them; a test keeps that table and these numbers in
 * step.
 */
export const REMOTE_LIMITS = {
  /**
   * Body of an answer that holds one record (an IP, ASN, DNS, mail, VPN or
   * blacklist record, the quota), decoded. The largest real one, the ASN
   * record of a network with thousands of prefixes, is about 250 KB.
   */
  recordOctets: 4 * MiB,
  /**
   * Body of a bulk answer (POST /api/bulk, POST /api/email-tests/bulk, GET
   * /api/asn-lookup?bulk=), decoded. The API answers a batch as one JSON
   * document (it has no streamed form), so one batch is what is held at a
   * time.
   */
  bulkOctets: 32 * MiB,
  /** Of an error answer, what is read for its problem document; the rest is left unread. */
  errorOctets: 64 * KiB,
  /** Redirects followed within the server's origin per call; one to another origin is never followed. */
  redirects: 3,
  /**
   * Nesting of arrays and objects in an answer, checked before its schema
   * (which recurses with the data). The deepest real answer, an e-mail bulk
   * answer whose SPF tree follows includes ten levels down, nests about 30
   * deep.
   */
  depth: 64,
  /** Retries of one call after a 429, each within the call's deadline. */
  retries: 6,
  /** A 429 asking for a longer wait fails at once, whatever the deadline (the daily allowance is spent). */
  maxWaitMs: 120_000,
  /** Items per request taken from the server's quota record (`batch`, `bulk_max`); outside 1 to this the record is refused. */
  batchItems: 1000,
  /**
   * Calls in a row that found no server (unreachable, or no answer before
   * the deadline while it has answered nothing in the run) after which a run
   * asks it nothing more: each later call fails at once with the last
   * failure, so a list of a thousand targets against a server that is down
   * ends in one deadline, not a thousand. An answer, of any kind, starts
   * the count again.
   */
  downInARow: 5,
} as const;


