import { describe, expect, it } from 'vitest';
import { exitCodeForRun } from '../../src/cli/exit-codes.js';
import type { ErrorCode } from '../../src/errors.js';

const run = (failures: Array<[ErrorCode, number]>, succeeded = 0, partial = 0) => exitCodeForRun(succeeded, new Map(failures), partial);

describe('exitCodeForRun: the exit code of a run over several targets (docs/exit-codes.md)', () => {
  it('is 0 when all succeeded and 7 when some failed or were checked in part', () => {
    expect(run([])).toBe(0);
    expect(run([['timeout', 1]], 3)).toBe(7);
    expect(run([], 3, 1)).toBe(7);
  });

  it('is the exit code most failures have, counting the codes that share one together', () => {
    // Three failures exit 5 (upstream, unreachable, tls), two exit 4.
    expect(run([['timeout', 2], ['upstream', 1], ['unreachable', 1], ['tls', 1]])).toBe(5);
    expect(run([['not_found', 3], ['invalid_input', 1]])).toBe(3);
  });

  it('takes the lowest of exit codes as frequent, whatever order the failures came in', () => {
    expect(run([['not_found', 1], ['invalid_input', 1]])).toBe(2);
    expect(run([['invalid_input', 1], ['not_found', 1]])).toBe(2);
    expect(run([['upstream', 2], ['timeout', 2]])).toBe(4);
  });
});
