/**
 * Runs the RFC 7208 SPF test suite (the openspf YAML format) against
 * netintel's check_host():
 *
 *   npm run conformance:spf -- path/to/rfc7208-tests.yml [--verbose]
 *
 * Each scenario's zonedata is served by a DNS server on 127.0.0.1 for that
 * scenario alone, and the engine asks it through its ordinary transport.
 * Zone conventions of the suite's reference driver: an `SPF` entry is also
 * served as TXT unless the name has a TXT entry of its own (`TXT: NONE`
 * blocks the copy and serves nothing); `TIMEOUT` makes the name silent for
 * every type not answered by an entry written before it. A test passes when
 * the result is the one expected (or one of the list) and, when the test
 * names an explanation, the explanation matches (`DEFAULT`: none from exp=).
 *
 * Prints one line per test and ends with `N passed, N failed`; exits 1 when
 * any test failed.
 */
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket } from 'dns-packet';
import { parseAllDocuments } from 'yaml';
import { createEngineContext } from '../src/engine/context.js';
import { parseResolverAddress } from '../src/engine/dns/resolver-address.js';
import { parseIpAddress } from '../src/engine/address/ip-address.js';
import { createMailDns } from '../src/engine/mail/mail-dns.js';
import { evaluateSpf } from '../src/engine/mail/spf-evaluate.js';

/** One test of a scenario, as the suite writes it. */
interface SuiteTest {
  description?: string;
  spec?: string;
  helo: string;
  host: string;
  mailfrom: string;
  result: string | string[];
  explanation?: string;
}

interface Scenario {
  description: string;
  tests: Record<string, SuiteTest>;
  zonedata: Record<string, unknown[]>;
}

type ZoneEntry = 'TIMEOUT' | { type: string; data: unknown; timeout: boolean };

export interface ConformanceOutcome {
  scenario: string;
  test: string;
  passed: boolean;
  expected: string[];
  result: string;
  explanation: string | null;
  expectedExplanation: string | null;
  /** True when the explanation matched only when ASCII case is ignored. */
  explanationCaseOnly: boolean;
  reason: string;
}

export interface ConformanceOptions {
  /** Deadline of one DNS query in milliseconds: how long a TIMEOUT name takes (default 300). */
  timeoutMs?: number;
  /** Called with each outcome as it is decided. */
  onOutcome?: (outcome: ConformanceOutcome) => void;
}

/** Runs every scenario of a suite file's text; scenarios one after another, tests of a scenario concurrently. */
export async function runConformance(yamlText: string, options: ConformanceOptions = {}): Promise<{ outcomes: ConformanceOutcome[]; passed: number; failed: number }> {
  const outcomes: ConformanceOutcome[] = [];
  const documents = parseAllDocuments(yamlText);
  const list = Array.isArray(documents) ? documents : [documents];
  for (const document of list) {
    const scenario = document.toJS() as Scenario | null;
    if (!scenario || typeof scenario !== 'object' || !scenario.tests) continue;
    const server = await startZoneServer(buildZone(scenario.zonedata ?? {}));
    const ctx = createEngineContext({
      resolvers: [parseResolverAddress(server.address)],
      timeoutMs: options.timeoutMs ?? 300,
      dnsRetries: 0,
      // A fixed clock: %{t} is then reproducible.
      now: () => new Date(0),
    });
    try {
      const results = await Promise.all(
        Object.entries(scenario.tests).map(async ([name, test]) => {
          const outcome = await runTest(ctx, scenario.description, name, test);
          options.onOutcome?.(outcome);
          return outcome;
        }),
      );
      outcomes.push(...results);
    } finally {
      await ctx.close();
      await server.close();
    }
  }
  const passed = outcomes.filter((outcome) => outcome.passed).length;
  return { outcomes, passed, failed: outcomes.length - passed };
}

async function runTest(ctx: ReturnType<typeof createEngineContext>, scenario: string, name: string, test: SuiteTest): Promise<ConformanceOutcome> {
  const expected = (Array.isArray(test.result) ? test.result : [test.result]).map((value) => String(value).toLowerCase());
  const expectedExplanation = test.explanation === undefined ? null : String(test.explanation);
  const base = { scenario, test: name, expected, expectedExplanation };
  let evaluation;
  try {
    evaluation = await evaluateSpf(
      createMailDns(ctx),
      { ip: parseIpAddress(String(test.host)), sender: String(test.mailfrom ?? ''), helo: String(test.helo ?? '') },
      ctx.now(),
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ...base, passed: false, result: 'exception', explanation: null, explanationCaseOnly: false, reason: message };
  }
  let explanationOk = true;
  let caseOnly = false;
  if (expectedExplanation !== null) {
    if (expectedExplanation === 'DEFAULT') {
      explanationOk = evaluation.explanation === null;
    } else if (evaluation.explanation !== expectedExplanation) {
      caseOnly = evaluation.explanation?.toLowerCase() === expectedExplanation.toLowerCase();
      explanationOk = caseOnly;
    }
  }
  return {
    ...base,
    passed: expected.includes(evaluation.result) && explanationOk,
    result: evaluation.result,
    explanation: evaluation.explanation,
    explanationCaseOnly: caseOnly,
    reason: evaluation.reason,
  };
}

/** The zone of a scenario: lower-case names to their entries in order, with the suite's SPF-to-TXT copy. */
export function buildZone(zonedata: Record<string, unknown[]>): Map<string, ZoneEntry[]> {
  const zone = new Map<string, ZoneEntry[]>();
  for (const [owner, items] of Object.entries(zonedata)) {
    const entries: ZoneEntry[] = [];
    const copies: ZoneEntry[] = [];
    let hasTxt = false;
    for (const item of items ?? []) {
      if (item === 'TIMEOUT') {
        entries.push('TIMEOUT');
        continue;
      }
      if (!item || typeof item !== 'object') continue;
      for (const [type, data] of Object.entries(item as Record<string, unknown>)) {
        if (type === 'TXT') hasTxt = true;
        if (data === 'NONE') continue;
        const entry = { type, data, timeout: data === 'TIMEOUT' };
        entries.push(entry);
        if (type === 'SPF') copies.push({ ...entry, type: 'TXT' });
      }
    }
    if (!hasTxt) entries.push(...copies);
    zone.set(lowerName(owner), entries);
  }
  return zone;
}

function lowerName(name: string): string {
  const lower = name.toLowerCase();
  return lower.length > 1 && lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** A suite string as octets: `\xNN` escapes in the YAML stand for single octets. */
function octets(text: string): Buffer {
  return [...text].every((char) => char.charCodeAt(0) <= 0xff) ? Buffer.from(text, 'latin1') : Buffer.from(text, 'utf8');
}

function characterStrings(data: unknown): Buffer[] {
  if (Array.isArray(data)) return data.map((part) => octets(String(part)));
  return [octets(String(data))];
}

function toAnswer(name: string, entry: Exclude<ZoneEntry, 'TIMEOUT'>): Answer | null {
  const base = { name, ttl: 300, class: 'IN' as const };
  switch (entry.type) {
    case 'A':
    case 'AAAA':
      return { ...base, type: entry.type, data: String(entry.data).toLowerCase() };
    case 'PTR':
    case 'CNAME':
      return { ...base, type: entry.type, data: lowerName(String(entry.data)) };
    case 'MX': {
      const [preference, exchange] = entry.data as [number, string];
      return { ...base, type: 'MX', data: { preference: Number(preference), exchange: exchange === '' ? '.' : String(exchange) } };
    }
    case 'TXT':
      return { ...base, type: 'TXT', data: characterStrings(entry.data) };
    case 'SPF': {
      const rdata = Buffer.concat(characterStrings(entry.data).flatMap((part) => [Buffer.from([part.length]), part]));
      return { ...base, type: 'SPF', data: rdata } as unknown as Answer;
    }
    default:
      return null;
  }
}

/** Answers for (name, type), or null when the name stays silent (TIMEOUT). */
function answer(zone: Map<string, ZoneEntry[]>, qname: string, qtype: string): { rcode: number; answers: Answer[] } | null {
  const answers: Answer[] = [];
  let current = lowerName(qname);
  for (let hop = 0; hop < 8; hop++) {
    const entries = zone.get(current);
    if (!entries) return { rcode: hop === 0 ? 3 : 0, answers };
    const found: Answer[] = [];
    let cname: string | null = null;
    for (const entry of entries) {
      if (entry === 'TIMEOUT') {
        if (found.length === 0 && cname === null) return null;
        break;
      }
      if (entry.timeout) {
        if (entry.type === qtype) return null;
        continue;
      }
      if (entry.type === qtype) {
        const rr = toAnswer(current, entry);
        if (rr) found.push(rr);
      } else if (entry.type === 'CNAME' && qtype !== 'CNAME' && cname === null) {
        cname = lowerName(String(entry.data));
        answers.push(toAnswer(current, entry)!);
      }
    }
    if (found.length > 0 || cname === null) return { rcode: 0, answers: [...answers, ...found] };
    current = cname;
  }
  return { rcode: 0, answers };
}

export interface ZoneServer {
  address: string;
  close(): Promise<void>;
}

export async function startZoneServer(zone: Map<string, ZoneEntry[]>): Promise<ZoneServer> {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (message, remote) => {
    let query: DecodedPacket;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    const reply = answer(zone, question.name, question.type);
    if (reply === null) return;
    const response = dnsPacket.encode({
      type: 'response',
      id: query.id ?? 0,
      flags: dnsPacket.AUTHORITATIVE_ANSWER | dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | reply.rcode,
      questions: [question],
      answers: reply.answers,
    });
    socket.send(response, remote.port, remote.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  return {
    address: `127.0.0.1:${socket.address().port}`,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** The report printed by the runner: scenarios, one line per test, then `N passed, N failed`. */
export function formatConformance(result: { outcomes: ConformanceOutcome[]; passed: number; failed: number }, verbose = false): string {
  const lines: string[] = [];
  let scenario = '';
  for (const outcome of result.outcomes) {
    if (outcome.scenario !== scenario) {
      scenario = outcome.scenario;
      lines.push(scenario);
    }
    const explanation = outcome.expectedExplanation === null ? '' : ` explanation ${JSON.stringify(outcome.explanation)}`;
    const note = outcome.explanationCaseOnly ? ' (explanation equal ignoring case)' : '';
    if (outcome.passed) {
      lines.push(`  passed  ${outcome.test}: ${outcome.result}${verbose ? explanation : ''}${note}`);
    } else {
      const wanted = `${outcome.expected.join(' or ')}${outcome.expectedExplanation === null ? '' : ` with explanation ${JSON.stringify(outcome.expectedExplanation)}`}`;
      lines.push(`  failed  ${outcome.test}: got ${outcome.result}${explanation}, expected ${wanted} (${outcome.reason})`);
    }
  }
  lines.push(`${result.passed} passed, ${result.failed} failed`);
  return `${lines.join('\n')}\n`;
}

async function main(argv: readonly string[]): Promise<number> {
  const verbose = argv.includes('--verbose');
  const file = argv.find((arg) => !arg.startsWith('--'));
  if (!file) {
    process.stderr.write('usage: npm run conformance:spf -- <rfc7208-tests.yml> [--verbose]\n');
    return 2;
  }
  const result = await runConformance(readFileSync(file, 'utf8'));
  process.stdout.write(formatConformance(result, verbose));
  return result.failed === 0 ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`conformance-spf: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
