import type { EngineContext } from '../context.js';
import { AsnIndex } from '../asn/asn-index.js';
import { asnDataDate, mmdbDataDate } from '../data/data-dates.js';
import { dataDirFilePath, dataFilePath } from '../data/data-files.js';
import { loadCountryNames, type CountryNameTable } from '../geo/country-names.js';
import { MmdbFile, type MmdbOpenOptions } from '../dataset/mmdb-file.js';
import { loadRegionTable, type RegionTable } from '../geo/region-codes.js';
import { loadCuratedAsns, type CuratedAsnList } from '../security/curated-asns.js';
import { SecuritySignals } from '../security/security-signals.js';
import { SignalIndex } from '../security/signal-index.js';
import type { IpRecordMeta } from './ip-record.js';
import { RpkiIndex } from '../rpki/rpki-index.js';

/**
 * `pread` for one-off lookups (touch a few KiB of each file), `memory` for
 * bulk runs (read each file once, then no I/O per lookup).
 */
export type AccessMode = 'pread' | 'memory';

/** The datasets behind an IP lookup, each opened on first use. */
export class IpDatabases {
  private cityV4File?: MmdbFile;
  private cityV6File?: MmdbFile;
  private asnFile?: AsnIndex;
  private regionTable?: RegionTable;
  private countryTable?: CountryNameTable;
  private curatedList?: CuratedAsnList;
  private securitySignals?: SecuritySignals;
  private rpkiIndex?: RpkiIndex | null;
  /** By family, negated for answers without a location: every record asks, so no key is built. */
  private readonly metas: Record<number, IpRecordMeta> = {};

  constructor(
    private readonly dataDir: string | null,
    readonly mode: AccessMode,
  ) {}

  get cityV4(): MmdbFile {
    return (this.cityV4File ??= MmdbFile.open(dataFilePath('cityV4', this.dataDir), this.mmdbOptions()));
  }

  get cityV6(): MmdbFile {
    return (this.cityV6File ??= MmdbFile.open(dataFilePath('cityV6', this.dataDir), this.mmdbOptions()));
  }

  /**
   * In memory, a decoded record costs no I/O to decode again, and the
   * lookups keep the locations built from records in a cache of their own:
   * a record cache would only add work and memory.
   */
  private mmdbOptions(): MmdbOpenOptions {
    return this.mode === 'memory' ? { mode: 'memory', cacheSize: 0 } : { mode: 'pread' };
  }

  get asn(): AsnIndex {
    return (this.asnFile ??= AsnIndex.open(dataFilePath('asnIndex', this.dataDir), { mode: this.mode }));
  }

  get regions(): RegionTable {
    return (this.regionTable ??= loadRegionTable(dataFilePath('regions', this.dataDir)));
  }

  get countryNames(): CountryNameTable {
    return (this.countryTable ??= loadCountryNames(dataFilePath('countryNames', this.dataDir)));
  }

  get curatedAsns(): CuratedAsnList {
    return (this.curatedList ??= loadCuratedAsns(dataFilePath('curatedAsns', this.dataDir)));
  }

  /**
   * The security signals: the curated ASN list and, when `netintel data
   * update` has installed feeds in the data dir, their compiled index
   * (opened like the other datasets: positioned reads or in memory).
   */
  get security(): SecuritySignals {
    if (!this.securitySignals) {
      const path = dataDirFilePath('securityIndex', this.dataDir);
      this.securitySignals = new SecuritySignals(this.curatedAsns, path === null ? null : SignalIndex.open(path, { mode: this.mode }));
    }
    return this.securitySignals;
  }

  /**
   * The compiled RPKI index when `netintel data update` has installed one,
   * else null (a stat of the data dir, nothing read).
   */
  get rpki(): RpkiIndex | null {
    if (this.rpkiIndex === undefined) {
      const path = dataDirFilePath('rpkiIndex', this.dataDir);
      this.rpkiIndex = path === null ? null : RpkiIndex.open(path, { mode: this.mode });
    }
    return this.rpkiIndex;
  }

  /**
   * The datasets an answer for an address of the family uses, with their
   * dates (the record's `meta`); the city database only when the answer
   * has a location.
   */
  meta(version: 4 | 6, withLocation = true): IpRecordMeta {
    const key = withLocation ? version : -version;
    let meta = this.metas[key];
    if (!meta) {
      const city = withLocation ? (version === 4 ? this.cityV4 : this.cityV6) : null;
      const data = {
        ...(city ? { [`dbip-city-ipv${version}`]: mmdbDataDate(city.metadata) } : {}),
        [`asn-ipv${version}`]: asnDataDate(this.asn.metadata),
        ...this.security.dataDates(),
        ...(this.rpki === null ? {} : { rpki: this.rpki.meta.updated }),
      };
      meta = Object.freeze({ data: Object.freeze(data) });
      this.metas[key] = meta;
    }
    return meta;
  }

  close(): void {
    this.cityV4File?.close();
    this.cityV6File?.close();
    this.asnFile?.close();
    this.securitySignals?.index?.close();
    this.rpkiIndex?.close();
  }
}

const shared = new Map<string, IpDatabases>();

/** The databases for a context, shared by every lookup made with the same data dir and mode. */
export function ipDatabasesFor(ctx: EngineContext, mode: AccessMode = 'pread'): IpDatabases {
  const key = `${mode}\0${ctx.dataDir ?? ''}`;
  let databases = shared.get(key);
  if (!databases) {
    databases = new IpDatabases(ctx.dataDir, mode);
    shared.set(key, databases);
  }
  return databases;
}
