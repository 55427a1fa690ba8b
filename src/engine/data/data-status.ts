import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AsnIndex } from '../asn/asn-index.js';
import { MmdbFile } from '../dataset/mmdb-file.js';
import { CURATED_SOURCE } from '../security/security-signals.js';
import { asnDataDate, mmdbDataDate } from './data-dates.js';
import { bundledAsnCsvPath, dataFilePath } from './data-files.js';
import type { DataSource, SourceType } from './data-sources.js';
import { readDataState } from './data-state.js';
import { bootstrapPath, parseBootstrap } from '../rdap/rdap-bootstrap.js';
import { DATA_STATUS_KEYS } from './data-status-keys.js';

/** One dataset in `netintel data status`. */
export interface DataSourceStatus {
  kind: 'data-source';
  name: string;
  type: SourceType | 'embedded';
  /** feeds: the signal their entries give. */
  signal: string | null;
  /** Updated by a plain `data update`. */
  enabled: boolean;
  /** Where the data in use comes from: the data dir, the copy bundled with netintel, the embedded list; null: not installed. */
  origin: 'data-dir' | 'bundled' | 'embedded' | null;
  path: string | null;
  url: string | null;
  version: string | null;
  /** The data's own date (ISO 8601). */
  updated: string | null;
  /** When `data update` last confirmed the installed version current. */
  last_checked_at: string | null;
  /** Days since `updated`, one decimal. */
  age_days: number | null;
  entries: number | null;
  licence: string;
  attribution: string | null;
  stale_after_days: number | null;
  /** Not confirmed current for longer than stale_after_days (null: not installed, or shipped with netintel). */
  stale: boolean | null;
  /** What to do about it, when something should be done. */
  warning: string | null;
}

export interface DataStatusOptions {
  dataDir: string | null;
  sources: readonly DataSource[];
  now: Date;
  /** Overrides every source's stale_after_days. */
  staleAfterDays?: number | null;
}

const DAY_MS = 86_400_000;

/**
 * The state of every dataset: the sources of the registry (installed in the
 * data dir, bundled, or missing) and the embedded curated ASN list, with
 * paths, dates, counts, licences and a stale warning. Reads only headers and
 * metadata; never touches the network.
 */
export function dataStatus(options: DataStatusOptions): DataSourceStatus[] {
  const { dataDir, now } = options;
  const state = dataDir === null ? null : readDataState(dataDir);
  const rows: DataSourceStatus[] = [];
  for (const source of options.sources) {
    const staleAfterDays = options.staleAfterDays ?? source.staleAfterDays;
    const base = {
      kind: 'data-source' as const,
      name: source.name,
      type: source.type,
      signal: source.signal,
      enabled: source.enabled,
      url: source.url,
      licence: source.licence,
      attribution: source.attribution,
      stale_after_days: staleAfterDays,
    };
    const installed = state?.sources[source.name];
    if (installed && dataDir !== null && existsSync(join(dataDir, installed.file))) {
      const reference = installed.checkedAt ?? installed.updated;
      const stale = now.getTime() - Date.parse(reference) > staleAfterDays * DAY_MS;
      rows.push({
        ...base,
        // Where the installed data came from (the configured URL may have changed since).
        url: installed.url,
        origin: 'data-dir',
        path: join(dataDir, installed.file),
        version: installed.version,
        updated: installed.updated,
        last_checked_at: installed.checkedAt,
        age_days: ageDays(installed.updated, now),
        entries: installed.entries,
        stale,
        warning: stale ? `not confirmed current for ${days(now.getTime() - Date.parse(reference))} (stale after ${plural(staleAfterDays)}): run netintel data update ${source.name}` : null,
      });
      continue;
    }
    const bundled = bundledStatus(source, dataDir);
    if (bundled !== null) {
      const stale = bundled.updated === null ? null : now.getTime() - Date.parse(bundled.updated) > staleAfterDays * DAY_MS;
      rows.push({
        ...base,
        origin: 'bundled',
        path: bundled.path,
        version: bundled.version,
        updated: bundled.updated,
        last_checked_at: null,
        age_days: bundled.updated === null ? null : ageDays(bundled.updated, now),
        entries: bundled.entries,
        stale,
        warning: stale ? `the bundled copy is ${days(now.getTime() - Date.parse(bundled.updated!))} old (stale after ${plural(staleAfterDays)}): run netintel data update ${source.name}` : null,
      });
      continue;
    }
    rows.push({
      ...base,
      origin: null,
      path: null,
      version: null,
      updated: null,
      last_checked_at: null,
      age_days: null,
      entries: null,
      stale: null,
      warning:
        source.url === null
          ? `not installed: no URL configured (give one with --feed ${source.name}=URL or in the config file)`
          : source.enabled
            ? `not installed: run netintel data update ${source.name}`
            : null,
    });
  }
  rows.push(curatedStatus(dataDir, now));
  return rows.map(inColumnOrder);
}


/** The record with its keys in the documented order. */
function inColumnOrder(row: DataSourceStatus): DataSourceStatus {
  return Object.fromEntries(DATA_STATUS_KEYS.map((key) => [key, row[key]])) as unknown as DataSourceStatus;
}

function bundledStatus(source: DataSource, dataDir: string | null): { path: string; version: string | null; updated: string | null; entries: number | null } | null {
  if (source.type === 'mmdb') {
    // A file the user put in the data dir by hand counts as installed there too.
    const path = dataFilePath(source.file!, dataDir);
    try {
      const db = MmdbFile.open(path, { mode: 'pread' });
      try {
        const updated = mmdbDataDate(db.metadata);
        return { path, version: updated === null ? null : `build ${updated.slice(0, 10)}`, updated, entries: null };
      } finally {
        db.close();
      }
    } catch {
      return { path, version: null, updated: null, entries: null };
    }
  }
  if (source.type === 'rdap-bootstrap') {
    // The starter copy bundled in data/rdap/ (a file in the data dir not installed by an update counts as installed there).
    const path = bootstrapPath(source.rdapRegistry!, dataDir);
    try {
      const file = parseBootstrap(readFileSync(path, 'utf8'));
      const updated = file.publication !== null && !Number.isNaN(Date.parse(file.publication)) ? new Date(Date.parse(file.publication)).toISOString().replace('.000Z', 'Z') : null;
      const entries = file.services.reduce((sum, service) => sum + service.entries.length, 0);
      return { path, version: updated === null ? null : `publication ${updated.slice(0, 10)}`, updated, entries };
    } catch {
      return { path, version: null, updated: null, entries: null };
    }
  }
  if (source.type === 'asn-csv') {
    const path = bundledAsnCsvPath(source.ipVersion!);
    try {
      const index = AsnIndex.open(dataFilePath('asnIndex', dataDir));
      try {
        const meta = index.metadata;
        return { path, version: meta.sourceVersion, updated: asnDataDate(meta), entries: source.ipVersion === 4 ? meta.v4Ranges : meta.v6Ranges };
      } finally {
        index.close();
      }
    } catch {
      return existsSync(path) ? { path, version: null, updated: null, entries: null } : null;
    }
  }
  return null;
}

function curatedStatus(dataDir: string | null, now: Date): DataSourceStatus {
  const path = dataFilePath('curatedAsns', dataDir);
  let doc: { version?: string; licence?: string; entries?: unknown[] } = {};
  try {
    doc = JSON.parse(readFileSync(path, 'utf8')) as typeof doc;
  } catch {
    // Reported below as an unreadable list.
  }
  const updated = typeof doc.version === 'string' ? doc.version : null;
  return {
    kind: 'data-source',
    name: CURATED_SOURCE,
    type: 'embedded',
    signal: 'hosting_asn, vpn_asn',
    enabled: true,
    origin: 'embedded',
    path,
    url: null,
    version: updated,
    updated,
    last_checked_at: null,
    age_days: updated === null ? null : ageDays(updated, now),
    entries: Array.isArray(doc.entries) ? doc.entries.length : null,
    licence: doc.licence ?? 'not stated',
    attribution: 'netintel curated list of hosting, cloud, CDN and VPN-operator ASNs (data/curated-asns.json)',
    stale_after_days: null,
    stale: null,
    warning: Array.isArray(doc.entries) ? null : `cannot read ${path}`,
  };
}

function ageDays(updated: string, now: Date): number | null {
  const at = Date.parse(updated);
  return Number.isNaN(at) ? null : Math.round(((now.getTime() - at) / DAY_MS) * 10) / 10;
}

function days(ms: number): string {
  return plural(Math.round((ms / DAY_MS) * 10) / 10);
}

function plural(value: number): string {
  return `${value} day${value === 1 ? '' : 's'}`;
}
