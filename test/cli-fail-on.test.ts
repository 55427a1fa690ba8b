import { describe, expect, it } from 'vitest';
import { exitCodeWithFindings } from '../src/cli/fail-on.js';
import { finding } from '../src/engine/findings.js';

describe('--fail-on', () => {
  const warning = finding('spf_softfail_all', 'warning', 'the record ends in ~all');
  const error = finding('spf_multiple_records', 'error', 'two SPF records', 'RFC 7208 §4.5');
  const info = finding('mx_count', 'info', 'two MX hosts');

  it('leaves the exit code at 0 without --fail-on, whatever the findings', () => {
    expect(exitCodeWithFindings(0, undefined, [error, warning])).toBe(0);
  });

  it('exits 10 when a finding reaches the threshold', () => {
    expect(exitCodeWithFindings(0, 'warning', [info, warning])).toBe(10);
    expect(exitCodeWithFindings(0, 'error', [error])).toBe(10);
  });

  it('exits 0 when findings stay below the threshold', () => {
    expect(exitCodeWithFindings(0, 'error', [info, warning])).toBe(0);
  });

  it('keeps an error exit code ahead of findings', () => {
    expect(exitCodeWithFindings(4, 'warning', [warning])).toBe(4);
  });
});
