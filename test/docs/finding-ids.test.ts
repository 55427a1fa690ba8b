/**
 * Every finding id the engine can report is documented: each appears in a
 * page under docs/ (the command pages list their ids with severity, meaning
 * and RFC section), which the README's Findings section points to.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';

function files(dir: string, ending: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? files(path, ending) : path.endsWith(ending) ? [path] : [];
  });
}

/** Ids as the engine writes them: finding('<id>', ...), and the ids of lookup tables of ids (`..._check_failed`, IDS). */
function findingIds(): string[] {
  const ids = new Set<string>();
  for (const file of files(join(REPO_ROOT, 'src'), '.ts')) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/finding\(\s*'([a-z0-9_]+)'/g)) ids.add(match[1]!);
    for (const match of text.matchAll(/:\s*'([a-z0-9]+(?:_[a-z0-9]+)*_(?:check_failed|secure|unsigned|bogus|indeterminate))'/g)) ids.add(match[1]!);
  }
  return [...ids].sort();
}

describe('finding ids', () => {
  const docs = files(join(REPO_ROOT, 'docs'), '.md').map((file) => readFileSync(file, 'utf8')).join('\n');

  it('are found in the engine (the scan itself works)', () => {
    const ids = findingIds();
    expect(ids.length).toBeGreaterThan(150);
    expect(ids).toEqual(expect.arrayContaining(['spf_lookup_limit', 'dkim_key_weak', 'dane_no_match', 'dnssec_mx_bogus', 'dkim_check_failed']));
  });

  it('are each documented in docs/', () => {
    const undocumented = findingIds().filter((id) => !new RegExp(`\\b${id}\\b`).test(docs));
    expect(undocumented).toEqual([]);
  });
});
