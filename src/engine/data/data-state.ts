import { mkdirSync, readFileSync } from 'node:fs';
import { writeFileAtomically } from '../../write-file-atomically.js';
import { join } from 'node:path';
import { DATA_DIR_FILES } from './data-files.js';

/** What the data dir holds of one source: enough for a conditional request and for `data status`. */
export interface SourceState {
  name: string;
  /** The URL it was downloaded from. */
  url: string;
  /** Path of the installed file, relative to the data dir. */
  file: string;
  etag: string | null;
  lastModified: string | null;
  /** When this version was downloaded. */
  fetchedAt: string;
  /** When the source was last confirmed current (downloaded, or answered 304 Not Modified). */
  checkedAt: string;
  /** The data's own date: the date the feed states, else Last-Modified, else the download time. */
  updated: string;
  /** The feed's own version marker, the ETag, or null. */
  version: string | null;
  /** Entries the download held (ranges, addresses, AS numbers); null for mmdb files. */
  entries: number | null;
  bytes: number;
  sha256: string;
}

/** The compiled files and the source versions they were built from. */
export interface CompiledState {
  builtAt: string;
  /** source name -> sha256 of the file compiled. */
  inputs: Record<string, string>;
}

export interface DataState {
  formatVersion: 1;
  sources: Record<string, SourceState>;
  compiled: { security?: CompiledState; asn?: CompiledState };
}

export function emptyDataState(): DataState {
  return { formatVersion: 1, sources: {}, compiled: {} };
}

/** Reads the data dir's state file; a missing or unreadable file is an empty state (a fresh data dir). */
export function readDataState(dataDir: string): DataState {
  try {
    const parsed = JSON.parse(readFileSync(join(dataDir, DATA_DIR_FILES.state), 'utf8')) as DataState;
    if (parsed?.formatVersion !== 1 || typeof parsed.sources !== 'object' || parsed.sources === null) return emptyDataState();
    parsed.compiled ??= {};
    return parsed;
  } catch {
    return emptyDataState();
  }
}

/** Writes the state file atomically (src/write-file-atomically.ts): a reader sees the old state or the new one. */
export async function writeDataState(dataDir: string, state: DataState): Promise<void> {
  mkdirSync(dataDir, { recursive: true });
  await writeFileAtomically(join(dataDir, DATA_DIR_FILES.state), `${JSON.stringify(state, null, 2)}\n`);
}
