import type { AsnIndexMetadata } from '../asn/asn-index.js';
import type { MmdbMetadata } from '../dataset/mmdb-file.js';

/** The build date of an mmdb file (its metadata's build_epoch) as ISO 8601, or null. */
export function mmdbDataDate(metadata: MmdbMetadata): string | null {
  const built = metadata.buildEpoch as unknown;
  const date = built instanceof Date ? built : typeof built === 'number' ? new Date(built * 1000) : null;
  return date === null || Number.isNaN(date.getTime()) ? null : isoSeconds(date);
}

/** `date.toISOString()` to the second. */
export function isoSeconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The date of the ASN data an index was compiled from: the source version
 * when it is a date (`data update` stores the download's date), the date in a
 * package version like `2.3.2026061719` (the bundled @ip-location-db/asn),
 * else the build date.
 */
export function asnDataDate(metadata: Pick<AsnIndexMetadata, 'sourceVersion' | 'builtAt'>): string | null {
  const version = metadata.sourceVersion ?? '';
  if (/^\d{4}-\d{2}-\d{2}/.test(version)) return version;
  const packaged = /\.(\d{4})(\d{2})(\d{2})\d*$/.exec(version);
  if (packaged) return `${packaged[1]}-${packaged[2]}-${packaged[3]}`;
  return typeof metadata.builtAt === 'string' ? metadata.builtAt : null;
}
