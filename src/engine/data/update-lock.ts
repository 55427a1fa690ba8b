import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { NetintelError } from '../../errors.js';
import { DATA_DIR_FILES } from './data-files.js';

/**
 * Takes the data dir's update lock (a file created exclusively, holding the
 * owner's pid) and returns its release function. A lock whose owner is gone
 * (an update that was killed) is taken over. Throws `usage` while another
 * live update holds it.
 */
export function acquireUpdateLock(dataDir: string, pid: number, isProcessAlive: (pid: number) => boolean, now: Date): () => void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, DATA_DIR_FILES.lock);
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      let owner = 0;
      try {
        owner = (JSON.parse(readFileSync(path, 'utf8')) as { pid?: number }).pid ?? 0;
      } catch {
        // A lock file cut short by a kill: its owner is gone.
      }
      if (owner > 0 && owner !== pid && isProcessAlive(owner)) {
        throw new NetintelError('usage', `another netintel data update (pid ${owner}) is running on ${dataDir}; wait for it to finish`, {
          details: { data_dir: dataDir, pid: owner, lock: path },
        });
      }
      try {
        unlinkSync(path);
      } catch {
        // Someone else removed it first; try again.
      }
      continue;
    }
    writeSync(fd, JSON.stringify({ pid, startedAt: now.toISOString() }));
    closeSync(fd);
    return () => {
      try {
        unlinkSync(path);
      } catch {
        // Already gone.
      }
    };
  }
  throw new NetintelError('usage', `cannot take the update lock ${path}`, { details: { lock: path } });
}
