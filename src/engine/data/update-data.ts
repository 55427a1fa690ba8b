import { createReadStream, createWriteStream, copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, closeSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { NetintelError, toNetintelError } from '../../errors.js';
import { compileAsnIndex } from '../asn/compile-asn-index.js';
import { MmdbFile } from '../dataset/mmdb-file.js';
import type { Outcome } from '../outcome.js';
import { compileSignalIndex, type SignalSourceInput } from '../security/compile-signal-index.js';
import { checkParsedFeed, isoDate, parseFeed, type ParsedFeed } from '../security/feed-formats.js';
import { SignalIndex } from '../security/signal-index.js';
import { compileRpkiIndex } from '../rpki/compile-rpki-index.js';
import { RpkiIndex } from '../rpki/rpki-index.js';
import { MAX_VRP_JSON_BYTES, parseVrpJson } from '../rpki/vrp-json.js';
import { bundledAsnCsvPath, DATA_DIR_FILES, DATA_FILES } from './data-files.js';
import type { DataSource, SourceType } from './data-sources.js';
import { readDataState, writeDataState, type DataState, type SourceState } from './data-state.js';
import { fetchSource, type DownloadNetwork } from './fetch-source.js';
import { acquireUpdateLock } from './update-lock.js';
import { bootstrapDataDirFile, forgetBootstraps, parseBootstrap } from '../rdap/rdap-bootstrap.js';

/** What `netintel data update` did for one source. */
export interface SourceUpdateResult {
  kind: 'data-update';
  source: string;
  type: SourceType;
  /** `updated`: a new version was validated and installed; `not_modified`: the installed one is current. */
  status: 'updated' | 'not_modified';
  url: string;
  /** The installed file. */
  path: string;
  version: string | null;
  /** The data's own date (ISO 8601). */
  updated: string | null;
  entries: number | null;
  /** Entries of the version it replaced, or null. */
  previous_entries: number | null;
  bytes: number | null;
  duration_ms: number;
}

export type UpdateProgress =
  | { type: 'start'; source: string; url: string }
  | { type: 'bytes'; source: string; received: number; total: number | null }
  | { type: 'done'; source: string; status: 'updated' | 'not_modified' | 'failed'; message: string }
  | { type: 'compile'; what: 'asn-index' | 'security-index' | 'rpki-index' };

export interface UpdateDataOptions {
  dataDir: string;
  /** Every known source (the compiled indexes are built from all installed feeds). */
  sources: readonly DataSource[];
  /** The sources to update now. */
  selected: readonly DataSource[];
  /** Download without conditional headers and accept a download that shrank a lot. */
  force: boolean;
  /** Abandon a download silent for this long, in milliseconds. */
  idleTimeoutMs: number;
  now: () => Date;
  /** This process's id and a liveness check, for the update lock. */
  pid: number;
  isProcessAlive: (pid: number) => boolean;
  userAgent: string;
  /** The route of http(s) downloads (the caller's proxy settings); direct when omitted. */
  network?: DownloadNetwork;
  /** Downloads at once. Default 4. */
  concurrency?: number;
  /** Largest accepted download, in bytes. Default 512 MiB. */
  maxBytes?: number;
  onProgress?: (event: UpdateProgress) => void;
}

/** Below this share of the installed version's entries a download is suspicious (unless forced). */
const MIN_SHARE_OF_PREVIOUS = 0.2;
const DEFAULT_MAX_BYTES = 512 * 2 ** 20;
const WORK_DIR_PREFIX = '.update-';
/** The name of the compile step's outcome when it fails (not a source). */
export const SECURITY_INDEX_STEP = 'security-index';

/** A downloaded, validated version waiting to be installed. */
interface Pending {
  source: DataSource;
  started: number;
  file: string;
  state: SourceState;
  parsed: ParsedFeed | null;
  /** rpki: the index compiled from the download, installed with it. */
  index: string | null;
}

/**
 * Updates the selected sources in the data dir, each on its own: download
 * (conditional), validate (an mmdb opens with the expected database type and
 * answers a probe; a list parses, is not mostly garbage, and is not
 * suspiciously small), then swap in atomically (rename), keeping the
 * replaced file under `previous/`. ASN CSVs are compiled into asn.idx and
 * feeds into security.idx the same way. A source that fails leaves its
 * installed version untouched and does not stop the others; a killed update
 * leaves every installed file whole (work happens in a scratch dir, and
 * each file appears only by rename). Returns one outcome per selected source
 * (plus one for the signal index when compiling it fails).
 */
export async function updateData(options: UpdateDataOptions): Promise<Array<Outcome<SourceUpdateResult>>> {
  const { dataDir } = options;
  mkdirSync(dataDir, { recursive: true });
  const release = acquireUpdateLock(dataDir, options.pid, options.isProcessAlive, options.now());
  try {
    // Work dirs left by a killed update (the lock is ours, so no live update owns them).
    for (const name of readdirSync(dataDir)) if (name.startsWith(WORK_DIR_PREFIX)) rmSync(join(dataDir, name), { recursive: true, force: true });
    const work = mkdtempSync(join(dataDir, WORK_DIR_PREFIX));
    try {
      return await runUpdate(options, work);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  } finally {
    release();
  }
}

/** What the steps of one update share: the state they change and the outcomes they record. */
interface UpdateRun {
  readonly options: UpdateDataOptions;
  readonly work: string;
  readonly state: DataState;
  readonly results: Map<string, Outcome<SourceUpdateResult>>;
  /** Downloads validated and waiting to be installed. */
  readonly pending: Pending[];
  readonly progress: (event: UpdateProgress) => void;
}

async function runUpdate(options: UpdateDataOptions, work: string): Promise<Array<Outcome<SourceUpdateResult>>> {
  const run: UpdateRun = {
    options,
    work,
    state: readDataState(options.dataDir),
    results: new Map(),
    pending: [],
    progress: options.onProgress ?? (() => {}),
  };
  const { dataDir } = options;
  const { state, results, pending } = run;

  // Download and validate, a few sources at a time.
  await forEachLimited(options.selected, options.concurrency ?? 4, (source) => downloadSource(run, source));

  await installAsnSources(run);

  for (const item of pending) if (item.source.type !== 'asn-csv') await commit(options, state, item, results);
  if ([...results.values()].some((outcome) => outcome.ok)) await writeDataState(dataDir, state);

  // The signal index, from every installed feed, when a feed changed or the index does not match them.
  let indexFailure: Outcome<SourceUpdateResult> | null = null;
  try {
    await rebuildSignalIndex(options, state, pending, work, run.progress);
  } catch (error) {
    const failure = toNetintelError(error);
    indexFailure = { ok: false, query: SECURITY_INDEX_STEP, error: new NetintelError(failure.code, `${SECURITY_INDEX_STEP}: ${failure.message}`, { cause: failure }) };
  }

  const ordered = options.selected.map((source) => results.get(source.name)!).filter(Boolean);
  return indexFailure ? [...ordered, indexFailure] : ordered;
}

/** Records a source's failure, its message prefixed by the source's name once. */
function failSource(run: UpdateRun, source: DataSource, error: unknown): void {
  const failure = toNetintelError(error);
  const named = failure.message.startsWith(`${source.name}:`) ? failure : new NetintelError(failure.code, `${source.name}: ${failure.message}`, { cause: failure, details: { ...failure.details, source: source.name } });
  run.results.set(source.name, { ok: false, query: source.name, error: named });
  run.progress({ type: 'done', source: source.name, status: 'failed', message: named.message });
}

/** Downloads one source (conditionally) and validates it: a new version joins the pending ones, an unchanged one is recorded as such. */
async function downloadSource(run: UpdateRun, source: DataSource): Promise<void> {
  const { options, state, progress } = run;
  const { dataDir } = options;
  const started = Date.now();
  try {
    if (source.url === null) {
      throw new NetintelError('usage', `${source.name}: no URL to download from; give one with --feed ${source.name}=URL or in the config file`, {
        details: { source: source.name },
      });
    }
    progress({ type: 'start', source: source.name, url: source.url });
    const previous = state.sources[source.name] ?? null;
    const sameUrl = previous !== null && previous.url === source.url && existsSync(join(dataDir, previous.file)) && (source.type !== 'rpki' || rpkiIndexUsable(dataDir));
    const download = join(run.work, `${source.name}.download`);
    const fetched = await fetchSource(source.url, download, sameUrl ? { etag: previous.etag, lastModified: previous.lastModified } : { etag: null, lastModified: null }, {
      idleTimeoutMs: options.idleTimeoutMs,
      maxBytes: Math.min(options.maxBytes ?? DEFAULT_MAX_BYTES, source.type === 'rpki' ? MAX_VRP_JSON_BYTES : Infinity),
      userAgent: options.userAgent,
      force: options.force,
      ...(options.network ? { network: options.network } : {}),
      onBytes: (received, total) => progress({ type: 'bytes', source: source.name, received, total }),
    });
    const now = options.now().toISOString();
    if (fetched.status === 'not_modified') {
      const installed = previous!;
      installed.checkedAt = now;
      run.results.set(source.name, {
        ok: true,
        query: source.name,
        value: resultOf(source, 'not_modified', installed, dataDir, installed.entries, Date.now() - started),
      });
      progress({ type: 'done', source: source.name, status: 'not_modified', message: 'not modified' });
      return;
    }
    const file = await gunzipIfCompressed(download);
    const stateEntry: SourceState = {
      name: source.name,
      url: source.url,
      file: installedFile(source),
      etag: fetched.etag,
      lastModified: fetched.lastModified,
      fetchedAt: now,
      checkedAt: now,
      updated: httpDate(fetched.lastModified) ?? now,
      version: null,
      entries: null,
      bytes: fetched.bytes,
      sha256: fetched.sha256,
    };
    const parsed = validateDownload(options, source, file, stateEntry, previous);
    const index = source.type === 'rpki' ? compileRpkiDownload(run, source, file, stateEntry, previous) : null;
    run.pending.push({ source, started, file, state: stateEntry, parsed, index });
  } catch (error) {
    failSource(run, source, error);
  }
}

/**
 * Checks a new download (an mmdb opens and answers; a feed parses and is not suspiciously small) and
 * fills in the date, version and entries it states. Returns the parsed feed, or null for other types.
 */
function validateDownload(options: UpdateDataOptions, source: DataSource, file: string, stateEntry: SourceState, previous: SourceState | null): ParsedFeed | null {
  if (source.type === 'mmdb') {
    const checked = checkMmdb(source, file);
    stateEntry.updated = checked.updated;
    stateEntry.version = checked.version;
    return null;
  }
  if (source.type === 'rdap-bootstrap') {
    const checked = checkBootstrap(source, file);
    stateEntry.entries = checked.entries;
    stateEntry.updated = checked.publication ?? stateEntry.updated;
    stateEntry.version = checked.publication === null ? stateEntry.version : `publication ${checked.publication.slice(0, 10)}`;
    return null;
  }
  if (source.type !== 'feed') return null;
  const parsed = parseFeed(source.format!, readFileSync(file, 'utf8'), source.name);
  checkParsedFeed(source.name, parsed, {
    minEntries: source.minEntries,
    previousEntries: options.force ? null : previous?.entries ?? null,
    minShareOfPrevious: MIN_SHARE_OF_PREVIOUS,
  });
  stateEntry.entries = parsed.entries.count;
  stateEntry.updated = parsed.date ?? stateEntry.updated;
  stateEntry.version = parsed.version ?? stateEntry.version;
  return parsed;
}

/**
 * A VRP export (rpki-client or Routinator JSON): parsed whole (a bad entry
 * refuses it), held to the source's minimum and to a share of the installed
 * version's payloads, compiled into the RPKI index and checked. Returns the
 * index's path in the work dir, installed with the export.
 */
function compileRpkiDownload(run: UpdateRun, source: DataSource, file: string, stateEntry: SourceState, previous: SourceState | null): string {
  const bytes = statSync(file).size;
  if (bytes > MAX_VRP_JSON_BYTES) {
    throw new NetintelError('data_unavailable', `${source.name}: rejected the download: ${bytes} bytes, more than the ${MAX_VRP_JSON_BYTES} a VRP export may have`, { details: { source: source.name } });
  }
  const set = parseVrpJson(readFileSync(file, 'utf8'), source.name);
  const count = set.vrps.length;
  const fail = (why: string): never => {
    throw new NetintelError('data_unavailable', `${source.name}: rejected the download: ${why}`, { details: { source: source.name, entries: count } });
  };
  if (count < source.minEntries) fail(`${count} payloads, fewer than the ${source.minEntries} a real export of this source holds (truncated or empty?)`);
  const previousCount = run.options.force ? null : (previous?.entries ?? null);
  if (previousCount !== null && previousCount > 0 && count < previousCount * MIN_SHARE_OF_PREVIOUS) {
    fail(`${count} payloads, under ${MIN_SHARE_OF_PREVIOUS * 100}% of the ${previousCount} installed (use --force to accept)`);
  }
  run.progress({ type: 'compile', what: 'rpki-index' });
  const updated = set.generated ?? stateEntry.updated;
  const compiled = compileRpkiIndex(set.vrps, { builtAt: run.options.now(), updated, source: source.url });
  const out = join(run.work, `${source.name}.idx`);
  RpkiIndex.fromBytes(out, compiled.bytes).verify();
  writeFileSync(out, compiled.bytes);
  stateEntry.entries = count;
  stateEntry.updated = updated;
  return out;
}

/**
 * Whether the installed RPKI index opens in this version's format: when it
 * is missing or from another version, the export is downloaded again
 * unconditionally, since a 304 would leave lookups without an index.
 */
function rpkiIndexUsable(dataDir: string): boolean {
  try {
    RpkiIndex.open(join(dataDir, DATA_DIR_FILES.rpkiIndex)).close();
    return true;
  } catch {
    return false;
  }
}

/** ASN CSVs: both families compile into one asn.idx; a family not downloaded now comes from the data dir or the bundle. */
async function installAsnSources(run: UpdateRun): Promise<void> {
  const { options, state, work, results } = run;
  const { dataDir } = options;
  const asnPending = run.pending.filter((item) => item.source.type === 'asn-csv');
  if (asnPending.length === 0) return;
  run.progress({ type: 'compile', what: 'asn-index' });
  try {
    const csvOf = (version: 4 | 6): string => {
      const fresh = asnPending.find((item) => item.source.ipVersion === version);
      if (fresh) return fresh.file;
      const installed = Object.values(state.sources).find((entry) => entry.file === `sources/asn-ipv${version}.csv`);
      return installed && existsSync(join(dataDir, installed.file)) ? join(dataDir, installed.file) : bundledAsnCsvPath(version);
    };
    const minOf = (version: 4 | 6) => asnPending.find((item) => item.source.ipVersion === version)?.source.minEntries ?? 0;
    const newest = asnPending.map((item) => item.state.updated).sort().at(-1)!;
    const out = join(work, DATA_FILES.asnIndex);
    const compiled = await compileAsnIndex({
      v4Csv: csvOf(4),
      v6Csv: csvOf(6),
      outFile: out,
      source: asnPending.map((item) => item.source.url).join(' '),
      sourceVersion: newest,
      builtAt: options.now(),
      minRanges: { v4: minOf(4), v6: minOf(6) },
    });
    for (const item of asnPending) item.state.entries = item.source.ipVersion === 4 ? compiled.v4Ranges : compiled.v6Ranges;
    for (const item of asnPending) await commit(options, state, item, results);
    install(dataDir, DATA_FILES.asnIndex, out);
    state.compiled.asn = { builtAt: options.now().toISOString(), inputs: Object.fromEntries(asnPending.map((item) => [item.source.name, item.state.sha256])) };
    await writeDataState(dataDir, state);
  } catch (error) {
    for (const item of asnPending) failSource(run, item.source, error);
  }
}

async function commit(options: UpdateDataOptions, state: DataState, item: Pending, results: Map<string, Outcome<SourceUpdateResult>>): Promise<void> {
  const { dataDir } = options;
  const previousEntries = state.sources[item.source.name]?.entries ?? null;
  if (item.index !== null) install(dataDir, DATA_DIR_FILES.rpkiIndex, item.index);
  install(dataDir, item.state.file, item.file);
  // This process may look up RDAP targets after the update (a library caller): it reads the new file.
  if (item.source.type === 'rdap-bootstrap') forgetBootstraps();
  state.sources[item.source.name] = item.state;
  await writeDataState(dataDir, state);
  results.set(item.source.name, {
    ok: true,
    query: item.source.name,
    value: resultOf(item.source, 'updated', item.state, dataDir, previousEntries, Date.now() - item.started),
  });
  options.onProgress?.({ type: 'done', source: item.source.name, status: 'updated', message: `updated${item.state.entries === null ? '' : `, ${item.state.entries} entries`}` });
}

function resultOf(source: DataSource, status: 'updated' | 'not_modified', entry: SourceState, dataDir: string, previousEntries: number | null, durationMs: number): SourceUpdateResult {
  return {
    kind: 'data-update',
    source: source.name,
    type: source.type,
    status,
    url: entry.url,
    path: join(dataDir, entry.file),
    version: entry.version,
    updated: entry.updated,
    entries: entry.entries,
    previous_entries: previousEntries,
    bytes: entry.bytes,
    duration_ms: durationMs,
  };
}

/** Where a source's file lives, relative to the data dir. */
export function installedFile(source: DataSource): string {
  if (source.type === 'mmdb') return DATA_FILES[source.file!];
  if (source.type === 'asn-csv') return `sources/asn-ipv${source.ipVersion}.csv`;
  if (source.type === 'rdap-bootstrap') return bootstrapDataDirFile(source.rdapRegistry!);
  if (source.type === 'rpki') return `sources/${source.name}.json`;
  const extension = source.format === 'cidr-list' || source.format === 'proxy-list' || source.format === 'tor-exit-addresses' || source.format === 'asn-list' ? 'txt' : 'json';
  return `sources/${source.name}.${extension}`;
}

/**
 * Moves `from` to `relative` in the data dir by rename (readers see the old
 * file or the new one, never a partial one), after linking the old file to
 * `previous/relative` (the version kept for a manual rollback).
 */
function install(dataDir: string, relative: string, from: string): void {
  const target = join(dataDir, relative);
  mkdirSync(dirname(target), { recursive: true });
  if (existsSync(target)) {
    const kept = join(dataDir, 'previous', relative);
    mkdirSync(dirname(kept), { recursive: true });
    const temp = `${kept}.tmp`;
    rmSync(temp, { force: true });
    try {
      linkSync(target, temp);
    } catch {
      copyFileSync(target, temp);
    }
    renameSync(temp, kept);
  }
  renameSync(from, target);
}

async function rebuildSignalIndex(
  options: UpdateDataOptions,
  state: DataState,
  pending: readonly Pending[],
  work: string,
  progress: (event: UpdateProgress) => void,
): Promise<void> {
  const { dataDir } = options;
  const feeds = options.sources.filter((source) => source.type === 'feed' && state.sources[source.name] && existsSync(join(dataDir, state.sources[source.name]!.file)));
  const inputs = Object.fromEntries(feeds.map((source) => [source.name, state.sources[source.name]!.sha256]));
  const indexPath = join(dataDir, DATA_DIR_FILES.securityIndex);
  const built = state.compiled.security?.inputs ?? null;
  const same = built !== null && JSON.stringify(Object.entries(built).sort()) === JSON.stringify(Object.entries(inputs).sort());
  if (feeds.length === 0 || (same && existsSync(indexPath))) return;
  progress({ type: 'compile', what: 'security-index' });
  const fresh = new Map(pending.filter((item) => item.parsed !== null).map((item) => [item.source.name, item.parsed!]));
  const compileInputs: SignalSourceInput[] = [];
  for (const source of feeds) {
    const entry = state.sources[source.name]!;
    let parsed = fresh.get(source.name);
    if (parsed === undefined || entry.sha256 !== pending.find((item) => item.source.name === source.name)?.state.sha256) {
      parsed = parseFeed(source.format!, readFileSync(join(dataDir, entry.file), 'utf8'), source.name);
    }
    compileInputs.push({
      meta: {
        name: source.name,
        signal: source.signal!,
        provider: source.provider,
        updated: entry.updated,
        version: entry.version,
        licence: source.licence,
        attribution: source.attribution,
      },
      entries: parsed.entries,
    });
  }
  const compiled = compileSignalIndex(compileInputs, options.now());
  const check = SignalIndex.fromBytes(indexPath, compiled.bytes);
  check.verify();
  const out = join(work, DATA_DIR_FILES.securityIndex);
  writeFileSync(out, compiled.bytes);
  install(dataDir, DATA_DIR_FILES.securityIndex, out);
  state.compiled.security = { builtAt: compiled.meta.builtAt, inputs };
  await writeDataState(dataDir, state);
}

/** An mmdb download must open, be of the expected database type and IP version, and answer a probe address. */
function checkMmdb(source: DataSource, path: string): { updated: string; version: string } {
  let db: MmdbFile;
  try {
    db = MmdbFile.open(path, { mode: 'pread' });
  } catch (error) {
    throw new NetintelError('data_unavailable', `${source.name}: rejected the download: not a readable mmdb file (${toNetintelError(error).message})`, {
      cause: error,
      details: { source: source.name },
    });
  }
  try {
    const meta = db.metadata;
    if (source.databaseType !== null && meta.databaseType !== source.databaseType) {
      throw new NetintelError('data_unavailable', `${source.name}: rejected the download: database type "${meta.databaseType}", expected "${source.databaseType}"`, {
        details: { source: source.name, database_type: meta.databaseType },
      });
    }
    if (meta.ipVersion !== source.ipVersion && !(source.ipVersion === 4 && meta.ipVersion === 6)) {
      throw new NetintelError('data_unavailable', `${source.name}: rejected the download: IP version ${meta.ipVersion}, expected ${source.ipVersion}`, {
        details: { source: source.name },
      });
    }
    // 8.8.8.8 and 2001:4860:4860::8888 are in every release of a world-wide city database.
    const probe =
      source.ipVersion === 4
        ? db.findOffsetV4(0x08080808)
        : db.findOffset(Uint8Array.from([0x20, 0x01, 0x48, 0x60, 0x48, 0x60, 0, 0, 0, 0, 0, 0, 0, 0, 0x88, 0x88]));
    const record = probe < 0 ? null : (db.decode(probe) as Record<string, unknown> | null);
    if (record === null || typeof record !== 'object' || typeof record.country_code !== 'string') {
      throw new NetintelError('data_unavailable', `${source.name}: rejected the download: no country for the probe address (not a city database?)`, {
        details: { source: source.name },
      });
    }
    const built = meta.buildEpoch;
    const updated = built instanceof Date && !Number.isNaN(built.getTime()) ? built.toISOString().replace('.000Z', 'Z') : new Date(0).toISOString();
    return { updated, version: `build ${updated.slice(0, 10)}` };
  } finally {
    db.close();
  }
}

/** A bootstrap download must be an RFC 9224 file with at least `minEntries` entries in services that have an HTTPS URL. */
function checkBootstrap(source: DataSource, path: string): { entries: number; publication: string | null } {
  let file;
  try {
    file = parseBootstrap(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new NetintelError('data_unavailable', `${source.name}: rejected the download: not an RDAP bootstrap file (${(error as Error).message})`, { cause: error, details: { source: source.name } });
  }
  const entries = file.services.filter((service) => service.urls.some((url) => url.toLowerCase().startsWith('https://'))).reduce((sum, service) => sum + service.entries.length, 0);
  if (entries < Math.max(1, source.minEntries)) {
    throw new NetintelError('data_unavailable', `${source.name}: rejected the download: ${entries} entries with an HTTPS server, expected at least ${Math.max(1, source.minEntries)}`, {
      details: { source: source.name, entries },
    });
  }
  const publication = file.publication !== null && !Number.isNaN(Date.parse(file.publication)) ? new Date(Date.parse(file.publication)).toISOString().replace('.000Z', 'Z') : null;
  return { entries, publication };
}

/** A gzip download (1f 8b) is inflated to a sibling file, which is returned; anything else comes back as is. */
async function gunzipIfCompressed(path: string): Promise<string> {
  const head = Buffer.alloc(2);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, head, 0, 2, 0);
  } finally {
    closeSync(fd);
  }
  if (head[0] !== 0x1f || head[1] !== 0x8b) return path;
  const out = `${path}.inflated`;
  try {
    await pipeline(createReadStream(path), createGunzip(), createWriteStream(out, { flags: 'wx' }));
  } catch (error) {
    throw new NetintelError('data_unavailable', `rejected the download: broken gzip data (${(error as Error).message})`, { cause: error });
  }
  return out;
}

/** An HTTP date (Last-Modified) as ISO 8601, or null. */
function httpDate(value: string | null): string | null {
  if (value === null) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? isoDate(value) : date.toISOString().replace('.000Z', 'Z');
}

async function forEachLimited<T>(items: readonly T[], limit: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await run(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
