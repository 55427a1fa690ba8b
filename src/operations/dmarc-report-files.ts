import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { NetintelError } from '../errors.js';

/** The most files one run reads out of the directories it is given. */
const MAX_DIRECTORY_FILES = 1_000_000;

/**
 * The files of a run in order: each argument, a directory as the regular
 * files (and links to files) under it (sorted, hidden ones left out), none: stdin when it
 * brings data. A name that cannot be read stays, and fails as its file.
 */
export async function reportFiles(args: readonly string[], stdinBringsData: boolean): Promise<string[]> {
  if (args.length === 0) {
    if (!stdinBringsData) throw new NetintelError('usage', 'dmarc-report needs report files: give files or directories, or pipe a report in');
    return ['-'];
  }
  const files: string[] = [];
  for (const arg of args) {
    const info = arg === '-' ? null : await stat(arg).catch(() => null);
    if (info?.isDirectory()) await directoryFiles(arg, files);
    else files.push(arg);
  }
  return files;
}

async function directoryFiles(dir: string, into: string[]): Promise<void> {
  const entries = (await readdir(dir, { withFileTypes: true })).filter((entry) => !entry.name.startsWith('.')).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await directoryFiles(path, into);
    // A link to a file is read as the file; links to directories are not followed (a loop would never end).
    else if (entry.isFile() || (entry.isSymbolicLink() && (await stat(path).catch(() => null))?.isFile())) into.push(path);
    if (into.length > MAX_DIRECTORY_FILES) throw new NetintelError('usage', `more than ${MAX_DIRECTORY_FILES} files under ${dir}: give fewer at once`);
  }
}
