/**
 * The drain lock: a file created with O_EXCL in the spool folder, holding `<pid> <ms> <token>`.
 * One drain at a time does the work; a second one that finds the lock held simply returns.
 * A lock is stale (a killed drain's leftover) when its pid is gone or it is older than 60 s; a
 * live drain touches it after every batch, so a long drain keeps it fresh.
 *
 * The lock saves work; it is not what keeps the log correct. Should two drains ever overlap
 * (a stale lock broken by two at once), ids are primary keys and inserts are INSERT OR IGNORE.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, statSync, unlinkSync, utimesSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const DRAIN_LOCK_NAME = '.drain.lock';
export const STALE_LOCK_MS = 60_000;

export interface DrainLock {
  readonly path: string;
  /** Marks the lock as alive (refreshes its mtime). */
  touch(): void;
  /** Removes the lock if it is still this one. */
  release(): void;
}

export interface LockOptions {
  now?: () => number;
  staleMs?: number;
  pidAlive?: (pid: number) => boolean;
}

export function pidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface Holder {
  pid: number | undefined;
  token: string | undefined;
}

function readHolder(path: string): Holder {
  try {
    const [pid, , token] = readFileSync(path, 'utf8').trim().split(/\s+/);
    const n = Number(pid);
    return { pid: Number.isSafeInteger(n) && n > 0 ? n : undefined, token };
  } catch {
    return { pid: undefined, token: undefined };
  }
}

/** Whether an existing lock file is a leftover. Missing counts as stale (free). */
export function isStale(path: string, options: LockOptions = {}): boolean {
  const now = (options.now ?? Date.now)();
  const staleMs = options.staleMs ?? STALE_LOCK_MS;
  let mtimeMs: number;
  try {
    mtimeMs = statSync(path).mtimeMs;
  } catch {
    return true;
  }
  if (now - mtimeMs > staleMs) return true;
  const { pid } = readHolder(path);
  return pid !== undefined && !(options.pidAlive ?? pidAlive)(pid);
}

function tryCreate(path: string, token: string, now: number): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(fd, `${process.pid} ${now} ${token}\n`);
  } catch (error) {
    // A full disk: an empty lock would block every drain for a minute. Remove it, then fail.
    closeSync(fd);
    try {
      unlinkSync(path);
    } catch {
      // already gone
    }
    throw error;
  }
  closeSync(fd);
  return true;
}

/** Takes the drain lock of a spool folder, or returns undefined when a live drain holds it. */
export function acquireDrainLock(spoolDir: string, options: LockOptions = {}): DrainLock | undefined {
  const path = join(spoolDir, DRAIN_LOCK_NAME);
  const token = randomBytes(8).toString('hex');
  const now = (options.now ?? Date.now)();
  if (!tryCreate(path, token, now)) {
    if (!isStale(path, options)) return undefined;
    try {
      unlinkSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (!tryCreate(path, token, now)) return undefined; // another drain broke it first
  }
  return {
    path,
    touch() {
      try {
        const t = new Date();
        utimesSync(path, t, t);
      } catch {
        // gone: a later release is a no-op
      }
    },
    release() {
      if (readHolder(path).token !== token) return;
      try {
        unlinkSync(path);
      } catch {
        // already gone
      }
    },
  };
}
