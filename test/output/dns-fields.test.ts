import { describe, expect, it } from 'vitest';
import { NetintelError } from '../../src/errors.js';
import { createFormatter } from '../../src/output/formatter.js';
import { DNS_SCHEMA } from '../../src/output/schemas/dns-schema.js';

const MX_RESULT = {
  kind: 'dns',
  target: 'example.com',
  domain: 'example.com',
  domain_unicode: 'example.com',
  type: 'MX',
  status: 'answer',
  rcode: 'NOERROR',
  answers: [{ name: 'example.com', type: 'MX', ttl_seconds: 300, data: { preference: 10, exchange: 'mx.example.com' } }],
  resolver: '127.0.0.1:53',
  transport: 'udp',
  latency_ms: 1.5,
};

async function render(format: 'json' | 'csv', columns: readonly string[] | null): Promise<string> {
  const formatter = await createFormatter({ format, schema: DNS_SCHEMA, columns, header: true, color: false, single: true });
  return formatter.start() + formatter.write({ ok: true, query: 'example.com', value: MX_RESULT }) + formatter.end();
}

describe('DNS answers in text and structured views', () => {
  it('keeps typed answers in json when --fields selects them', async () => {
    const parsed = JSON.parse(await render('json', ['domain', 'type', 'answers']));
    expect(parsed).toEqual({ domain: 'example.com', type: 'MX', answers: MX_RESULT.answers });
  });

  it('shows answers in zone-file form in csv', async () => {
    const text = await render('csv', ['domain', 'type', 'answers']);
    expect(text).toBe('query,domain,type,answers,error.code,error.message\nexample.com,example.com,MX,example.com. 300 IN MX 10 mx.example.com.,,\n');
  });

  it('writes an error row with empty record columns in csv', async () => {
    const formatter = await createFormatter({ format: 'csv', schema: DNS_SCHEMA, columns: ['domain', 'answers'], header: false, color: false, single: false });
    const row = formatter.write({ ok: false, query: 'bad..name', error: new NetintelError('invalid_input', 'bad name') });
    expect(row).toBe('bad..name,,,invalid_input,bad name\n');
  });
});
