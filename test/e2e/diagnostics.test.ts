/**
 * The diagnostics of the CLI, end to end: every `netintel: ...` line of
 * the golden stderr files, and every error record of their stdout (JSON,
 * NDJSON, XML, CSV), in one case (lower case: a capital only for an
 * acronym or a name), and representative failures, run as the built
 * program with COLUMNS at 60, 80 and 120, wrapped to that width (a word
 * wider than the width aside), each with what to try next.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayWidth } from '../../src/output/human/display-width.js';
import { parseCsv } from '../output/parse-csv.js';
import { spawnCli } from '../support/cli.js';
import { capitalisedStart, errorMessagesIn } from '../support/message-case.js';
import { closedPort } from '../support/smtp-servers.js';
import { startPeers, type Peers } from './peers.js';

const GOLDEN_DIR = new URL('./golden/', import.meta.url).pathname;

/** The stderr or the stdout section of every run of every golden file, by file. */
function goldenSections(stream: 'stderr' | 'stdout'): Array<[file: string, text: string]> {
  const files: Array<[string, string]> = [];
  for (const group of readdirSync(GOLDEN_DIR)) {
    for (const name of readdirSync(join(GOLDEN_DIR, group))) {
      const text = readFileSync(join(GOLDEN_DIR, group, name), 'utf8');
      // A golden file may hold several runs: each has its own stdout and stderr sections.
      for (const section of text.split(`\n--- ${stream}\n`).slice(1)) files.push([`${group}/${name}`, section.split(/\n(?:\$ netintel |--- stderr\n)/)[0]!]);
    }
  }
  return files;
}

const goldenStderr = () => goldenSections('stderr');

const XML_ENTITIES: Record<string, string> = { '&quot;': '"', '&apos;': "'", '&lt;': '<', '&gt;': '>', '&amp;': '&' };

/**
 * The error messages of one run's stdout: the error records of JSON (one
 * document, or NDJSON lines), XML (`<error code="...">` and an error's
 * `<message>`) and CSV (`error.message` columns). Human views are not read.
 */
function errorMessagesOfOutput(stdout: string): string[] {
  const json = parsedJson(stdout);
  if (json !== undefined) return errorMessagesIn(json);
  if (stdout.trimStart().startsWith('<')) {
    const elements = [...stdout.matchAll(/<error\b[^>]*\bcode="[a-z_]+"[^>]*>([^<]*)<\/error>/g), ...stdout.matchAll(/<error>\s*<code>[a-z_]+<\/code>\s*<message>([^<]*)<\/message>/g)];
    return elements.map((match) => match[1]!.replace(/&(?:quot|apos|lt|gt|amp);/g, (entity) => XML_ENTITIES[entity]!));
  }
  const [header, ...rows] = safeCsv(stdout);
  const columns = (header ?? []).flatMap((name, index) => (/(?:^|\.)(?:error|failure)\.message$/.test(name) ? [index] : []));
  return rows.flatMap((row) => columns.map((index) => row[index] ?? '')).filter((message) => message !== '');
}

/** `text` as one JSON document or as NDJSON lines; undefined when it is neither. */
function parsedJson(text: string): unknown {
  if (!/^\s*[[{]/.test(text)) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    try {
      return text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as unknown);
    } catch {
      return undefined;
    }
  }
}

function safeCsv(text: string): string[][] {
  try {
    return parseCsv(text);
  } catch {
    return [];
  }
}

describe('the case of diagnostics', () => {
  it('is lower case in every golden stderr line', () => {
    const sections = goldenStderr();
    expect(sections.length).toBeGreaterThan(100);
    const capitalised: string[] = [];
    for (const [file, stderr] of sections) {
      for (const line of stderr.split('\n')) {
        if (line.startsWith('netintel: ') && capitalisedStart(line.slice('netintel: '.length)) !== null) capitalised.push(`${file}: ${line}`);
      }
    }
    expect(capitalised).toEqual([]);
  });

  it('is lower case in every error record of the golden stdout: JSON, NDJSON, XML and CSV', () => {
    const messages = goldenSections('stdout').flatMap(([file, stdout]) => errorMessagesOfOutput(stdout).map((message) => `${file}: ${message}`));
    // The goldens hold some 25 error records: a reader gone blind would find none.
    expect(messages.length).toBeGreaterThan(20);
    expect(messages.filter((entry) => capitalisedStart(entry.slice(entry.indexOf(': ') + 2)) !== null)).toEqual([]);
  });
});

let peers: Peers;
let closed: number;

beforeAll(async () => {
  peers = await startPeers();
  closed = await closedPort();
});

afterAll(async () => {
  await peers?.close();
});

/** The lines wider than `width` that are not one word wider than it. */
function overflowing(text: string, width: number): string[] {
  return text.split('\n').filter((line) => displayWidth(line) > width && !(line.trim().split(' ').length === 1 && displayWidth(line.trim()) > width));
}

describe('diagnostics at the width given', () => {
  const failures = (): Array<{ argv: string[]; says: RegExp }> => [
    { argv: ['dns', 'example.test', '--resolver', `127.0.0.1:${closed}`, '--retries', '0'], says: /name another with --resolver/ },
    { argv: ['dns', 'servfail.test', ...peers.dnsFlags], says: /try another with --resolver/ },
    { argv: ['ip', '8.8.8.8', '--server', `http://127.0.0.1:${closed}`], says: /start one with "netintel serve", or check --server/ },
    { argv: ['bulk', '/nonexistent/access.log'], says: /no such file or directory \(check the path/ },
    { argv: ['summarize', '/nonexistent/access.log'], says: /no such file or directory \(check the path/ },
    { argv: ['ip', '8.8.8.8', '--colour'], says: /unknown option/ },
    { argv: ['lookup', '8.8.8.8'], says: /unknown command/ },
    { argv: ['dns', 'example.test', '--timeout', 'soon'], says: /--timeout must be an integer/ },
    // The bundled datasets are older than they should be: a warning each.
    { argv: ['data', 'status', '-q', '-f', 'json'], says: /^$/ },
    { argv: ['data', 'status', '-f', 'json'], says: /warning: dbip-city-ipv4: the bundled copy is/ },
  ];

  it('wraps each failure to 60, 80 and 120 columns, saying what to try', async () => {
    for (const width of [60, 80, 120]) {
      for (const { argv, says } of failures()) {
        const run = await spawnCli(argv, { env: { COLUMNS: String(width) }, timeoutMs: 60_000 });
        const label = `netintel ${argv.join(' ')} at ${width} columns`;
        expect(overflowing(run.stderr, width), label).toEqual([]);
        // Lines a diagnostic wraps into are indented by two spaces; joined, it reads as one line.
        expect(run.stderr.replace(/\n {2}/g, ' '), label).toMatch(says);
        for (const line of run.stderr.split('\n')) expect(line === '' || line.startsWith('netintel: ') || line.startsWith('  '), `${label}: ${line}`).toBe(true);
      }
    }
  }, 240_000);

  it('keeps each diagnostic on one line where no width is known (a pipe or a file, no COLUMNS)', async () => {
    const run = await spawnCli(['data', 'status', '-f', 'json']);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.startsWith('netintel: warning: ')).toBe(true);
    expect(Math.max(...lines.map((line) => line.length))).toBeGreaterThan(80);
  });
});
