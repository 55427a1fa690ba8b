import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors.js';

describe('the error table', () => {
  it('is listed in docs/exit-codes.md with the same exit codes and HTTP statuses', () => {
    const rows = readFileSync(new URL('../../docs/exit-codes.md', import.meta.url), 'utf8').split('\n');
    for (const [code, entry] of Object.entries(ERROR_CODES)) {
      const row = rows.find((line) => line.startsWith(`| \`${code}\` |`));
      expect(row, `docs/exit-codes.md row for ${code}`).toBeDefined();
      const cells = row!.split('|').map((cell) => cell.trim());
      expect(cells[2]).toBe(String(entry.exit));
      expect(cells[3]).toBe(entry.http === null ? '-' : String(entry.http));
    }
  });

  it('gives every code a distinct meaning and a known exit code', () => {
    const meanings = Object.values(ERROR_CODES).map((entry) => entry.meaning);
    expect(new Set(meanings).size).toBe(meanings.length);
    for (const entry of Object.values(ERROR_CODES)) expect(entry.exit).toBeGreaterThan(0);
  });
});
