import type { AsnResult } from '../../engine/asn/lookup-asn.js';
import type { IpInfoRecord } from '../../engine/ip/ip-record.js';
import { ASN_VIEW } from './asn-view.js';
import { IP_VIEW } from './ip-view.js';
import type { HumanView } from './view.js';

const isAsn = (record: unknown): record is AsnResult => (record as { kind?: unknown }).kind === 'asn';

/** Bulk rows: addresses as the IP view shows them, AS-number lines with their organization (and prefix counts in the location column). */
export const BULK_VIEW: HumanView = {
  block: (ctx, record) => (isAsn(record) ? ASN_VIEW.block(ctx, record) : IP_VIEW.block(ctx, record)),
  table: {
    columns: IP_VIEW.table.columns,
    cells: (record) => {
      if (!isAsn(record)) return IP_VIEW.table.cells(record);
      return [record.query, record.route ?? '', `AS${record.asn}`, record.organization ?? '', ''];
    },
    key: (record) => (isAsn(record) ? record.query : (record as IpInfoRecord).ip),
  },
};
