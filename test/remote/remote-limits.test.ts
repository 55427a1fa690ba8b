import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { publishedAnswerCheck, REMOTE_DEFAULT_TIMEOUT_MS } from '../../src/app/remote-mode.js';
import { bulkAnswer, recordAnswer } from '../../src/remote/answer-check.js';
import { byteSizeText } from '../../src/byte-size.js';
import { REMOTE_LIMITS } from '../../src/remote/remote-limits.js';
import { retryAfterOf } from '../../src/remote/retry-after.js';

/** The rows of docs/limits.md's "Remote mode" table, by their first cell. */
function remoteRows(): Map<string, string> {
  const text = readFileSync(new URL('../../docs/limits.md', import.meta.url), 'utf8');
  const section = text.split(/^## /m).find((part) => part.startsWith('Remote mode'));
  expect(section, 'docs/limits.md has a "Remote mode" section').toBeDefined();
  const rows = new Map<string, string>();
  for (const line of section!.split('\n').filter((row) => row.startsWith('| ') && !row.startsWith('| Bound') && !row.startsWith('|---'))) {
    rows.set(line.split('|')[1]!.trim(), line);
  }
  return rows;
}

describe('the remote-mode limits', () => {
  it('are the ones docs/limits.md states', () => {
    const rows = remoteRows();
    const row = (start: string) => [...rows].find(([label]) => label.startsWith(start))?.[1] ?? '';
    expect(row('Deadline of one call')).toContain(`else ${REMOTE_DEFAULT_TIMEOUT_MS / 1000} s`);
    expect(row('Body of one record')).toContain(byteSizeText(REMOTE_LIMITS.recordOctets));
    expect(row('Body of a bulk answer')).toContain(byteSizeText(REMOTE_LIMITS.bulkOctets));
    expect(row('Body of an error answer')).toContain(byteSizeText(REMOTE_LIMITS.errorOctets));
    expect(row('Redirects')).toContain(`${REMOTE_LIMITS.redirects} within the server's origin`);
    expect(row('Nesting')).toContain(`${REMOTE_LIMITS.depth} levels`);
    expect(row('429')).toContain(`${REMOTE_LIMITS.retries} retries at most`);
    expect(row('429')).toContain(`over ${REMOTE_LIMITS.maxWaitMs / 1000} s`);
    expect(row('Batch size')).toContain(`1 to ${REMOTE_LIMITS.batchItems} items`);
    expect(row('A server that does not answer')).toContain(`after ${REMOTE_LIMITS.downInARow} calls in a row`);
  });
});

describe('Retry-After', () => {
  const now = Date.UTC(2030, 0, 1, 10, 0, 0);
  const of = (headers: Record<string, string>) => retryAfterOf(new Headers(headers), now);

  it('reads seconds, X-RateLimit-RetryAfter before RFC 9110\'s Retry-After, and an HTTP-date from the clock', () => {
    expect(of({ 'retry-after': '7' })).toEqual({ ms: 7000, text: '7' });
    expect(of({ 'x-ratelimit-retryafter': '2', 'retry-after': '9' })).toEqual({ ms: 2000, text: '2' });
    expect(of({ 'retry-after': 'Tue, 01 Jan 2030 10:00:30 GMT' })?.ms).toBe(30_000);
    expect(of({ 'retry-after': 'Mon, 31 Dec 2029 10:00:30 GMT' })?.ms).toBe(0);
  });

  it('keeps an absurd wait as a wait (1e9, 1e999) and quotes what cannot be one', () => {
    expect(of({ 'retry-after': '1e9' })).toEqual({ ms: 1e12, text: '1e9' });
    expect(of({ 'retry-after': '1e999' })?.ms).toBe(Number.POSITIVE_INFINITY);
    for (const value of ['soon', '-5', 'NaN', '']) expect(of({ 'retry-after': value })?.ms ?? null).toBeNull();
    expect(of({ 'retry-after': 'x'.repeat(500) })?.text).toHaveLength(41);
    expect(of({})).toBeNull();
  });

  it('reads only the HTTP-date forms of RFC 9110 as dates: words around a number are no wait', () => {
    for (const value of ['later 2099', 'soon 2', 'Sun, 31 Feb 2030 10:00:00 GMT', '2030-01-02']) expect(of({ 'retry-after': value }), value).toEqual({ ms: null, text: value });
    expect(of({ 'retry-after': 'Tuesday, 01-Jan-30 10:00:30 GMT' })?.ms).toBe(30_000);
    expect(of({ 'retry-after': 'Tue Jan  1 10:00:30 2030' })?.ms).toBe(30_000);
    expect(of({ 'retry-after': '999999999' })?.ms).toBe(999_999_999_000);
  });
});

const check = await publishedAnswerCheck();

describe('the answer check', () => {

  it('names the record a path answers from the published document', () => {
    expect(check.ofRoute('GET', '/api/vpn-check')).toMatchObject({ name: 'vpn record', maxOctets: REMOTE_LIMITS.recordOctets });
    expect(check.ofRoute('GET', '/api/blacklist-check').name).toBe('blacklist record');
    expect(() => check.ofRoute('GET', '/api/nothing')).toThrow(/no JSON answer/);
  });

  it('accepts a quota record of any plan name the server\'s plans file has', () => {
    const quota = {
      kind: 'quota',
      plan: 'gold-2030',
      title: 'Gold',
      key_id: null,
      client: '127.0.0.1',
      features: [],
      daily: { limit: 1, remaining: 1, reset_at: '2030-01-02T00:00:00.000Z' },
      burst: { capacity: 1, remaining: 1, per_minute: 1 },
      batch: 10,
      bulk_max: null,
    };
    expect(check.problem(recordAnswer('Quota', 'quota record'), quota)).toBeNull();
    expect(check.problem(recordAnswer('Quota', 'quota record'), { ...quota, batch: '10' })).toBe('at /batch: Instance type "string" is invalid. Expected "integer"');
  });

  it('says a free-tier ip record must not carry the premium groups, and bounds depth without recursing', () => {
    const free = { ip: '8.8.8.8', type: 'ipv4', reserved: null, meta: { data: {} }, note: 'network and security need an API key', network: {} };
    expect(check.problem(recordAnswer('IpInfoRecord', 'ip record'), free)).toBe('at /network: must not be present');
    let deep: unknown = [];
    for (let i = 0; i < 1_000_000; i++) deep = [deep];
    expect(check.problem(bulkAnswer('IpBulkAnswer', 'ip bulk answer'), deep)).toBe(`nested deeper than ${REMOTE_LIMITS.depth} levels`);
  });

  it('cuts a mismatch that quotes the server short', () => {
    const answer = { results: [{ query: 'x', [`${'k'.repeat(5000)}`]: 1 }], summary: { total: 1, succeeded: 1, failed: 0, errors: {} } };
    expect(check.problem(bulkAnswer('IpBulkAnswer', 'ip bulk answer'), answer)!.length).toBeLessThanOrEqual(301);
  });
});
