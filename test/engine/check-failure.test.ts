/** Why a check could not run, from its parts' failures and from its findings (src/engine/check-failure.ts). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkFailure, findingFailures } from '../../src/engine/check-failure.js';
import { finding, leavesPartUnchecked, SEVERITIES, type Finding } from '../../src/engine/findings.js';
import { ERROR_CODES, isErrorCode } from '../../src/errors.js';

const timeout = { code: 'timeout' as const, message: 'no answer from DNS server 127.0.0.1:53 for a.test TXT within 1000 ms' };
const refused = { code: 'upstream' as const, message: 'DNS server 127.0.0.1:53 answered REFUSED for b.test TXT' };

describe('checkFailure', () => {
  it('is null without failures, and names the most frequent code with its first message', () => {
    expect(checkFailure([])).toBeNull();
    expect(checkFailure([refused, timeout, timeout])).toEqual({ code: 'timeout', reason: 'DNS did not answer', message: timeout.message });
    // Among equals, the first seen.
    expect(checkFailure([refused, timeout])).toMatchObject({ code: 'upstream', reason: 'DNS refused or gave no usable answer' });
  });

  it('counts a check skipped because another failed (not_found) only when nothing else failed', () => {
    const skipped = { code: 'not_found' as const, message: 'the MX hosts could not be looked up' };
    expect(checkFailure([skipped, skipped, refused])).toMatchObject({ code: 'upstream' });
    expect(checkFailure([skipped])).toMatchObject({ code: 'not_found', message: skipped.message });
  });
});

describe('findingFailures', () => {
  it('reads the failed lookup of each unknown finding, and nothing else', () => {
    const findings = [
      finding('dkim_lookup_failed', 'unknown', 'lookup failed', null, { selector: 's1', error: timeout }),
      finding('tls_ocsp_unchecked', 'unknown', 'no issuer to check the response against', null, { reason: 'no issuer' }),
      finding('dkim_key_weak', 'error', 'weak', null, { error: refused }),
      finding('odd', 'unknown', 'a code this version does not know', null, { error: { code: 'gone_fishing', message: 'x' } }),
      finding('odd', 'unknown', 'an error in words', null, { error: 'SERVFAIL' }),
    ];
    expect(findingFailures(findings)).toEqual([timeout]);
    expect(checkFailure(findingFailures(findings))).toMatchObject({ code: 'timeout' });
  });

  it('returns, for any findings, only well-formed failures of unknown findings, one per such finding at most', () => {
    const code = fc.oneof(fc.constantFrom(...Object.keys(ERROR_CODES)), fc.string());
    const evidence = fc.oneof(
      fc.constant(null),
      fc.dictionary(fc.string(), fc.jsonValue()),
      fc.record({ error: fc.oneof(fc.record({ code, message: fc.string() }), fc.jsonValue()) }),
    );
    const anyFinding = fc.record({ id: fc.string(), severity: fc.constantFrom(...SEVERITIES), message: fc.string(), rfc: fc.constant(null), evidence }) as fc.Arbitrary<Finding>;
    fc.assert(
      fc.property(fc.array(anyFinding, { maxLength: 12 }), (findings) => {
        const failures = findingFailures(findings);
        expect(failures.length).toBeLessThanOrEqual(findings.filter((item) => item.severity === 'unknown').length);
        for (const failure of failures) {
          expect(isErrorCode(failure.code)).toBe(true);
          expect(typeof failure.message).toBe('string');
        }
        // Failures come only from findings that leave a part unchecked.
        if (failures.length > 0) expect(leavesPartUnchecked(findings)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
