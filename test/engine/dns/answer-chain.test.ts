import { describe, expect, it } from 'vitest';
import { chainRecords } from '../../../src/engine/dns/answer-chain.js';

const rr = (name: string, type: string, data: unknown) => ({ name, type, data });

describe('chainRecords: only the name asked and its aliases answer (RFC 1034 §4.3.2, RFC 2181 §5.4.1)', () => {
  it('keeps every record of a normal answer, whatever the case of the names', () => {
    const records = [rr('Example.TEST', 'A', '192.0.2.1'), rr('example.test.', 'A', '192.0.2.2')];
    expect(chainRecords('example.test', records)).toEqual({ related: records, ignored: 0 });
  });

  it('leaves out a record for a name nobody asked', () => {
    const victim = rr('victim.example', 'A', '127.0.0.9');
    expect(chainRecords('mx.evil.test', [victim])).toEqual({ related: [], ignored: 1 });
  });

  it('follows a CNAME chain in any order of the section, and drops what is off it', () => {
    const chain = [rr('b.test', 'A', '192.0.2.7'), rr('a.test', 'CNAME', 'c.test'), rr('www.test', 'CNAME', 'a.test'), rr('c.test', 'CNAME', 'b.test')];
    const stray = rr('other.test', 'A', '127.0.0.9');
    const { related, ignored } = chainRecords('www.test', [...chain, stray]);
    expect(related).toEqual(chain);
    expect(ignored).toBe(1);
  });

  it('keeps a DNAME that rewrote the name and its RRSIG, but not other records at the DNAME owner', () => {
    const dname = rr('evil.test', 'DNAME', 'target.test');
    const signature = rr('evil.test', 'RRSIG', { typeCovered: 'DNAME' });
    const synthesised = rr('mx.evil.test', 'CNAME', 'mx.target.test');
    const address = rr('mx.target.test', 'A', '192.0.2.8');
    const atOwner = rr('evil.test', 'A', '127.0.0.9');
    const { related, ignored } = chainRecords('mx.evil.test', [dname, signature, synthesised, address, atOwner]);
    expect(related).toEqual([dname, signature, synthesised, address]);
    expect(ignored).toBe(1);
  });

  it('does not let a DNAME rewrite its own owner (RFC 6672 §2.2), nor a name outside it', () => {
    const dname = rr('evil.test', 'DNAME', 'target.test');
    // The DNAME is a record of the name asked; the address of its target is not.
    expect(chainRecords('evil.test', [dname, rr('target.test', 'A', '192.0.2.1')])).toEqual({ related: [dname], ignored: 1 });
    expect(chainRecords('notevil.test', [dname]).ignored).toBe(1);
  });

  it('ends on a CNAME loop', () => {
    const loop = [rr('a.test', 'CNAME', 'b.test'), rr('b.test', 'CNAME', 'a.test')];
    expect(chainRecords('a.test', loop)).toEqual({ related: loop, ignored: 0 });
  });
});
