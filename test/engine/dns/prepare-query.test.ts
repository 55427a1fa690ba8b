import dnsPacket from 'dns-packet';
import type { RecordType } from 'dns-packet';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EDNS_UDP_PAYLOAD, prepareQuery, type EdnsMode } from '../../../src/engine/dns/dns-message.js';

/** The query as dns-packet encodes it on its own: what prepareQuery must send, byte for byte. */
function referenceQuery(id: number, name: string, type: RecordType, edns: EdnsMode): Buffer {
  const dnssecOk = edns === 'dnssec' || edns === 'dnssec-cd';
  return dnsPacket.encode({
    type: 'query',
    id,
    flags: dnsPacket.RECURSION_DESIRED | (edns === 'dnssec-cd' ? dnsPacket.CHECKING_DISABLED : 0),
    questions: [{ name, type, class: 'IN' }],
    additionals: edns
      ? [{ type: 'OPT', name: '.', udpPayloadSize: EDNS_UDP_PAYLOAD, extendedRcode: 0, ednsVersion: 0, flags: dnssecOk ? dnsPacket.DNSSEC_OK : 0, flag_do: dnssecOk, options: [] }]
      : [],
  });
}

const label = fc.stringMatching(/^[a-z0-9_-]{1,63}$/);
const name = fc.array(label, { minLength: 1, maxLength: 6 }).map((labels) => labels.join('.')).filter((joined) => joined.length <= 253);
const longName = fc.constantFrom(`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`, 'xn--bcher-kva.example', '.');
const type = fc.constantFrom<RecordType>('A', 'AAAA', 'MX', 'TXT', 'NS', 'SOA', 'CAA', 'DNSKEY', 'DS', 'PTR', 'SRV');
const edns = fc.constantFrom<EdnsMode>(false, true, 'dnssec', 'dnssec-cd');

describe('prepareQuery', () => {
  it("sends dns-packet's encoding of the query, byte for byte, whatever was encoded before it", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(0xffff), fc.oneof(name, longName), type, edns), { minLength: 1, maxLength: 5 }), (queries) => {
        const prepared = queries.map(([id, asked, askedType, mode]) => prepareQuery(id, { name: asked, type: askedType }, mode));
        // Each message keeps its own bytes after later ones were encoded.
        queries.forEach(([id, asked, askedType, mode], i) => {
          expect(prepared[i]!.message.equals(referenceQuery(id, asked, askedType, mode))).toBe(true);
          expect(prepared[i]!.id).toBe(id);
        });
      }),
      { numRuns: 500 },
    );
  });
});
