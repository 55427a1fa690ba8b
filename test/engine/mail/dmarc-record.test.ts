/** The DMARC record's reading (dmarc-record.ts): tags, the policy tags applied, and the applied policy. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appliedDmarcPolicy, DMARC_POLICIES, dmarcPolicyTags, hasReportingUri, isDmarcRecord, parseDmarcTags } from '../../../src/engine/mail/dmarc-record.js';

describe('dmarc-record', () => {
  it('takes v=DMARC1 first, in the forms the ABNF allows, and nothing else', () => {
    for (const text of ['v=DMARC1', 'v=DMARC1; p=none', 'V=DMARC1;p=none', 'v = DMARC1 ;p=none', 'v=DMARC1\t;']) expect(isDmarcRecord(text), text).toBe(true);
    for (const text of ['v=dmarc1; p=none', 'p=none; v=DMARC1', ' v=DMARC1', 'v=DMARC10', 'v=DMARC1 p=none']) expect(isDmarcRecord(text), text).toBe(false);
  });

  it('applies a record with an invalid p, sp or np as p=none only when rua holds a URI', () => {
    const tags = (record: string) => parseDmarcTags(record).tags;
    expect(dmarcPolicyTags(tags('v=DMARC1; p=reject; sp=none; np=quarantine'))).toEqual({ p: 'reject', sp: 'none', np: 'quarantine' });
    expect(dmarcPolicyTags(tags('v=DMARC1; p=Reject'))).toEqual({ p: 'reject', sp: null, np: null });
    expect(dmarcPolicyTags(tags('v=DMARC1; p=block; rua=mailto:d@example.com'))).toEqual({ p: 'none', sp: null, np: null });
    expect(dmarcPolicyTags(tags('v=DMARC1; p=reject; np=maybe; rua=https://r.example/x!10m'))).toEqual({ p: 'none', sp: null, np: null });
    expect(dmarcPolicyTags(tags('v=DMARC1; p=block; rua=d@example.com'))).toBeNull();
    expect(dmarcPolicyTags(tags('v=DMARC1; rua=mailto:d@example.com'))).toEqual({ p: 'none', sp: null, np: null });
  });

  it('applies p to the domain itself, sp or np to a domain below the record, one level lower with t=y', () => {
    const applied = (record: string, inherited: boolean, exists: boolean) => {
      const { tags } = parseDmarcTags(record);
      return appliedDmarcPolicy(tags, dmarcPolicyTags(tags)!, inherited, exists);
    };
    const record = 'v=DMARC1; p=reject; sp=quarantine; np=none';
    expect([applied(record, false, false), applied(record, true, true), applied(record, true, false)]).toEqual(['reject', 'quarantine', 'none']);
    expect([applied('v=DMARC1; p=reject', true, false), applied('v=DMARC1; p=reject; t=y', false, true), applied('v=DMARC1; p=quarantine; t=Y', false, true)]).toEqual(['reject', 'quarantine', 'none']);
  });

  it('never throws on any text, and gives only the policies RFC 9989 defines', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), fc.boolean(), fc.boolean(), (record, inherited, exists) => {
        const { tags, problems } = parseDmarcTags(record);
        for (const problem of problems) expect(problem.message.length).toBeGreaterThan(0);
        hasReportingUri(tags);
        const policyTags = dmarcPolicyTags(tags);
        if (policyTags !== null) {
          expect(DMARC_POLICIES).toContain(policyTags.p);
          expect(DMARC_POLICIES).toContain(appliedDmarcPolicy(tags, policyTags, inherited, exists));
        }
      }),
      { numRuns: 2000 },
    );
  });
});
