/** Writing a whole file so that no reader ever sees half of it. */
import { chmodSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { nodeCrypto } from './lazy-builtins.js';

/**
 * Writes a file through a temp file in the same folder and a rename, so a reader never sees half
 * of it; the mode is set exactly (the umask does not apply). A symlink at `path` is replaced, not
 * followed.
 */
export function writeAtomic(path: string, data: string | Buffer, mode: number): void {
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${nodeCrypto().randomBytes(4).toString('hex')}`);
  try {
    writeFileSync(tmp, data, { flag: 'wx', mode });
    chmodSync(tmp, mode);
    renameSync(tmp, path);
  } catch (error) {
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
    throw error;
  }
}
