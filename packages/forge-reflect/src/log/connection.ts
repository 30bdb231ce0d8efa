/**
 * The connection to the event log: better-sqlite3, loaded on first use and only here (commands
 * that never read the log, like `risk`, never pay for it), the busy rules every statement follows,
 * and the private file the log lives in.
 */
import { chmodSync, closeSync, constants, fstatSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { UserError } from '../errors.js';
import { notRegularFile } from '../regular-file.js';

export type Database = BetterSqlite3.Database;

export const BUSY_TIMEOUT_MS = 5_000;

let loaded: typeof BetterSqlite3 | undefined;

/** How to get better-sqlite3's native build (doctor prints it too). */
export const DRIVER_FIX =
  'pnpm 10 skips its build until approved: add "pnpm": {"onlyBuiltDependencies": ["better-sqlite3"]} to package.json and run pnpm install (or run pnpm approve-builds --all); npm or yarn: npm rebuild better-sqlite3';

/** better-sqlite3 whose native build is missing or for another Node (pnpm 10 skips the build unless approved). */
export function isDriverLoadError(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /bindings file|better_sqlite3\.node|NODE_MODULE_VERSION|Cannot find module 'better-sqlite3'/.test(message);
}

/** The loader's message, its first line only ("Could not locate the bindings file", not the paths it tried). */
export function driverErrorLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.replace(/\.?\s*Tried:\s*$/, '');
}

/**
 * better-sqlite3, loaded on first use (also by drain-lock.ts, whose lock is a SQLite lock), its
 * native addon with it. A driver that cannot load is a UserError that names it and the fix, not an
 * internal error.
 */
export function sqliteDriver(): typeof BetterSqlite3 {
  if (loaded) return loaded;
  try {
    const Driver = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
    // The package loads without its addon; the first Database loads the addon (or fails to).
    new Driver(':memory:').close();
    loaded = Driver;
  } catch (error) {
    if (!isDriverLoadError(error)) throw error;
    throw new UserError(`better-sqlite3, the event log's driver, cannot load (${driverErrorLine(error)}): its native build is missing; ${DRIVER_FIX}`);
  }
  return loaded;
}

export function isBusyError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_') || code === 'SQLITE_LOCKED');
}

/** Creates the db file 0600 when missing (SQLite gives -wal and -shm the file's mode). */
export function ensurePrivateFile(path: string): void {
  // Non-blocking: a FIFO in the log's place fails here (ENXIO), or below, instead of holding the
  // command at its open until a reader comes.
  const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (constants.O_NONBLOCK ?? 0), 0o600);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw notRegularFile(path);
    if ((stats.mode & 0o077) !== 0 && typeof process.getuid === 'function' && stats.uid === process.getuid()) chmodSync(path, 0o600);
  } finally {
    closeSync(fd);
  }
}

/** Retries a statement that SQLite refused as busy without calling the busy handler. */
export function withBusyRetry<T>(work: () => T, attempts = 50): T {
  for (let i = 1; ; i++) {
    try {
      return work();
    } catch (error) {
      if (!isBusyError(error) || i >= attempts) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20 + Math.floor(Math.random() * 30));
    }
  }
}

/** An error as one line for a message: its SQLite code, then its text. */
export function describe(error: unknown): string {
  const e = error as { code?: string; message?: string };
  return e.code ? `${e.code}: ${e.message ?? ''}` : String(e.message ?? error);
}
