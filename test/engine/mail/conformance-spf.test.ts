/** The RFC 7208 suite runner (scripts/conformance-spf.ts) on a small suite written here. */
import { describe, expect, it } from 'vitest';
import { buildZone, formatConformance, runConformance } from '../../../scripts/conformance-spf.js';

const SUITE = `
---
description: Small scenario
tests:
  plain-pass:
    helo: mail.example.com
    host: 192.0.2.1
    mailfrom: a@one.example.com
    result: pass
  copied-from-spf:
    description: an SPF entry is also served as TXT
    helo: mail.example.com
    host: 192.0.2.9
    mailfrom: a@spfonly.example.com
    result: fail
    explanation: Go away, 192.0.2.9.
  timeout-is-temperror:
    helo: mail.example.com
    host: 192.0.2.1
    mailfrom: a@slow.example.com
    result: temperror
  txt-none-blocks-copy:
    helo: mail.example.com
    host: 192.0.2.1
    mailfrom: a@blocked.example.com
    result: [none, neutral]
  wrong-on-purpose:
    helo: mail.example.com
    host: 192.0.2.1
    mailfrom: a@one.example.com
    result: fail
zonedata:
  one.example.com:
    - TXT: v=spf1 ip4:192.0.2.0/24 -all
  spfonly.example.com:
    - SPF: v=spf1 -all exp=why.example.com
  why.example.com:
    - TXT: Go away, %{i}.
  slow.example.com:
    - TIMEOUT
  blocked.example.com:
    - SPF: v=spf1 +all
    - TXT: NONE
---
description: Second scenario
tests:
  include-path:
    helo: mail.example.com
    host: 2001:db8::1
    mailfrom: b@two.example.com
    result: pass
zonedata:
  two.example.com:
    - SPF: [ "v=spf1 include:", "inner.example.com -all" ]
  inner.example.com:
    - SPF: v=spf1 ip6:2001:db8::/32
`;

describe('conformance:spf runner', () => {
  it("serves each scenario's zone, runs every test, and counts passes and failures", async () => {
    const result = await runConformance(SUITE, { timeoutMs: 200 });
    expect(result.outcomes.map((outcome) => [outcome.test, outcome.result, outcome.passed])).toEqual([
      ['plain-pass', 'pass', true],
      ['copied-from-spf', 'fail', true],
      ['timeout-is-temperror', 'temperror', true],
      ['txt-none-blocks-copy', 'none', true],
      ['wrong-on-purpose', 'pass', false],
      ['include-path', 'pass', true],
    ]);
    expect(result).toMatchObject({ passed: 5, failed: 1 });
    const text = formatConformance(result);
    expect(text).toContain('Small scenario\n  passed  plain-pass: pass\n');
    expect(text).toContain('  failed  wrong-on-purpose: got pass, expected fail');
    expect(text.endsWith('5 passed, 1 failed\n')).toBe(true);
  });

  it('copies SPF entries to TXT unless the name has a TXT entry, and keeps TIMEOUT where it stands', () => {
    const zone = buildZone({
      'a.example': [{ SPF: 'v=spf1 -all' }],
      'b.example': [{ SPF: 'v=spf1 -all' }, { TXT: 'NONE' }],
      'c.example': [{ TXT: 'v=spf1 -all' }, 'TIMEOUT'],
    });
    expect(zone.get('a.example')!.map((entry) => (entry === 'TIMEOUT' ? entry : entry.type))).toEqual(['SPF', 'TXT']);
    expect(zone.get('b.example')!.map((entry) => (entry === 'TIMEOUT' ? entry : entry.type))).toEqual(['SPF']);
    expect(zone.get('c.example')!.map((entry) => (entry === 'TIMEOUT' ? entry : entry.type))).toEqual(['TXT', 'TIMEOUT']);
  });
});
