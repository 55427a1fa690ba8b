/**
 * Terminal escape injection: the table view (and stderr) never carries a
 * control character (C0 but the layout's line feeds, DEL, C1) or a bidi
 * control from input or the network; json keeps the exact data.
 *
 * Records of every kind come from real runs (against DNS and SMTP servers on
 * 127.0.0.1) or the output fixtures; fast-check then puts hostile strings in
 * every string of them, and in the query and the error message of a failed
 * row, and renders the table view, single and many.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext } from '../../src/engine/context.js';
import type { Outcome } from '../../src/engine/outcome.js';
import { NetintelError } from '../../src/errors.js';
import type { RecordSchema } from '../../src/output/record-schema.js';
import { ASN_SCHEMA } from '../../src/output/schemas/asn-schema.js';
import { BLACKLIST_SCHEMA } from '../../src/output/schemas/blacklist-schema.js';
import { BULK_SCHEMA } from '../../src/output/schemas/bulk-schema.js';
import { DATA_STATUS_SCHEMA } from '../../src/output/schemas/data-schema.js';
import { DNS_SCHEMA } from '../../src/output/schemas/dns-schema.js';
import { EMAIL_SCHEMA } from '../../src/output/schemas/email-schema.js';
import { IP_SCHEMA } from '../../src/output/schemas/ip-schema.js';
import { MX_SCHEMA } from '../../src/output/schemas/mx-schema.js';
import { SMTP_SCHEMA } from '../../src/output/schemas/smtp-schema.js';
import { SPF_SCHEMA } from '../../src/output/schemas/spf-schema.js';
import { VPN_SCHEMA } from '../../src/output/schemas/vpn-schema.js';
import { escapeTerminalText } from '../../src/output/terminal-text.js';
import { runCli } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { startScriptedSmtpServer, type ScriptedSmtpServer } from '../support/smtp-servers.js';
import { ASN_SINGLE, BULK_MANY, IP_SINGLE } from './fixtures.js';
import { render } from './render.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261127);
/** Anything a terminal would act on; LF is allowed where the layout puts it, and checked apart. */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const INJECTIONS = ['\x1b]0;pwned\x07', '\x1b[2J', '\x1b]8;;http://evil.test\x1b\\', '\r', '\x00', '\x7f', '\x9b31m', '\u202e', '\u2066', '\x08\x08', '\t', '\n'];

/** Hostile strings: arbitrary code points, escape sequences spliced into ordinary text. */
const hostileText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.tuple(fc.string({ maxLength: 10 }), fc.constantFrom(...INJECTIONS), fc.string({ maxLength: 10 })).map(([a, b, c]) => a + b + c),
  fc.array(fc.constantFrom(...INJECTIONS), { minLength: 1, maxLength: 4 }).map((parts) => parts.join('')),
);

/** `value` with every string in it replaced by `text` (keys and types kept). */
function poison(value: unknown, text: string): unknown {
  if (typeof value === 'string') return text;
  if (Array.isArray(value)) return value.map((item) => poison(item, text));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, poison(child, text)]));
  return value;
}

function expectTerminalSafe(output: string, context: string): void {
  const match = UNSAFE.exec(output);
  expect(match, `${context}: ${JSON.stringify(match?.[0])} at ${match?.index} in ${JSON.stringify(output.slice(Math.max(0, (match?.index ?? 0) - 30), (match?.index ?? 0) + 30))}`).toBeNull();
}

describe('escapeTerminalText', () => {
  it('leaves no control or bidi character, and changes nothing else', () => {
    fc.assert(
      fc.property(hostileText, (text) => {
        const escaped = escapeTerminalText(text);
        expect(UNSAFE.test(escaped) || escaped.includes('\n')).toBe(false);
        if (!UNSAFE.test(text) && !text.includes('\n')) expect(escaped).toBe(text);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('writes escapes visibly', () => {
    expect(escapeTerminalText('a\x1b]0;x\x07b\u202ec\r\n')).toBe('a\\x1b]0;x\\x07b\\u202ec\\r\\n');
    expect(escapeTerminalText('a\nb\x9b', { keepNewlines: true })).toBe('a\nb\\x9b');
  });
});

let dns: DnsTestServer;
let smtp: ScriptedSmtpServer;
const records = new Map<string, { schema: RecordSchema; value: unknown }>();

const EVIL = '\x1b]0;pwned\x07';

beforeAll(async () => {
  smtp = await startScriptedSmtpServer(async (connection) => {
    connection.send(`220 mx.example.test ${EVIL} ESMTP \u202eevil`);
    for (;;) {
      const line = await connection.readLine(2000);
      if (line === null) return connection.close();
      if (/^EHLO/i.test(line)) connection.send(`250-mx.example.test ${EVIL}\r\n250 8BITMIME`);
      else if (/^QUIT/i.test(line)) {
        connection.send('221 bye');
        return connection.close();
      } else connection.send(`500 what ${EVIL}`);
    }
  });
  dns = await startDnsServer({
    records: [
      { name: 'evil.test', type: 'A', data: '127.0.0.1' },
      { name: 'evil.test', type: 'TXT', data: [`v=spf1 ${EVIL} -all`] },
      { name: 'evil.test', type: 'MX', data: { preference: 10, exchange: 'mx.evil.test' } },
      { name: 'mx.evil.test', type: 'A', data: '127.0.0.1' },
      { name: '_dmarc.evil.test', type: 'TXT', data: [`v=DMARC1; p=none; ${EVIL}`] },
      { name: '1.0.0.127.in-addr.arpa', type: 'PTR', data: `ptr\u202e${EVIL}.evil.test` },
      { name: '2.0.0.127.bl.evil.test', type: 'A', data: '127.0.0.2' },
      { name: '2.0.0.127.bl.evil.test', type: 'TXT', data: [`listed ${EVIL}`] },
    ],
  });
  const resolver = ['--resolver', dns.address, '-t', '1500', '--retries', '0'];
  const collect = async (kind: string, schema: RecordSchema, argv: string[]) => {
    const result = await runCli([...argv, ...resolver, '-f', 'json']);
    const parsed = JSON.parse(result.stdout) as unknown;
    records.set(kind, { schema, value: Array.isArray(parsed) ? parsed[0] : parsed });
  };
  await collect('dns', DNS_SCHEMA, ['dns', 'evil.test', '--type', 'TXT']);
  await collect('dns-ptr', DNS_SCHEMA, ['dns', '127.0.0.1']);
  await collect('mx', MX_SCHEMA, ['mx', 'evil.test']);
  await collect('spf', SPF_SCHEMA, ['spf', 'evil.test']);
  await collect('email', EMAIL_SCHEMA, ['email', 'evil.test', '--no-smtp']);
  await collect('smtp', SMTP_SCHEMA, ['smtp', '127.0.0.1', '--port', String(smtp.port), '--transcript']);
  await collect('blacklist', BLACKLIST_SCHEMA, ['blacklist', '127.0.0.2', '--zones', 'bl.evil.test:ip']);
  await collect('vpn', VPN_SCHEMA, ['vpn', '8.8.8.8']);
  await collect('data', DATA_STATUS_SCHEMA, ['data', 'status']);
  records.set('ip', { schema: IP_SCHEMA, value: (IP_SINGLE[0] as { value: unknown }).value });
  records.set('asn', { schema: ASN_SCHEMA, value: (ASN_SINGLE[0] as { value: unknown }).value });
  const bulkRecord = BULK_MANY.find((outcome) => outcome.ok) as { value: unknown };
  records.set('bulk', { schema: BULK_SCHEMA, value: bulkRecord.value });
  // dmarc-report: the summary (its own view) and a row, from the report fixtures; poison() puts hostile text in every string.
  const { DMARC_REPORT, DMARC_SUMMARY_RECORD } = await import('../../src/operations/dmarc-report.js');
  const { createReportReader } = await import('../../src/engine/dmarc/report-files.js');
  const { summarizeDmarcReports } = await import('../../src/engine/dmarc/summarize-dmarc.js');
  const ctx = createEngineContext();
  const files = ['google.xml', 'yahoo-dmarcbis.xml.gz', 'truncated.xml'].map((name) => ({ name, content: readFileSync(`test/fixtures/dmarc/${name}`) }));
  const summary = await summarizeDmarcReports(ctx, files, { reverseDns: false });
  records.set('dmarc-summary', { schema: { ...DMARC_SUMMARY_RECORD.columns, view: DMARC_SUMMARY_RECORD.view! }, value: summary });
  const [row] = await createReportReader(ctx, { reverseDns: false })('google.xml', files[0]!.content);
  records.set('dmarc-record', { schema: DMARC_REPORT.record.columns, value: (row as { value: unknown }).value });
}, 30_000);

afterAll(async () => {
  await Promise.all([dns?.close(), smtp?.close()]);
});

const KINDS = ['ip', 'asn', 'bulk', 'vpn', 'dns', 'dns-ptr', 'mx', 'spf', 'email', 'smtp', 'blacklist', 'data', 'dmarc-summary', 'dmarc-record'];

describe('the table view of every record kind', () => {
  for (const kind of KINDS) {
    it(`${kind}: holds no control or bidi character, whatever the record's strings, the query and the error say`, async () => {
      const sample = records.get(kind);
      expect(sample, `a ${kind} record`).toBeDefined();
      const { schema, value } = sample!;
      await fc.assert(
        fc.asyncProperty(hostileText, async (text) => {
          const record = poison(value, text);
          const ok: Outcome<unknown> = { ok: true, query: text, value: record };
          const failed: Outcome<unknown> = { ok: false, query: text, error: new NetintelError('invalid_input', `bad ${text}`) };
          expectTerminalSafe(await render(schema, 'table', [ok], { single: true }), `${kind} single`);
          expectTerminalSafe(await render(schema, 'table', [ok, failed, ok], { single: false }), `${kind} many`);
          expectTerminalSafe(await render(schema, 'table', [ok], { single: true, columns: schema.columns }), `${kind} every column`);
        }),
        { seed: SEED, numRuns: 40 },
      );
    });
  }
});

/** `value` and everything inside it made read-only: a write onto it then throws (modules run in strict mode). */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

describe('the output layer reads records, never writes onto them (docs/design.md, Layers)', () => {
  for (const kind of KINDS) {
    it(`${kind}: renders a frozen record in every format`, async () => {
      const { schema, value } = records.get(kind)!;
      const frozen = deepFreeze(structuredClone(value));
      const outcomes: Array<Outcome<unknown>> = [{ ok: true, query: 'q', value: frozen }, { ok: true, query: 'q2', value: frozen }];
      for (const format of ['table', 'json', 'ndjson', 'csv', 'xml'] as const) {
        for (const single of [true, false]) {
          await expect(render(schema, format, single ? outcomes.slice(0, 1) : outcomes, { single, columns: schema.columns }), `${kind} ${format}`).resolves.toEqual(expect.any(String));
        }
      }
    });
  }
});

describe('hostile data end to end, in-process', () => {
  const resolver = () => ['--resolver', dns.address, '-t', '1500', '--retries', '0'];

  it('shows a TXT record\'s escape sequence visibly in the table (zone-file \\DDD form), and keeps it exact in json', async () => {
    const table = await runCli(['dns', 'evil.test', '--type', 'TXT', ...resolver()]);
    expect(table.code).toBe(0);
    expectTerminalSafe(table.stdout, 'dns table');
    expect(table.stdout).toContain('\\027]0;pwned\\007');
    const json = await runCli(['dns', 'evil.test', '--type', 'TXT', ...resolver(), '-f', 'json']);
    expect(json.stdout).toContain('\\u001b]0;pwned\\u0007');
  });

  it('shows a PTR name\'s bidi override and escape visibly', async () => {
    const result = await runCli(['dns', '127.0.0.1', ...resolver()]);
    expectTerminalSafe(result.stdout, 'ptr table');
  });

  it('shows an SMTP banner\'s escape sequence visibly in the table and in the transcript', async () => {
    const result = await runCli(['smtp', '127.0.0.1', '--port', String(smtp.port), '--transcript', ...resolver()]);
    expectTerminalSafe(result.stdout, 'smtp table');
    expectTerminalSafe(result.stderr, 'smtp stderr');
    expect(result.stdout).toContain('\\x1b]0;pwned\\x07');
  });

  it('escapes a target list\'s control characters in the bulk table and in the messages on stderr', async () => {
    const result = await runCli(['bulk', '-v'], { stdin: `1.2.3.4${EVIL}\n8.8.8.8\n\u202eevil\n` });
    expect(result.code).toBe(7);
    expectTerminalSafe(result.stdout, 'bulk table');
    expectTerminalSafe(result.stderr.replaceAll('\n', ''), 'bulk stderr');
    expect(result.stdout).toContain('1.2.3.4\\x1b]0;pwned\\x07');
  });

  it('escapes an argument echoed in an error message, as one line', async () => {
    const result = await runCli(['ip', `8.8.8.8\n${EVIL}`]);
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expectTerminalSafe(result.stderr.trimEnd(), 'ip stderr');
  });
});
