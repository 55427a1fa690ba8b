/**
 * The chain of trust in the human view of `netintel dns --dnssec`: each
 * zone's DS records by key tag, algorithm and digest type, as the validator
 * reports them (DnssecChainLink, the record's JSON field names).
 */
import { describe, expect, it } from 'vitest';
import type { DnssecChainLink } from '../../../src/engine/dns/dnssec/validate.js';
import { DNS_VIEW } from '../../../src/output/human/dns-view.js';
import { viewContext } from '../../../src/output/human/style.js';

const CHAIN: DnssecChainLink[] = [
  { zone: 'test.', ds: [{ key_tag: 11111, algorithm: 13, digest_type: 2 }], dnskeys: [{ tag: 11111, algorithm: 13, flags: 257 }], signer: null, status: 'secure', reason: null },
  {
    zone: 'child.test.',
    ds: [
      { key_tag: 34979, algorithm: 8, digest_type: 2 },
      { key_tag: 34979, algorithm: 8, digest_type: 4 },
    ],
    dnskeys: [
      { tag: 34979, algorithm: 8, flags: 257 },
      { tag: 41983, algorithm: 8, flags: 256 },
    ],
    signer: 'test.',
    status: 'secure',
    reason: null,
  },
];

const RECORD = {
  target: 'www.child.test',
  domain: 'www.child.test',
  domain_unicode: 'www.child.test',
  type: 'A',
  status: 'answer',
  rcode: 'NOERROR',
  answers: [{ name: 'www.child.test', type: 'A', ttl_seconds: 300, data: '192.0.2.1' }],
  resolver: '127.0.0.1:53',
  transport: 'udp',
  latency_ms: 3,
  dnssec: { status: 'secure', reason: null, trust_anchor: 'test.', authentic_data: false, error: null, chain: CHAIN, findings: [] },
};

describe('the DNSSEC chain in the human view', () => {
  it('names each DS by key tag, algorithm and digest type, and the zone that signed it', () => {
    const text = DNS_VIEW.block(viewContext({ width: 160, color: false, all: false }), RECORD);
    expect(text).toContain('child.test. secure; DS 34979/8/2 34979/8/4 from test.; keys 257:34979/8 256:41983/8');
    expect(text).toContain('test. secure; trust anchor; keys 257:11111/13');
    expect(text).not.toContain('undefined');
  });
});
