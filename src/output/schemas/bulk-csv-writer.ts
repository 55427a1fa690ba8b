import type { IpInfoRecord } from '../../engine/ip/ip-record.js';
import { createCsvRecordWriter, CsvGroup, writeCsvCell, type CsvRecordWriter } from '../csv-encoder.js';
import { IP_SCHEMA } from './ip-schema.js';

const COMMA = 0x2c;
/** The `kind` cell of an IP row and its separator. */
const IP_KIND = Buffer.from('ip,');

type Memoised = Record<symbol, Uint8Array | undefined>;

/** The bulk columns in full: `kind`, the IP record's columns, `route`. */
export const FULL_BULK_COLUMNS: readonly string[] = ['kind', ...IP_SCHEMA.columns, 'route'];

/**
 * The CSV writer of a bulk row with every column, specialised for the IP
 * record: the row of a bulk run over addresses, a million times over. It
 * reads the record's own properties by name and the three groups' cached
 * bytes each at a place of its own, where the generic writer reads every
 * column through one loop (a dot path per leaf, a symbol per group on
 * three kinds of object: lookups V8 cannot specialise) on an adapted copy
 * of the record. The bytes are the generic writer's over `adapt`; other
 * records (AS-number lines) go to it. Null for any other column set.
 */
export function createBulkCsvWriter(columns: readonly string[], adapt: (record: unknown) => unknown): CsvRecordWriter | null {
  if (columns.length !== FULL_BULK_COLUMNS.length || columns.some((column, i) => column !== FULL_BULK_COLUMNS[i])) return null;
  const generic = createCsvRecordWriter(columns);
  const subKeys = (group: string) => IP_SCHEMA.groups[group]!.map((column) => column.split('.').slice(1));
  const location = new CsvGroup('location', subKeys('location'));
  const network = new CsvGroup('network', subKeys('network'));
  const security = new CsvGroup('security', subKeys('security'));
  const [locationMemo, networkMemo, securityMemo] = [location.memo, network.memo, security.memo];
  return (record, out) => {
    if ((record as { kind?: unknown }).kind === 'asn') return generic(adapt(record), out);
    const ip = record as IpInfoRecord;
    out.appendBytes(IP_KIND);
    writeCsvCell(ip.ip, out);
    out.appendByte(COMMA);
    writeCsvCell(ip.type, out);
    out.appendByte(COMMA);
    // Each group: its object's cached bytes, or its separators alone when the record has none.
    const where = ip.location as unknown;
    if (typeof where !== 'object' || where === null) out.appendBytes(location.empty);
    else out.appendBytes((where as Memoised)[locationMemo] ?? location.bytesOf(where));
    out.appendByte(COMMA);
    const owner = ip.network as unknown;
    if (typeof owner !== 'object' || owner === null) out.appendBytes(network.empty);
    else out.appendBytes((owner as Memoised)[networkMemo] ?? network.bytesOf(owner));
    out.appendByte(COMMA);
    const verdict = ip.security as unknown;
    if (typeof verdict !== 'object' || verdict === null) out.appendBytes(security.empty);
    else out.appendBytes((verdict as Memoised)[securityMemo] ?? security.bytesOf(verdict));
    out.appendByte(COMMA);
    writeCsvCell(ip.reserved, out);
    // The route cell is empty on an IP row.
    out.appendByte(COMMA);
  };
}
