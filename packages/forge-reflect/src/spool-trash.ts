/**
 * Where a drain puts the spool files it has committed when there are many of them.
 *
 * Removing a small file costs far more than renaming it when the file system frees its blocks
 * slowly: on this project's ext4 (mounted with `discard`) an unlink took ~300 µs and a rename
 * ~20 µs, so unlinking was three quarters of a 10,000-file drain. A drain of many files therefore
 * renames each committed file into a folder of its own (`spool/.drained-<pid>-<ms>-<random>`), and
 * one detached `rm -rf` removes that folder after the drain has returned. Nothing is lost or
 * doubled: a file moves only after its row is committed, and a folder there is never read again.
 * A folder left by a killed `rm` is removed, once it is an hour old, by a later drain that finds
 * files to drain.
 */
import type { ChildProcess } from 'node:child_process';
import { nodeChildProcess } from './lazy-builtins.js';
import { lstatSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export const TRASH_PREFIX = '.drained-';
/** A drain of at least this many files moves them aside instead of unlinking each. */
export const DEFAULT_TRASH_FROM = 256;
/** A trash folder this old was left by an `rm` that did not finish. */
export const STALE_TRASH_MS = 60 * 60 * 1000;

/** Creates a new, private trash folder in the spool and returns its path. */
export function createTrash(spool: string, now: number): string {
  for (let attempt = 0; ; attempt += 1) {
    const dir = join(spool, `${TRASH_PREFIX}${process.pid}-${now}-${Math.random().toString(16).slice(2, 10)}`);
    try {
      mkdirSync(dir, { mode: 0o700 });
      return dir;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw error;
    }
  }
}

/** The trash folders among a spool's entry names that a killed `rm` left (older than STALE_TRASH_MS). */
export function staleTrash(spool: string, names: readonly string[], now: number): string[] {
  const stale: string[] = [];
  for (const name of names) {
    if (!name.startsWith(TRASH_PREFIX)) continue;
    const path = join(spool, name);
    try {
      const stats = lstatSync(path);
      if (stats.isDirectory() && now - stats.mtimeMs > STALE_TRASH_MS) stale.push(path);
    } catch {
      // removed meanwhile
    }
  }
  return stale;
}

/**
 * Removes folders with a detached `rm -rf` that outlives this process (and is not in its process
 * group, so a Ctrl-C of the command does not stop it). Where `rm` cannot be started, removes them
 * here. Returns the child, for a caller that wants to wait.
 */
export function removeInBackground(dirs: readonly string[]): ChildProcess | undefined {
  if (dirs.length === 0) return undefined;
  const removeHere = (): void => {
    try {
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    } catch {
      // left for a later drain (staleTrash): the drain itself is done
    }
  };
  try {
    const child = nodeChildProcess().spawn('rm', ['-rf', '--', ...dirs], { detached: true, stdio: 'ignore' });
    child.on('error', removeHere);
    child.unref();
    return child;
  } catch {
    removeHere();
    return undefined;
  }
}
