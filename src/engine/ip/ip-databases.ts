import type { EngineContext } from '../context.js';
import { AsnIndex } from '../asn/asn-index.js';
import { dataFilePath } from '../data/data-files.js';
import { loadCountryNames, type CountryNameTable } from '../geo/country-names.js';
import { MmdbFile } from '../geo/mmdb-file.js';
import { loadRegionTable, type RegionTable } from '../geo/region-codes.js';
import { loadCuratedAsns, type CuratedAsnList } from '../security/curated-asns.js';

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

  constructor(
    private readonly dataDir: string | null,
    readonly mode: AccessMode,
  ) {}

  get cityV4(): MmdbFile {
    return (this.cityV4File ??= MmdbFile.open(dataFilePath('cityV4', this.dataDir), { mode: this.mode }));
  }

  get cityV6(): MmdbFile {
    return (this.cityV6File ??= MmdbFile.open(dataFilePath('cityV6', this.dataDir), { mode: this.mode }));
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

  close(): void {
    this.cityV4File?.close();
    this.cityV6File?.close();
    this.asnFile?.close();
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
