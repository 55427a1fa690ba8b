import { readFileSync } from 'node:fs';
import { NetintelError } from '../../errors.js';

export type AsnCategory = 'cloud' | 'hosting' | 'cdn' | 'vpn';

export interface CuratedAsn {
  asn: number;
  category: AsnCategory;
  /** The operator's common name (e.g. "Amazon Web Services"). */
  provider: string;
  /** The AS name as registered. */
  as_name: string;
}

export interface CuratedAsnList {
  name: string;
  version: string;
  byAsn: ReadonlyMap<number, CuratedAsn>;
}

const lists = new Map<string, CuratedAsnList>();

/** Loads the curated list of hosting/cloud/CDN and VPN-operator ASNs shipped in data/. */
export function loadCuratedAsns(path: string): CuratedAsnList {
  let list = lists.get(path);
  if (!list) {
    try {
      const doc = JSON.parse(readFileSync(path, 'utf8')) as { name: string; version: string; entries: CuratedAsn[] };
      list = { name: doc.name, version: doc.version, byAsn: new Map(doc.entries.map((entry) => [entry.asn, entry])) };
    } catch (error) {
      throw new NetintelError('data_unavailable', `cannot read the curated ASN list ${path}`, { cause: error, details: { path } });
    }
    lists.set(path, list);
  }
  return list;
}

export function isHostingCategory(category: AsnCategory | undefined): boolean {
  return category === 'cloud' || category === 'hosting' || category === 'cdn';
}
