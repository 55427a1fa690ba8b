/**
 * Generators of hostile input for the engine's parsers and entry points
 * (fast-check), and the seed every property runs with: NETINTEL_FUZZ_SEED
 * replays a run (fast-check prints the seed and path of a failure), and
 * NETINTEL_FUZZ_RUNS scales the number of cases.
 */
import fc from 'fast-check';
import { NetintelError } from '../../src/errors.js';

const SEED = process.env.NETINTEL_FUZZ_SEED === undefined ? 0x4e18 : Number(process.env.NETINTEL_FUZZ_SEED);
const SCALE = process.env.NETINTEL_FUZZ_RUNS === undefined ? 1 : Number(process.env.NETINTEL_FUZZ_RUNS) / 100;

/** fast-check parameters: a fixed, printed seed and `runs` cases (scaled by NETINTEL_FUZZ_RUNS / 100). */
export function fuzz(runs: number): fc.Parameters<unknown> {
  return { seed: SEED, numRuns: Math.max(1, Math.round(runs * SCALE)) };
}

/** Passes when `run` returns or throws NetintelError with one of `codes`; anything else fails the property. */
export function expectValueOrNetintelError(run: () => unknown, codes: readonly string[] = ['invalid_input']): void {
  try {
    run();
  } catch (error) {
    if (!(error instanceof NetintelError)) throw new Error(`threw a ${(error as Error)?.constructor?.name ?? typeof error}, not a NetintelError: ${String(error)}`);
    if (!codes.includes(error.code)) throw new Error(`threw NetintelError ${error.code}, expected one of ${codes.join(', ')}: ${error.message}`);
  }
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** Pieces of names that break parsers: separators, controls, invisible and look-alike characters, digits of other scripts. */
const HOSTILE_PIECES = [
  '', '.', '..', '-', '_', '*', '/', '@', ':', '%', '#', '?', ' ', '\t', '\r\n', '\n', '\0', '\u0007', '\u001b', '\u007f', '\u0085',
  '\u00a0', '\u00ad', '\u034f', '\u061c', '\u180b', '\u200b', '\u200c', '\u200d', '\u200e', '\u202e', '\u2060', '\u2066', '\ufe0f', '\ufeff',
  '\u3002', '\uff0e', '\uff61', '\u0660', '\u0967', '\uff11', '\ud83d\ude00', '\ud800', 'xn--', 'xn--zz-', 'xn--bcher-kva', 'XN--', 'ß', 'ü', 'İ',
  'a'.repeat(63), 'a'.repeat(64), '0', '00', '1e3', '0x7f', '4294967296', 'in-addr', 'arpa', 'ip6', 'localhost', 'com', 'example',
];

/** One label: ordinary, numeric, hostile or Unicode. */
export const hostileLabel: fc.Arbitrary<string> = fc.oneof(
  fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?$/),
  fc.constantFrom(...HOSTILE_PIECES),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.integer({ min: 0, max: 999 }).map(String),
  fc.array(fc.constantFrom(...LETTERS, ...HOSTILE_PIECES), { maxLength: 6 }).map((parts) => parts.join('')),
);

/** A domain-like text: labels joined by dots (or other separators), optional trailing dot, sometimes huge. */
export const hostileDomain: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.array(hostileLabel, { minLength: 1, maxLength: 6 }), fc.constantFrom('', '.', '..', ' ', '\n')).map(([labels, end]) => labels.join('.') + end) },
  { weight: 2, arbitrary: fc.constantFrom('.', '..', '', ' ', 'example.com', 'EXAMPLE.COM.', '_dmarc.example.com', 'bücher.example', 'ex\u200bample.com', '1e3.0.0.1', '1.2.3.4.5', 'xn--.com', 'xn--zz-.com', '*.example.com', '0/26.2.0.192.in-addr.arpa') },
  { weight: 1, arbitrary: fc.integer({ min: 250, max: 260 }).map((length) => `${'a.'.repeat(Math.ceil(length / 2))}com`.slice(-length)) },
  { weight: 1, arbitrary: fc.constantFrom('a'.repeat(10_000), `${'a'.repeat(63)}.`.repeat(5), 'a.'.repeat(130)) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  // What people give where a domain is asked: an e-mail address, a URL.
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.array(hostileLabel, { maxLength: 2 }), fc.array(hostileLabel, { minLength: 1, maxLength: 3 }))
      .map(([local, domain]) => `${local.join('.')}@${domain.join('.')}`),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('http', 'HTTPS', 'ftp', 'x+y.z-1', 'file'), fc.array(hostileLabel, { maxLength: 3 }), fc.constantFrom('', '/', ':8443/a?b#c', '@evil.example', ':99999'))
      .map(([scheme, labels, tail]) => `${scheme}://${labels.join('.')}${tail}`),
  },
);

/** IP-like text: valid forms, shorthands resolvers read differently, zones, prefixes, mapped forms and junk. */
export const hostileIp: fc.Arbitrary<string> = fc.oneof(
  fc.ipV4(),
  fc.ipV6(),
  fc.ipV4Extended(),
  fc.tuple(fc.ipV4(), fc.integer({ min: -1, max: 40 })).map(([ip, prefix]) => `${ip}/${prefix}`),
  fc.tuple(fc.ipV6(), fc.constantFrom('%eth0', '%', '%1', '%\u0000', '/33', '/129', '/-1')).map(([ip, tail]) => ip + tail),
  fc.ipV4().map((ip) => `::ffff:${ip}`),
  fc.ipV4().map((ip) => `::${ip}`),
  fc.ipV4().map((ip) => `64:ff9b::${ip}`),
  fc.constantFrom('0177.0.0.1', '0x7f.0.0.1', '127.1', '2130706433', '1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', '::', ':::', '1::2::3', '[::1]', '::ffff:1.2.3.4', '::FFFF:7F00:1', '١٢٧.٠.٠.١', '１２７.0.0.1', '1.2.3.4\n', ' 1.2.3.4', '1.2.3.4\u0000', `${'1'.repeat(10_000)}`),
  fc.string({ unit: 'binary', maxLength: 45 }),
);

/** AS-number-like text. */
export const hostileAsn: fc.Arbitrary<string> = fc.oneof(
  fc.nat({ max: 0xffff_ffff }).map((n) => `AS${n}`),
  fc.tuple(fc.constantFrom('AS', 'as', 'As', ''), fc.bigInt({ min: -10n, max: 2n ** 40n })).map(([prefix, n]) => `${prefix}${n}`),
  fc.constantFrom('AS0', 'AS4294967295', 'AS4294967296', 'AS-1', 'ASX', 'AS', 'AS 1', 'AS1.5', 'AS1e3', 'AS0x10', 'AS٣', 'AS１', 'AS16509\n', '', ' ', 'AS00000000001', 'AS99999999999'),
  fc.string({ unit: 'binary', maxLength: 14 }),
);
