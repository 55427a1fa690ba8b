import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chainRecords } from '../../../src/engine/dns/answer-chain.js';

const rr = (name: string, type: string, data: unknown) => ({ name, type, data });

describe('chainRecords: only the name and type asked, and its aliases, answer (RFC 1034 §4.3.2, RFC 2181 §5.4.1)', () => {
  it('keeps every record of a normal answer, whatever the case of the names', () => {
    const records = [rr('Example.TEST', 'A', '192.0.2.1'), rr('example.test.', 'A', '192.0.2.2')];
    expect(chainRecords({ name: 'example.test', type: 'A' }, records)).toEqual({ related: records, ignored: 0 });
  });

  it('leaves out a record for a name nobody asked', () => {
    const victim = rr('victim.example', 'A', '127.0.0.9');
    expect(chainRecords({ name: 'mx.evil.test', type: 'A' }, [victim])).toEqual({ related: [], ignored: 1 });
  });

  it('follows a CNAME chain in any order of the section, and drops what is off it', () => {
    const chain = [rr('b.test', 'A', '192.0.2.7'), rr('a.test', 'CNAME', 'c.test'), rr('www.test', 'CNAME', 'a.test'), rr('c.test', 'CNAME', 'b.test')];
    const stray = rr('other.test', 'A', '127.0.0.9');
    const { related, ignored } = chainRecords({ name: 'www.test', type: 'A' }, [...chain, stray]);
    expect(related).toEqual(chain);
    expect(ignored).toBe(1);
  });

  it('keeps a DNAME that rewrote the name and its RRSIG, but not other records at the DNAME owner', () => {
    const dname = rr('evil.test', 'DNAME', 'target.test');
    const signature = rr('evil.test', 'RRSIG', { typeCovered: 'DNAME' });
    const synthesised = rr('mx.evil.test', 'CNAME', 'mx.target.test');
    const address = rr('mx.target.test', 'A', '192.0.2.8');
    const atOwner = rr('evil.test', 'A', '127.0.0.9');
    const { related, ignored } = chainRecords({ name: 'mx.evil.test', type: 'A' }, [dname, signature, synthesised, address, atOwner]);
    expect(related).toEqual([dname, signature, synthesised, address]);
    expect(ignored).toBe(1);
  });

  it('does not let a DNAME rewrite its own owner (RFC 6672 §2.2), nor a name outside it', () => {
    const dname = rr('evil.test', 'DNAME', 'target.test');
    // Asked for its DNAME, the owner's DNAME answers; the address of its target does not.
    expect(chainRecords({ name: 'evil.test', type: 'DNAME' }, [dname, rr('target.test', 'A', '192.0.2.1')])).toEqual({ related: [dname], ignored: 1 });
    // Asked for an address, the owner's DNAME rewrote nothing and answers nothing.
    expect(chainRecords({ name: 'evil.test', type: 'A' }, [dname, rr('target.test', 'A', '192.0.2.1')])).toEqual({ related: [], ignored: 2 });
    expect(chainRecords({ name: 'notevil.test', type: 'A' }, [dname]).ignored).toBe(1);
  });

  it('ends on a CNAME loop', () => {
    const loop = [rr('a.test', 'CNAME', 'b.test'), rr('b.test', 'CNAME', 'a.test')];
    expect(chainRecords({ name: 'a.test', type: 'A' }, loop)).toEqual({ related: loop, ignored: 0 });
  });

  it('leaves out records of a type not asked, at the name asked and along its chain, and the RRSIGs over them', () => {
    const address = rr('www.test', 'A', '192.0.2.1');
    const text = rr('www.test', 'TXT', ['v=spf1 -all']);
    const overText = rr('www.test', 'RRSIG', { typeCovered: 'TXT' });
    const overAddress = rr('www.test', 'RRSIG', { typeCovered: 'A' });
    expect(chainRecords({ name: 'www.test', type: 'TXT' }, [address, text, overText, overAddress])).toEqual({ related: [text, overText], ignored: 2 });

    const alias = rr('www.test', 'CNAME', 'host.test');
    const overAlias = rr('www.test', 'RRSIG', { typeCovered: 'CNAME' });
    const stray = rr('host.test', 'MX', { preference: 10, exchange: 'mx.test' });
    const wanted = rr('host.test', 'AAAA', '2001:db8::1');
    expect(chainRecords({ name: 'www.test', type: 'AAAA' }, [alias, overAlias, stray, wanted])).toEqual({ related: [alias, overAlias, wanted], ignored: 1 });
  });

  it('keeps every RRSIG of the chain when RRSIGs are asked', () => {
    const signatures = [rr('www.test', 'RRSIG', { typeCovered: 'A' }), rr('www.test', 'RRSIG', { typeCovered: 'NSEC' })];
    expect(chainRecords({ name: 'www.test', type: 'RRSIG' }, signatures)).toEqual({ related: signatures, ignored: 0 });
  });

  it('reads an answer as the records of its question, whatever else the section holds (fast-check)', () => {
    const names = fc.constantFrom('a.test', 'b.test', 'c.test', 'A.TEST.');
    const types = fc.constantFrom('A', 'AAAA', 'TXT', 'CNAME', 'MX');
    const record = fc.record({ name: names, type: types, data: names });
    fc.assert(
      fc.property(fc.array(record, { maxLength: 8 }), names, types, (records, name, type) => {
        const { related, ignored } = chainRecords({ name, type }, records);
        expect(related.length + ignored).toBe(records.length);
        // Each record kept is of the type asked or a CNAME; every record of the name and type asked is kept.
        for (const kept of related) expect([type, 'CNAME']).toContain(kept.type);
        const bare = (n: string) => n.toLowerCase().replace(/\.$/, '');
        for (const asked of records.filter((r) => bare(r.name) === bare(name) && r.type === type)) expect(related).toContain(asked);
      }),
      { numRuns: 500 },
    );
  });
});
