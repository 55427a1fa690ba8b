/**
 * Hostile inputs for fuzzing the CLI (fast-check arbitraries), one family per
 * kind of input, and the properties every run must keep whatever it was
 * given:
 *
 * - the exit code is one of the error table's (src/errors.ts) and not 1
 *   (`internal`: a bug);
 * - stdout holds nothing but the chosen format's own output (json parses,
 *   each ndjson line parses, csv is RFC 4180 with one width, xml is
 *   well-formed, the table has no control character);
 * - stderr is one `netintel: ` line per message, never a stack trace or a
 *   piece of the bundle.
 *
 * Every network peer is on 127.0.0.1: DNS goes to the test's own server (or
 * an unbound loopback port), SMTP hosts and ports and remote servers are
 * loopback ones, and nothing generated can name another address to connect to.
 */
import fc from 'fast-check';
import { XMLValidator } from 'fast-xml-parser';
import { ERROR_CODES } from '../../src/errors.js';
import { parseCsv } from '../output/parse-csv.js';

/** The seed of every fuzz property: FUZZ_SEED to replay a run, else a fixed one (CI is reproducible). */
export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 18_2026);
/** Multiplies the runs per property (FUZZ_SCALE=10 for a long local session). */
export const FUZZ_SCALE = Number(process.env.FUZZ_SCALE ?? 1);

export const DOCUMENTED_EXIT_CODES = new Set([0, ...Object.values(ERROR_CODES).map((entry) => entry.exit)]);
export const FORMATS = ['table', 'json', 'ndjson', 'csv', 'xml', 'value'] as const;

const LONG = 'A'.repeat(10_000);
const CONTROL = ['\x00', '\r\n', '\n', '\r', '\t', '\x1b]0;x\x07', '\x1b[2J', '\x7f', '\x85', '\u202e', '\u200b', '\ufeff', '\ud800'];

/** Ordinary text with hostile characters spliced in. */
const spliced = (base: fc.Arbitrary<string>) =>
  fc.tuple(base, fc.constantFrom(...CONTROL), fc.nat()).map(([text, bad, at]) => {
    const i = text.length === 0 ? 0 : at % (text.length + 1);
    return text.slice(0, i) + bad + text.slice(i);
  });

// --------------------------------------------------------------------------
// IP addresses. Only forms no lookup connects to: IP lookups are local
// (mmdb), and the commands that connect take addresses from elsewhere.

const IP_FORMS = [
  '8.8.8.8', '1.1.1.1', '10.0.0.1', '127.0.0.1', '0.0.0.0', '255.255.255.255', '2001:4860:4860::8888', '::', '::1',
  '0177.0.0.1', '0x7f.0.0.1', '0x7f000001', '2130706433', '127.1', '127.0.1', '1.2.3', '1.2.3.4.5', '256.1.1.1', '1.2.3.-4',
  '1.2.3.4/33', '1.2.3.4/32', '1.2.3.0/24', '::/129', 'fe80::1%eth0', 'fe80::1%25eth0', '::ffff:1.2.3.4', '::ffff:7f00:1',
  '::ffff:127.0.0.1', '64:ff9b::1.2.3.4', '2002:7f00:1::', '1::8.8.8.8', '::127.0.0.1', '[::1]', '[::1]:53', '1.2.3.4:80',
  '١٢٧.٠.٠.١', '１２７.０.０.１', '1.2.3.4\x00', '1.2.3.4\r\nX-Injected: 1', ' 1.2.3.4 ', '1.2.3.4 5.6.7.8', '', ' ', '-1', '-',
  '--', 'a'.repeat(300), LONG, '1e3.0.0.1', '0.0.0.0.in-addr.arpa', 'localhost', 'not an ip', '8.8.8.8,1.1.1.1', '%', '\\',
];

export const hostileIp: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...IP_FORMS) },
  { weight: 2, arbitrary: spliced(fc.constantFrom('8.8.8.8', '2001:db8::1', '10.1.2.3')) },
  { weight: 1, arbitrary: fc.ipV4Extended() },
  { weight: 1, arbitrary: fc.ipV6() },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
);

// --------------------------------------------------------------------------
// Domain names: answered by the test's DNS server only.

const LABEL_63 = 'a'.repeat(63);
const LABEL_64 = 'b'.repeat(64);
const NAME_254 = `${Array.from({ length: 4 }, () => 'c'.repeat(62)).join('.')}.test`.slice(0, 254);
const DOMAIN_FORMS = [
  '.', '..', '...', 'a..b', '.example.test', 'example.test.', 'example.test..', '', ' ', 'fuzz.test', 'mx.fuzz.test', 'spf.fuzz.test',
  `${LABEL_63}.test`, `${LABEL_64}.test`, NAME_254, `${NAME_254}x`, `${'d.'.repeat(130)}test`, 'bücher.example', 'xn--bcher-kva.example',
  'xn--.com', 'xn--zz.com', 'xn--a-ecp.ru', 'ex\u200bample.com', 'exa mple.com', 'example .com', '_dmarc.fuzz.test', '_25._tcp.fuzz.test',
  '*.fuzz.test', '-lead.test', 'trail-.test', '1e3.0.0.1', '123.456', 'localhost', 'a\x00b.test', 'a\r\nb.test', 'a/b.test', 'a@b.test',
  'user@fuzz.test', 'http://fuzz.test/', 'fuzz.test:25', '[fuzz.test]', LONG, 'ÄÖÜ.test', '\u202etset.zzuf', '例え.テスト', 'a.b.c.d.e.f.g.h.test',
];

export const hostileDomain: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...DOMAIN_FORMS) },
  { weight: 2, arbitrary: spliced(fc.constantFrom('fuzz.test', 'mx.fuzz.test', 'bücher.example')) },
  { weight: 2, arbitrary: fc.domain().map((name) => `${name}.test`) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
);

// --------------------------------------------------------------------------
// AS numbers.

const ASN_FORMS = [
  'AS0', 'AS1', 'AS13335', 'as15169', 'As16509', 'AS4294967295', 'AS4294967296', 'AS99999999999999999999', 'AS-1', '-1', 'ASX', 'AS', 'AS ',
  'AS 1', 'AS1.5', 'AS0x10', '0x10', '1e3', '15169', 'ASN15169', 'AS１２３', 'AS٣', 'AS1\x00', 'AS1\r\n', '', LONG, 'AS23456', 'AS64512', '8.8.8.8',
];

export const hostileAsn: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ASN_FORMS) },
  { weight: 1, arbitrary: fc.bigInt({ min: -10n, max: 2n ** 40n }).map((n) => `AS${n}`) },
  { weight: 1, arbitrary: spliced(fc.constant('AS13335')) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
);

// --------------------------------------------------------------------------
// SMTP hosts and ports: loopback only, or not an address at all.

export const hostileSmtpHost: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '127.0.0.1', 'mx.fuzz.test', 'nx.fuzz.test', '127.0.0.1\r\nRCPT TO:<x@y>', 'mx.fuzz.test\r\nQUIT', '127.0.0.1:25', '[127.0.0.1]', '',
    ' ', '-', '\x00', LONG, 'mx.fuzz.test.', '..', 'xn--.com', 'user@mx.fuzz.test', '::ffff:127.0.0.1', '[::1]', '127.1',
  ),
  spliced(fc.constantFrom('mx.fuzz.test', '127.0.0.1')),
);

export const hostilePort: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('0', '65536', '-1', '25abc', '1e2', '0x19', '', ' 25', '99999999999999999999', '25\r\n', 'NaN', '465', '587'),
  fc.integer({ min: 1, max: 65535 }).map(String),
);

// --------------------------------------------------------------------------
// Options.

const FIELD_NAMES = [
  'constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', '__defineGetter__', 'location', 'location.city', 'location..city',
  'location.', '.location', 'network.asn', 'security', 'ip', 'query', 'error.code', 'records', 'findings', 'summary', 'answers', 'kind', '*', '',
  ' ', ',', ',,', 'a'.repeat(1000), 'λ', 'location.__proto__', 'constructor.name', 'banner', 'zones', 'verdict',
];

export const hostileFields: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...FIELD_NAMES),
  fc.array(fc.constantFrom(...FIELD_NAMES), { minLength: 1, maxLength: 4 }).map((names) => names.join(',')),
  fc.string({ unit: 'binary', maxLength: 15 }),
);

export const hostileFormat: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...FORMATS) },
  { weight: 1, arbitrary: fc.constantFrom('JSON', 'yaml', '', 'constructor', '__proto__', 'json ', 'tab\x00le', 'value', 'csv,json') },
);

/** Resolver values that reach nothing but loopback (or parse as nothing). */
export const hostileResolver = (good: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(good) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('127.0.0.1:1', '127.0.0.1:0', '127.0.0.1:65536', '127.0.0.1:-1', 'abc', '', ',', '[::1', '::1]:53', '127.0.0.1:53:53', 'localhost', `${good},127.0.0.1:1`),
    },
  );

export const hostileZones: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('bl.fuzz.test:ip', 'dbl.fuzz.test:domain', 'bl.fuzz.test', 'default', 'all', '', ',', ':ip', 'bl.fuzz.test:bogus', '__proto__', 'constructor:ip', 'bl.fuzz.test:ip,,bl.fuzz.test:ip', '..:ip', `${'z'.repeat(70)}.test:ip`, 'bl.fuzz.test\r\n:ip'),
  spliced(fc.constant('bl.fuzz.test:ip')),
);

/** A target list on stdin: lines of hostile targets, comments, blanks, CRLF, and bytes that are not UTF-8. */
export const hostileList = (target: fc.Arbitrary<string>): fc.Arbitrary<Buffer> =>
  fc
    .array(
      fc.oneof(
        { weight: 5, arbitrary: target.map((text) => Buffer.from(text)) },
        { weight: 1, arbitrary: fc.constantFrom(Buffer.from('# comment'), Buffer.from(''), Buffer.from('   '), Buffer.from([0xff, 0xfe, 0x38]), Buffer.from([0xc3, 0x28]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('\ufeff8.8.8.8')) },
      ),
      { minLength: 0, maxLength: 12 },
    )
    .chain((lines) => fc.constantFrom('\n', '\r\n').map((end) => Buffer.concat(lines.flatMap((line) => [line, Buffer.from(end)]))));

/** Global flags, hostile and not, with their values. */
export const hostileGlobalFlags: fc.Arbitrary<string[]> = fc
  .array(
    fc.oneof(
      hostileFormat.map((format) => ['-f', format]),
      hostileFields.map((fields) => ['--fields', fields]),
      fc.constantFrom(['--no-header'], ['-q'], ['-v'], ['--debug'], ['--tcp'], ['-fjson'], ['--format=csv'], ['--bogus'], ['-h'], ['--'], ['-']),
      fc.constantFrom('1', '0', '-1', 'abc', '600001', '1e3', ' 50', '99999999999999999999').map((value) => ['-t', value]),
      fc.constantFrom('1', '0', '10001', 'x').map((value) => ['--concurrency', value]),
      fc.constantFrom('0', '11', '-1', 'two').map((value) => ['--retries', value]),
      fc.constantFrom('/nonexistent/dir', '', '\x00', '.').map((value) => ['--data-dir', value]),
      fc.constantFrom('ftp://127.0.0.1', 'not a url', '', 'http://127.0.0.1:1', 'http://[::1]:1/').map((value) => ['--server', value]),
      fc.constantFrom('ni_bogus', '', 'x\r\ny').map((value) => ['--api-key', value]),
    ),
    { maxLength: 3 },
  )
  .map((groups) => groups.flat());

// --------------------------------------------------------------------------
// The properties.

/** The output format a run asked for: the last -f/--format before `--`, as commander reads it. */
export function formatOf(argv: readonly string[]): string {
  let format = 'table';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (arg === '-j' || arg === '--json') format = 'json';
    else if (arg === '-f' || arg === '--format') format = argv[++i] ?? format;
    else if (arg.startsWith('--format=')) format = arg.slice('--format='.length);
    else if (/^-f./.test(arg)) format = arg.slice(2);
  }
  return format;
}

function beforeDashes(argv: readonly string[]): readonly string[] {
  const end = argv.indexOf('--');
  return end === -1 ? argv : argv.slice(0, end);
}

/** Help or version output was asked for (it is text whatever the format). */
function asksForHelp(argv: readonly string[]): boolean {
  return beforeDashes(argv).some((arg) => arg === '-h' || arg === '--help' || arg === '-V' || arg === '--version' || arg === 'help');
}

// eslint-disable-next-line no-control-regex
const TERMINAL_UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
// A frame names a place (file:line:col, or native); a wrapped message line may start with "at" too.
const STACK = /^\s+at (?:.*:\d+:\d+\)?$|.*\((?:native|<anonymous>)\)$)|node:internal|__export\(|__toESM|Node\.js v\d|\(function \(exports, require/m;

export interface RunOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Checks the properties; returns a description of the first broken one, or null. */
export function brokenProperty(argv: readonly string[], run: RunOutcome): string | null {
  if (!DOCUMENTED_EXIT_CODES.has(run.code)) return `exit code ${run.code} is not in the error table`;
  if (run.code === ERROR_CODES.internal.exit) return `exit 1 (internal: a bug): ${run.stderr.slice(0, 300)}`;
  // --debug asks for the stack of a failure: stderr is then the one line and the trace.
  const debug = beforeDashes(argv).includes('--debug');
  if (STACK.test(run.stdout) || (!debug && STACK.test(run.stderr))) return 'a stack trace or bundle source in the output';
  const stderrLines = debug ? [] : run.stderr.split('\n').slice(0, -1);
  if (run.stderr !== '' && !run.stderr.endsWith('\n')) return 'stderr does not end with a line end';
  // A command that needs a subcommand and got none prints its help on stderr (exit 2).
  const helpOnStderr = run.code === 2 && run.stderr.startsWith('Usage: ');
  if (!helpOnStderr) {
    const stray = stderrLines.find((line) => !line.startsWith('netintel: '));
    if (stray !== undefined) return `a stderr line without "netintel: ": ${JSON.stringify(stray.slice(0, 200))}`;
    const unsafe = stderrLines.find((line) => TERMINAL_UNSAFE.test(line));
    if (unsafe !== undefined) return `a control character on stderr: ${JSON.stringify(unsafe.slice(0, 200))}`;
  }
  if (asksForHelp(argv) || run.stdout === '') return null;
  const format = formatOf(argv);
  try {
    switch (format) {
      case 'json':
        JSON.parse(run.stdout);
        break;
      case 'ndjson':
        for (const line of run.stdout.split('\n').slice(0, -1)) JSON.parse(line);
        if (!run.stdout.endsWith('\n')) return 'ndjson output without a final line end';
        break;
      case 'csv': {
        const rows = parseCsv(run.stdout);
        const widths = new Set(rows.map((row) => row.length));
        if (widths.size > 1) return `csv rows of ${[...widths].join(' and ')} cells`;
        break;
      }
      case 'value': {
        // Tabs separate the fields; any other control or bidi character is escaped.
        if (!run.stdout.endsWith('\n')) return 'value output without a final line end';
        const unsafe = run.stdout.split('\n').find((line) => TERMINAL_UNSAFE.test(line.replace(/\t/g, '')));
        if (unsafe !== undefined) return `a control character in a value line: ${JSON.stringify(unsafe.slice(0, 200))}`;
        break;
      }
      case 'xml': {
        const valid = XMLValidator.validate(run.stdout);
        if (valid !== true) return `xml not well-formed: ${JSON.stringify(valid.err)}`;
        break;
      }
      default:
        if (TERMINAL_UNSAFE.test(run.stdout)) return 'a control character in the table view';
    }
  } catch (error) {
    return `stdout is not ${format}: ${(error as Error).message}: ${JSON.stringify(run.stdout.slice(0, 200))}`;
  }
  return null;
}
