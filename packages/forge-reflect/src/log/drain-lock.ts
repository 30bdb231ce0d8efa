/**
 * The drain lock: SQLite's own exclusive lock on a small database of its own,
 * `spool/.drain-lock.db`, that never holds any data. One drain at a time does the work; a second
 * one that finds the lock held simply returns.
 *
 * The lock is an OS file lock (SQLite takes it with fcntl), so the kernel drops it when its
 * process ends, however it ends: a SIGKILLed drain never blocks the next one, and no pid is ever
 * read or trusted (pids are reused; a lock file holding one blocked drains after a kill).
 *
 * The lock saves work; it is not what keeps the log correct. Should two drains ever overlap,
 * ids are primary keys and inserts are INSERT OR IGNORE.
 *
 * Never open this file with node:fs while a lock may be held in this process: POSIX drops all of
 * a process's locks on a file when ANY of its descriptors for that file is closed.
 */
import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { isBusyError, sqliteDriver, type Database } from './event-log.js';

export const DRAIN_LOCK_NAME = '.drain-lock.db';
/** The pid-holding lock file of earlier versions; removed when seen, never obeyed. */
export const LEGACY_LOCK_NAME = '.drain.lock';

export interface DrainLock {
  readonly path: string;
  /** Lets the lock go (also what the kernel does when the process dies). */
  release(): void;
}

export interface LockOptions {
  /** false: drain without the lock (only for tests proving the log stays right when drains overlap). */
  take?: boolean;
  /**
   * How long to wait for a drain that holds the lock, in ms (default 0: return at once). A command
   * that reads the log waits, so that what a running drain is taking in is there when it reads.
   */
  waitMs?: number;
}

function code(error: unknown): string | undefined {
  return (error as { code?: string } | null)?.code;
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/** Opens the lock database and takes its exclusive lock, waiting up to waitMs; undefined when still held. */
function tryLock(path: string, waitMs: number): Database | undefined {
  let existed = true;
  try {
    const stats = lstatSync(path);
    if (!stats.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: stats.isSymbolicLink() ? 'ELOOP' : 'EISDIR' });
  } catch (error) {
    if (code(error) !== 'ENOENT') throw error;
    existed = false;
  }
  const Driver = sqliteDriver();
  const db = new Driver(path, { timeout: waitMs });
  try {
    if (!existed) chmodSync(path, 0o600); // chmod, not open: see the note at the top
    db.pragma(`busy_timeout = ${waitMs}`);
    db.pragma('journal_mode = MEMORY'); // no -journal file beside the lock
    db.exec('BEGIN EXCLUSIVE');
    return db;
  } catch (error) {
    db.close();
    if (isBusyError(error)) return undefined;
    throw error;
  }
}

/**
 * Every lock this process holds, until released. The database's finalizer would close it (and let
 * the lock go) once nothing refers to it: a caller that drops the handle must not lose the lock.
 */
const held = new Set<Database>();

/** Takes the drain lock of a spool folder, or returns undefined when a live drain holds it (past waitMs). */
export function acquireDrainLock(spoolDir: string, options: LockOptions = {}): DrainLock | undefined {
  const path = join(spoolDir, DRAIN_LOCK_NAME);
  if (options.take === false) return { path, release() {} };
  const waitMs = Math.max(0, Math.trunc(options.waitMs ?? 0));
  let db: Database | undefined;
  try {
    db = tryLock(path, waitMs);
  } catch (error) {
    // Not a database (a stray file under the lock's name): nobody can hold a lock on it. Replace it once.
    if (code(error) !== 'SQLITE_NOTADB' && code(error) !== 'SQLITE_CORRUPT') throw error;
    removeQuietly(path);
    db = tryLock(path, waitMs);
  }
  if (db === undefined) return undefined;
  removeQuietly(join(spoolDir, LEGACY_LOCK_NAME));
  const lockDb = db;
  held.add(lockDb);
  return {
    path,
    release() {
      held.delete(lockDb);
      if (!lockDb.open) return;
      try {
        if (lockDb.inTransaction) lockDb.exec('ROLLBACK');
      } finally {
        lockDb.close();
      }
    },
  };
}
