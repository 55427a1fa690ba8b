import { describe, expect, it } from 'vitest';
import { NetintelError } from '../../src/errors.js';
import { createFormatter } from '../../src/output/formatter.js';
import { getPath, parseFieldList, projectRecord, selectColumns } from '../../src/output/record-schema.js';
import { ASN_SCHEMA } from '../../src/output/schemas/asn-schema.js';
import { BULK_SCHEMA } from '../../src/output/schemas/bulk-schema.js';
import { IP_SCHEMA } from '../../src/output/schemas/ip-schema.js';
import { ASN_BY_IP, ASN_BY_NUMBER, AWKWARD_V6, failed, GOOGLE_DNS, INVALID_IP_ERROR, ok, PRIVATE_V4 } from './fixtures.js';
import { render } from './render.js';

function usageError(fn: () => unknown): NetintelError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(NetintelError);
    return error as NetintelError;
  }
  throw new Error('expected a NetintelError, nothing was thrown');
}

describe('--fields selection', () => {
  it('expands a group to its columns, keeping the identity column first', () => {
    expect(selectColumns(IP_SCHEMA, ['security'])).toEqual([
      'ip',
      'security.is_vpn',
      'security.is_proxy',
      'security.is_tor',
      'security.is_hosting',
      'security.threat_level',
    ]);
  });

  it('takes dot paths and groups together, in schema order whatever the order asked', () => {
    expect(selectColumns(IP_SCHEMA, ['network.asn', 'location.city', 'reserved', 'type'])).toEqual([
      'ip',
      'type',
      'location.city',
      'network.asn',
      'reserved',
    ]);
  });

  it('treats a dot path prefix like its group', () => {
    expect(selectColumns(ASN_SCHEMA, ['counts'])).toEqual(selectColumns(ASN_SCHEMA, ['counts.ipv4_prefixes', 'counts.ipv6_prefixes', 'counts.ipv4_addresses', 'counts.ipv6_addresses']));
    expect(selectColumns(ASN_SCHEMA, ['prefixes'])).toEqual(['asn', 'prefixes.ipv4', 'prefixes.ipv6']);
  });

  it('ignores a repeated field and gives the whole schema for no fields', () => {
    expect(selectColumns(IP_SCHEMA, ['location.city', 'location.city'])).toEqual(['ip', 'location.city']);
    expect(selectColumns(IP_SCHEMA, null)).toBe(IP_SCHEMA.columns);
    expect(selectColumns(IP_SCHEMA, [])).toBe(IP_SCHEMA.columns);
  });

  it.each(['nope', 'location.nope', 'Location', 'location.', 'city'])('throws a usage error naming the unknown field %j', (field) => {
    const error = usageError(() => selectColumns(IP_SCHEMA, ['location', field]));
    expect(error.code).toBe('usage');
    expect(error.message.startsWith(`unknown field ${JSON.stringify(field)} for ip records (`)).toBe(true);
    expect(error.message.endsWith('see --help for the field list)')).toBe(true);
    expect(error.details?.field).toBe(field);
  });

  it('splits a comma-separated list, trimming spaces and dropping empty items', () => {
    expect(parseFieldList(' location , network.asn,,security ')).toEqual(['location', 'network.asn', 'security']);
    expect(parseFieldList(',')).toEqual([]);
  });

  it('keeps the nesting of the record when projecting, with null for missing values', () => {
    const columns = selectColumns(IP_SCHEMA, ['location.city', 'network']);
    expect(projectRecord(GOOGLE_DNS, columns)).toEqual({
      ip: '8.8.8.8',
      location: { city: 'Mountain View' },
      network: { isp: 'Google LLC', organization: 'Google LLC', asn: 15169, domain: null, rpki: { status: 'valid', reason: null } },
    });
    expect(projectRecord({ ip: '1.2.3.4' }, ['ip', 'location.city'])).toEqual({ ip: '1.2.3.4', location: { city: null } });
    // An object the record holds as null stays null, whatever of its members are selected.
    expect(projectRecord({ ip: '10.0.0.1', network: { asn: null, rpki: null } }, ['ip', 'network.asn', 'network.rpki.status', 'network.rpki.reason'])).toEqual({ ip: '10.0.0.1', network: { asn: null, rpki: null } });
  });

  it('projects bulk records through the bulk reader: kind filled, an ASN line\'s facts in the IP columns', () => {
    const columns = selectColumns(BULK_SCHEMA, ['network.asn', 'route']);
    expect(columns).toEqual(['kind', 'ip', 'network.asn', 'route']);
    expect(projectRecord(GOOGLE_DNS, columns, BULK_SCHEMA.readColumn)).toEqual({ kind: 'ip', ip: '8.8.8.8', network: { asn: 15169 }, route: null });
    expect(projectRecord(ASN_BY_NUMBER, columns, BULK_SCHEMA.readColumn)).toEqual({ kind: 'asn', ip: null, network: { asn: 64500 }, route: null });
  });

  it('reads dot paths, giving undefined through null and primitives', () => {
    expect(getPath(GOOGLE_DNS, 'location.city')).toBe('Mountain View');
    expect(getPath(GOOGLE_DNS, 'location.zip')).toBeNull();
    expect(getPath(PRIVATE_V4, 'location.city.name')).toBeUndefined();
    expect(getPath(null, 'ip')).toBeUndefined();
  });

  it('prints only the selected columns in csv, json, ndjson, xml and table', async () => {
    const columns = selectColumns(IP_SCHEMA, ['location.country_code', 'network.asn']);
    const outcomes = [ok('8.8.8.8', GOOGLE_DNS), failed('not-an-ip', INVALID_IP_ERROR)];
    expect(await render(IP_SCHEMA, 'csv', outcomes, { single: false, columns })).toBe(
      'query,ip,location.country_code,network.asn,error.code,error.message\n' +
        '8.8.8.8,8.8.8.8,US,15169,,\n' +
        'not-an-ip,,,,invalid_input,"""not-an-ip"" is not a valid IPv4 or IPv6 address"\n',
    );
    expect(await render(IP_SCHEMA, 'ndjson', outcomes, { single: false, columns })).toBe(
      '{"ip":"8.8.8.8","location":{"country_code":"US"},"network":{"asn":15169}}\n' +
        '{"query":"not-an-ip","error":{"code":"invalid_input","message":"\\"not-an-ip\\" is not a valid IPv4 or IPv6 address","details":{"input":"not-an-ip"}}}\n',
    );
    expect(await render(IP_SCHEMA, 'json', outcomes.slice(0, 1), { single: true, columns })).toBe(
      '{\n  "ip": "8.8.8.8",\n  "location": {\n    "country_code": "US"\n  },\n  "network": {\n    "asn": 15169\n  }\n}\n',
    );
    expect(await render(IP_SCHEMA, 'xml', outcomes.slice(0, 1), { single: false, columns })).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<netintel kind="ip">\n  <record>\n    <ip>8.8.8.8</ip>\n    <location>\n      <country_code>US</country_code>\n    </location>\n    <network>\n      <asn>15169</asn>\n    </network>\n  </record>\n</netintel>\n',
    );
    const table = await render(IP_SCHEMA, 'table', outcomes, { single: false, columns });
    expect(table.split('\n')[1]!.split('│').map((cell) => cell.trim())).toEqual(['', 'IP', 'Country code', 'ASN', '']);
  });
});

describe('stable CSV columns', () => {
  it('prints the same header whether the first outcome is an error or a record', async () => {
    const errorFirst = await render(IP_SCHEMA, 'csv', [failed('not-an-ip', INVALID_IP_ERROR), ok('8.8.8.8', GOOGLE_DNS)], { single: false });
    const recordFirst = await render(IP_SCHEMA, 'csv', [ok('8.8.8.8', GOOGLE_DNS), failed('not-an-ip', INVALID_IP_ERROR)], { single: false });
    const [headerA, ...rowsA] = errorFirst.trimEnd().split('\n');
    const [headerB, ...rowsB] = recordFirst.trimEnd().split('\n');
    expect(headerA).toBe(headerB);
    expect(headerA).toBe(['query', ...IP_SCHEMA.columns, 'error.code', 'error.message'].join(','));
    expect(rowsA).toEqual([...rowsB].reverse());
  });

  it('prints the header even when every outcome is an error, and only it when there are none', async () => {
    const header = `${['query', ...IP_SCHEMA.columns, 'error.code', 'error.message'].join(',')}\n`;
    expect(await render(IP_SCHEMA, 'csv', [], { single: false })).toBe(header);
    const allFailed = await render(IP_SCHEMA, 'csv', [failed('x', INVALID_IP_ERROR)], { single: false });
    expect(allFailed.startsWith(header)).toBe(true);
  });

  it('gives every row as many cells as the header, for records of every shape', async () => {
    const countCells = (line: string) => line.split(',').length;
    const text = await render(IP_SCHEMA, 'csv', [failed('x', INVALID_IP_ERROR), ok('10.0.0.1', PRIVATE_V4), ok('8.8.8.8', GOOGLE_DNS)], { single: false });
    const lines = text.trimEnd().split('\n');
    expect(lines.map(countCells)).toEqual(Array(4).fill(IP_SCHEMA.columns.length + 3));
    // AWKWARD_V6 has quoted commas, so count with a parser-free check on the ASN schema instead.
    const asn = await render(ASN_SCHEMA, 'csv', [failed('AS0', INVALID_IP_ERROR), ok('8.8.8.8', ASN_BY_IP)], { single: false });
    expect(asn.trimEnd().split('\n').map(countCells)).toEqual(Array(3).fill(ASN_SCHEMA.columns.length + 3));
  });

  it('maps ASN lines into the IP columns in bulk csv', async () => {
    const formatter = await createFormatter({ format: 'csv', schema: BULK_SCHEMA, columns: null, header: false, color: false, single: false });
    const row = formatter.write(ok('AS64500', ASN_BY_NUMBER)).trimEnd();
    const cells = row.match(/("([^"]|"")*"|[^,]*)(,|$)/g)!.map((cell) => cell.replace(/,$/, ''));
    const byColumn = Object.fromEntries(['query', ...BULK_SCHEMA.columns].map((column, i) => [column, cells[i]]));
    expect(byColumn).toMatchObject({
      query: 'AS64500',
      kind: 'asn',
      ip: '',
      'network.asn': '64500',
      'network.organization': '"Example Networks, ""Ltd"""',
      'network.isp': '"Example Networks, ""Ltd"""',
      route: '',
    });
    expect(formatter.write(ok('x', AWKWARD_V6))).toContain(',ip,2a02:1234:5678::1,ipv6,');
  });
});
