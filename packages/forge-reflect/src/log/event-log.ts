/**
 * The event log: `<state dir>/events.db`, SQLite through better-sqlite3 (connection.ts), its
 * schema (migrations.ts) and its statements (queries.ts). Opening one is the only way a command
 * pays for the driver.
 *
 * Opening sets `busy_timeout` BEFORE `journal_mode=WAL` (the other order fails at once under
 * parallel hooks), then migrates the file.
 */
import { UserError } from '../errors.js';
import { ensureStateDir, eventsDbPathOf } from '../state-dir.js';
import { NOT_REGULAR } from '../regular-file.js';
import { BUSY_TIMEOUT_MS, describe, ensurePrivateFile, isBusyError, sqliteDriver, withBusyRetry, type Database } from './connection.js';
import { migrate } from './migrations.js';
import { eventQueries, type EventQueries } from './queries.js';

export { BUSY_TIMEOUT_MS, isBusyError, sqliteDriver, type Database } from './connection.js';
export { MIGRATIONS, SCHEMA_VERSION, type Migration } from './migrations.js';
export type { EventFilter, InsertResult, SegmentMark, SegmentState } from './queries.js';

export interface EventLog extends EventQueries {
  readonly path: string;
  /** The connection, for modules with their own queries (report, metrics). */
  readonly db: Database;
  schemaVersion(): number;
  close(): void;
}

function wrap(db: Database, path: string): EventLog {
  return {
    path,
    db,
    ...eventQueries(db),
    schemaVersion() {
      return Number(db.pragma('user_version', { simple: true }));
    },
    close() {
      if (db.open) db.close();
    },
  };
}

/**
 * Opens (creating when missing) `<state dir>/events.db`, migrated to the current schema.
 * Throws a UserError when the file cannot be opened or is not a usable database.
 */
export function openEventLog(stateDir: string): EventLog {
  ensureStateDir(stateDir);
  const path = eventsDbPathOf(stateDir);
  let db: Database;
  try {
    const Driver = sqliteDriver(); // first: a driver that cannot load leaves no empty log behind
    ensurePrivateFile(path);
    db = new Driver(path, { timeout: BUSY_TIMEOUT_MS });
  } catch (error) {
    if (error instanceof UserError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === NOT_REGULAR || code === 'ENXIO')
      throw new UserError(`the event log ${path} is not a regular file; move it aside (forge-reflect doctor --repair does) and run the command again`);
    throw new UserError(`cannot open the event log ${path} (${describe(error)}); check the file's permissions`);
  }
  try {
    // busy_timeout first: every later statement, journal_mode included, then waits for locks.
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    withBusyRetry(() => db.pragma('journal_mode = WAL'));
    db.pragma('synchronous = FULL'); // spool files are unlinked after commit: a commit must be durable
    migrate(db, path);
  } catch (error) {
    db.close();
    if (error instanceof UserError) throw error;
    if (isBusyError(error)) throw error; // callers (drain) treat busy as "try later"
    const code = String((error as { code?: unknown }).code ?? '');
    if (code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR')) {
      throw new UserError(
        `cannot write the event log ${path} (${describe(error)}): the disk is full or failing; free space and run the command again (the log itself is not known to be damaged)`,
      );
    }
    throw new UserError(`the event log ${path} is not usable (${describe(error)}); run forge-reflect doctor --repair to move it aside and start a fresh log`);
  }
  return wrap(db, path);
}

/**
 * An empty log in memory with the current schema, for a command that only reads when there is no
 * state yet: it reads nothing and creates nothing on disk. `path` names where the log would be.
 */
export function openEmptyEventLog(stateDir: string): EventLog {
  const Driver = sqliteDriver();
  const db = new Driver(':memory:');
  migrate(db, ':memory:');
  return wrap(db, eventsDbPathOf(stateDir));
}
