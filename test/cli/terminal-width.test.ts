import { describe, expect, it } from 'vitest';
import { terminalWidth } from '../../src/cli/terminal-width.js';
import type { OutputStream } from '../../src/cli/io.js';

const stream = (extra: Partial<OutputStream>) => ({ write: () => true, on: () => undefined, off: () => undefined, ...extra }) as OutputStream;

describe('terminalWidth', () => {
  it("takes the terminal's columns when stdout is one, whatever COLUMNS says", () => {
    expect(terminalWidth({ stdout: stream({ isTTY: true, columns: 132 }), env: { COLUMNS: '40' } })).toBe(132);
  });

  it('takes COLUMNS when stdout is not a terminal and it is a positive integer', () => {
    expect(terminalWidth({ stdout: stream({ columns: 132 }), env: { COLUMNS: '100' } })).toBe(100);
    expect(terminalWidth({ stdout: stream({ isTTY: true }), env: { COLUMNS: ' 72 ' } })).toBe(72);
  });

  it('falls back to 80 for a COLUMNS that is not a positive integer, or none', () => {
    for (const value of ['0', '-5', 'wide', '80.5', '', '1e3', '99999999999999999999']) {
      expect([value, terminalWidth({ stdout: stream({}), env: { COLUMNS: value } })]).toEqual([value, 80]);
    }
    expect(terminalWidth({ stdout: stream({}), env: {} })).toBe(80);
  });
});
