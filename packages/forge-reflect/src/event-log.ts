/**
 * The event log: `<state dir>/events.db`, SQLite through better-sqlite3. The only module that
 * loads better-sqlite3, and only when a log is opened (commands that never read the log, like
 * `risk`, never pay for it).
 *
 * Opening sets `busy_timeout` BEFORE `journal_mode=WAL` (the other order fails at once under
 * parallel hooks), then brings the schema up to date by `PRAGMA user_version` inside one
 * `BEGIN IMMEDIATE` transaction, so two processes opening a new file migrate it once.
 */
import { chmodSync, closeSync, constants, fstatSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { UserError } from './errors.js';
import type { EventType, Runtime } from './runtime-shapes.js';
import { ensureStateDir, eventsDbPathOf } from './state-dir.js';
import { backfillRollups, ROLLUP_TABLES_SQL, RollupBatch } from './loops/metrics-rollup.js';
import { NOT_REGULAR, notRegularFile } from './regular-file.js';

export type Database = BetterSqlite3.Database;

/** One row of `events`. `payload` is JSON text (a JSON string for a truncated, unparseable payload). */
export interface EventRow {
  /** The spool file's name without `.event`: `<received_us>-<pid>-<rand>`. */
  id: string;
  session_id: string | null;
  agent_id: string | null;
  /** ISO-8601 UTC with microseconds, e.g. 2025-11-22T10:15:00.123456Z. */
  ts: string;
  runtime: Runtime;
  type: EventType;
  hook_event: string | null;
  tool_name: string | null;
  tool_use_id: string | null;
  duration_ms: number | null;
  cwd: string | null;
  payload: string;
  truncated: 0 | 1;
}

export const BUSY_TIMEOUT_MS = 5_000;

/**
 * A schema migration: SQL, or a function for one that needs JS (a backfill). Either runs inside
 * the one transaction that migrates the file.
 */
export type Migration = string | ((db: Database) => void);

/** Schema migrations; entry i takes user_version i to i + 1. Append only. */
export const MIGRATIONS: readonly Migration[] = [
  `CREATE TABLE events (
     id          TEXT PRIMARY KEY NOT NULL,
     session_id  TEXT,
     agent_id    TEXT,
     ts          TEXT NOT NULL,
     runtime     TEXT NOT NULL,
     type        TEXT NOT NULL,
     hook_event  TEXT,
     tool_name   TEXT,
     tool_use_id TEXT,
     duration_ms INTEGER,
     cwd         TEXT,
     payload     TEXT NOT NULL,
     truncated   INTEGER NOT NULL DEFAULT 0 CHECK (truncated IN (0, 1))
   );
   CREATE INDEX events_by_session ON events (session_id, ts);
   CREATE INDEX events_by_type    ON events (type, ts);
   CREATE INDEX events_by_tool    ON events (tool_name COLLATE NOCASE, ts);
   CREATE INDEX events_by_ts      ON events (ts);`,
  // 2: the sidecar index of `report` (report/sidecar-index.ts), refreshed by path, size and mtime.
  `CREATE TABLE sidecars (
     path         TEXT PRIMARY KEY NOT NULL,
     dir          TEXT NOT NULL,
     size         INTEGER NOT NULL,
     mtime_ns     TEXT NOT NULL,
     valid        INTEGER NOT NULL CHECK (valid IN (0, 1)),
     error        TEXT,
     ts           TEXT,
     task_ref     TEXT,
     agent        TEXT,
     session_id   TEXT,
     repo         TEXT,
     surface      TEXT,
     score        REAL,
     needs_review INTEGER,
     confidence   REAL,
     degraded     INTEGER,
     mode         TEXT,
     attempt      INTEGER,
     files        TEXT NOT NULL
   );
   CREATE INDEX sidecars_by_dir_ts ON sidecars (dir, ts);`,
  // 3: outcomes, what turned out true for a task (forge-reflect outcome): the labels calibration needs.
  `CREATE TABLE outcomes (
     id          INTEGER PRIMARY KEY AUTOINCREMENT,
     task_ref    TEXT NOT NULL,
     correct     INTEGER NOT NULL CHECK (correct IN (0, 1)),
     source      TEXT NOT NULL CHECK (source IN ('ci', 'human', 'revert', 'production')),
     at          TEXT NOT NULL,
     note        TEXT,
     recorded_at TEXT NOT NULL
   );
   CREATE INDEX outcomes_by_task ON outcomes (task_ref, at);`,
  // 4: the bounce loop, learned patterns and metrics snapshots (src/loops/). Times are ISO UTC with microseconds.
  `CREATE TABLE checks (
     id             INTEGER PRIMARY KEY AUTOINCREMENT,
     task_ref       TEXT NOT NULL,
     phase          TEXT NOT NULL CHECK (phase IN ('review', 'testing', 'feedback')),
     at             TEXT NOT NULL,
     decision       TEXT NOT NULL CHECK (decision IN ('approve', 'bounce', 'escalate')),
     rule           TEXT NOT NULL,
     total_items    INTEGER NOT NULL,
     actionable     INTEGER NOT NULL,
     passed_tests   TEXT,
     failed_tests   TEXT
   );
   CREATE INDEX checks_by_task ON checks (task_ref, phase, id);
   CREATE INDEX checks_by_at   ON checks (at);
   CREATE TABLE bounces (
     id         INTEGER PRIMARY KEY AUTOINCREMENT,
     task_ref   TEXT NOT NULL,
     phase      TEXT NOT NULL CHECK (phase IN ('review', 'testing', 'feedback')),
     number     INTEGER NOT NULL CHECK (number >= 1),
     total_items INTEGER NOT NULL,
     actionable INTEGER NOT NULL,
     resolved   INTEGER CHECK (resolved IN (0, 1)),
     at         TEXT NOT NULL,
     UNIQUE (task_ref, phase, number)
   );
   CREATE INDEX bounces_by_at ON bounces (at);
   CREATE TABLE learnings (
     id            INTEGER PRIMARY KEY AUTOINCREMENT,
     type          TEXT NOT NULL CHECK (type IN ('episodic', 'semantic', 'procedural')),
     content       TEXT NOT NULL,
     context       TEXT NOT NULL,
     tags          TEXT NOT NULL,
     source        TEXT NOT NULL,
     confidence    REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
     status        TEXT NOT NULL CHECK (status IN ('active', 'archived')),
     created_at    TEXT NOT NULL,
     accessed_at   TEXT NOT NULL,
     decay_weeks   INTEGER NOT NULL DEFAULT 0,
     archived_at   TEXT,
     archive_reason TEXT
   );
   CREATE TABLE learning_actions (
     id          INTEGER PRIMARY KEY AUTOINCREMENT,
     learning_id INTEGER NOT NULL,
     action      TEXT NOT NULL,
     at          TEXT NOT NULL
   );
   CREATE INDEX learning_actions_by_at ON learning_actions (at);
   CREATE TABLE metrics_snapshots (
     id      INTEGER PRIMARY KEY AUTOINCREMENT,
     at      TEXT NOT NULL,
     days    INTEGER NOT NULL,
     metrics TEXT NOT NULL
   );`,
  // 5: when each sidecar folder was last listed, so a warm index skips a folder that did not change.
  `CREATE TABLE sidecar_dirs (
     dir          TEXT PRIMARY KEY NOT NULL,
     mtime_ns     TEXT NOT NULL,
     listed_at_ms REAL NOT NULL
   );`,
  // 6: the rollups `metrics` reads (loops/metrics-rollup.ts), kept by insertBatch, filled from the events already logged.
  (db) => {
    db.exec(ROLLUP_TABLES_SQL);
    backfillRollups(db);
  },
  // 7: how far each sealed segment of the spool log has been drained (spool-log.ts), moved on in the
  // transaction that inserts its records, so a record is never logged twice or skipped.
  `CREATE TABLE spool_segments (name TEXT PRIMARY KEY NOT NULL, done INTEGER NOT NULL) WITHOUT ROWID;`,
  // 8: the report's totals (report/sidecar-index.ts queryTotals, queryInvalid) from an index alone,
  // grouped in its order: 100,000 sidecars summed without reading a row of the table or sorting
  // (~16 ms; ~60 ms with a sort, ~75 ms reading the rows). It costs a cold index ~10% of its inserts.
  `CREATE INDEX sidecars_totals ON sidecars (dir, valid, surface, needs_review, degraded, confidence, ts);`,
  // 9: how many sidecars a folder held when it was last listed, so a warm index counts none.
  `ALTER TABLE sidecar_dirs ADD COLUMN files INTEGER;`,
  // 10: the sidecar index keyed by (folder id, file name) instead of the full path, with the folder's
  // path once in sidecar_dirs instead of in every row and in both indexes: a cold index of 100,000
  // sidecars writes ~40% fewer bytes and inserts faster. The index is a cache of the files, so it is
  // dropped and rebuilt by the next report. Readers use the view sidecar_files (path, dir, columns).
  // A folder keeps its id for good (marks are updated in place, never replaced).
  `DROP TABLE sidecars;
   DROP TABLE sidecar_dirs;
   CREATE TABLE sidecar_dirs (
     id           INTEGER PRIMARY KEY,
     dir          TEXT UNIQUE NOT NULL,
     mtime_ns     TEXT,
     listed_at_ms REAL,
     files        INTEGER
   );
   CREATE TABLE sidecars (
     dir_id       INTEGER NOT NULL,
     name         TEXT NOT NULL,
     size         INTEGER NOT NULL,
     mtime_ns     TEXT NOT NULL,
     valid        INTEGER NOT NULL CHECK (valid IN (0, 1)),
     error        TEXT,
     ts           TEXT,
     task_ref     TEXT,
     agent        TEXT,
     session_id   TEXT,
     repo         TEXT,
     surface      TEXT,
     score        REAL,
     needs_review INTEGER,
     confidence   REAL,
     degraded     INTEGER,
     mode         TEXT,
     attempt      INTEGER,
     files        TEXT NOT NULL,
     PRIMARY KEY (dir_id, name)
   );
   CREATE INDEX sidecars_by_dir_ts ON sidecars (dir_id, ts);
   CREATE INDEX sidecars_totals ON sidecars (dir_id, valid, surface, needs_review, degraded, confidence, ts);
   CREATE VIEW sidecar_files AS
     SELECT rtrim(d.dir, '/') || '/' || s.name AS path, d.dir AS dir, s.*
     FROM sidecar_dirs d JOIN sidecars s ON s.dir_id = d.id;`,
  // 11: how much of each segment's drained bytes are overwritten with zeros (spool-scrub.ts), so a
  // drain killed between its commit and the overwrite leaves the next drain the range to wipe. A
  // segment an earlier version drained starts at 0: the next drain wipes all it committed.
  `ALTER TABLE spool_segments ADD COLUMN scrubbed INTEGER NOT NULL DEFAULT 0;`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

export interface EventFilter {
  /** A session id or a prefix of one. */
  session?: string;
  type?: EventType;
  /** A tool name, any case. */
  tool?: string;
  /** The runtime that sent the event (claude-code, codex, gemini, unknown, …). */
  runtime?: string;
  /** ISO-8601 in the log's format; events at or after it. */
  since?: string;
  /** The most recent N matching events (returned oldest first). */
  limit?: number;
}

/** A segment of the spool log drained up to byte `done` (recorded with the batch that took its records). */
export interface SegmentMark {
  name: string;
  done: number;
}

/** What the log knows of a segment: drained up to byte `done`, of which `[0, scrubbed)` is zeros on disk. */
export interface SegmentState {
  done: number;
  scrubbed: number;
}

export interface InsertResult {
  inserted: number;
  ignored: number;
}

export interface EventLog {
  readonly path: string;
  /** The connection, for modules with their own queries (report, metrics). */
  readonly db: Database;
  /**
   * INSERT OR IGNORE of all rows in one transaction, with the metrics rollups of the rows inserted
   * and, when given, how far a segment of the spool log is now drained.
   */
  insertBatch(rows: readonly EventRow[], mark?: SegmentMark): InsertResult;
  /** How far each segment of the spool log was drained, and how much of that is scrubbed. */
  segmentMarks(): Map<string, SegmentState>;
  /** Records that a segment's bytes before `scrubbed` are zeros on disk. */
  markScrubbed(name: string, scrubbed: number): void;
  /** Forgets the mark of a segment that is gone. */
  forgetSegment(name: string): void;
  query(filter?: EventFilter): EventRow[];
  count(): number;
  schemaVersion(): number;
  close(): void;
}

let loaded: typeof BetterSqlite3 | undefined;

/** better-sqlite3, loaded on first use (also by drain-lock.ts, whose lock is a SQLite lock). */
export function sqliteDriver(): typeof BetterSqlite3 {
  loaded ??= createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  return loaded;
}

export function isBusyError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_') || code === 'SQLITE_LOCKED');
}

/** Creates the db file 0600 when missing (SQLite gives -wal and -shm the file's mode). */
function ensurePrivateFile(path: string): void {
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
function withBusyRetry<T>(work: () => T, attempts = 50): T {
  for (let i = 1; ; i++) {
    try {
      return work();
    } catch (error) {
      if (!isBusyError(error) || i >= attempts) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20 + Math.floor(Math.random() * 30));
    }
  }
}

function migrate(db: Database, path: string): void {
  const current = () => Number(db.pragma('user_version', { simple: true }));
  if (current() === SCHEMA_VERSION) return;
  withBusyRetry(() => {
    db.exec('BEGIN IMMEDIATE');
    try {
      const version = current();
      if (version > SCHEMA_VERSION) {
        throw new UserError(`${path} has schema version ${version}, newer than this forge-reflect knows (${SCHEMA_VERSION}); upgrade forge-reflect`);
      }
      for (let v = version; v < SCHEMA_VERSION; v++) {
        const migration = MIGRATIONS[v] as Migration;
        if (typeof migration === 'string') db.exec(migration);
        else migration(db);
      }
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
      db.exec('COMMIT');
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw error;
    }
  });
}

function describe(error: unknown): string {
  const e = error as { code?: string; message?: string };
  return e.code ? `${e.code}: ${e.message ?? ''}` : String(e.message ?? error);
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
    ensurePrivateFile(path);
    const Driver = sqliteDriver();
    db = new Driver(path, { timeout: BUSY_TIMEOUT_MS });
  } catch (error) {
    if (error instanceof UserError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === NOT_REGULAR || code === 'ENXIO') throw new UserError(`the event log ${path} is not a regular file; move it aside (forge-reflect doctor --repair does) and run the command again`);
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
      throw new UserError(`cannot write the event log ${path} (${describe(error)}): the disk is full or failing; free space and run the command again (the log itself is not known to be damaged)`);
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

const COLUMNS = 'id, session_id, agent_id, ts, runtime, type, hook_event, tool_name, tool_use_id, duration_ms, cwd, payload, truncated';

function wrap(db: Database, path: string): EventLog {
  const insert = db.prepare(`INSERT OR IGNORE INTO events (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  // The rollups of the rows actually inserted (changes 1: a duplicate id counts once) are written
  // in the same transaction, so the log and its rollups never disagree.
  let markStatement: BetterSqlite3.Statement | undefined;
  const insertAll = db.transaction((rows: readonly EventRow[], mark: SegmentMark | undefined): InsertResult => {
    let inserted = 0;
    const rollup = new RollupBatch();
    for (const r of rows) {
      if (insert.run(r.id, r.session_id, r.agent_id, r.ts, r.runtime, r.type, r.hook_event, r.tool_name, r.tool_use_id, r.duration_ms, r.cwd, r.payload, r.truncated).changes === 1) {
        inserted += 1;
        rollup.add(r);
      }
    }
    if (inserted > 0) rollup.flush(db);
    if (mark !== undefined) {
      markStatement ??= db.prepare('INSERT INTO spool_segments (name, done) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET done = excluded.done');
      markStatement.run(mark.name, mark.done);
    }
    return { inserted, ignored: rows.length - inserted };
  });
  return {
    path,
    db,
    insertBatch(rows, mark) {
      if (rows.length === 0 && mark === undefined) return { inserted: 0, ignored: 0 };
      return insertAll.immediate(rows, mark);
    },
    segmentMarks() {
      const rows = db.prepare('SELECT name, done, scrubbed FROM spool_segments').all() as Array<{ name: string; done: number; scrubbed: number }>;
      return new Map(rows.map((r) => [r.name, { done: r.done, scrubbed: r.scrubbed }]));
    },
    markScrubbed(name, scrubbed) {
      db.prepare('UPDATE spool_segments SET scrubbed = ? WHERE name = ?').run(scrubbed, name);
    },
    forgetSegment(name) {
      db.prepare('DELETE FROM spool_segments WHERE name = ?').run(name);
    },
    query(filter = {}) {
      const where: string[] = [];
      const params: Record<string, unknown> = {};
      if (filter.session !== undefined) {
        // a prefix match that still uses the index: [prefix, prefix + U+10FFFF)
        where.push('session_id >= @session AND session_id < @sessionEnd');
        params.session = filter.session;
        params.sessionEnd = `${filter.session}\u{10FFFF}`;
      }
      if (filter.type !== undefined) {
        where.push('type = @type');
        params.type = filter.type;
      }
      if (filter.tool !== undefined) {
        where.push('tool_name = @tool COLLATE NOCASE');
        params.tool = filter.tool;
      }
      if (filter.runtime !== undefined) {
        where.push('runtime = @runtime');
        params.runtime = filter.runtime;
      }
      if (filter.since !== undefined) {
        where.push('ts >= @since');
        params.since = filter.since;
      }
      const limit = filter.limit ?? -1;
      const sql = `SELECT * FROM (SELECT ${COLUMNS} FROM events ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
                   ORDER BY ts DESC, id DESC LIMIT ${Math.trunc(limit)}) ORDER BY ts ASC, id ASC`;
      return db.prepare(sql).all(params) as EventRow[];
    },
    count() {
      return Number(db.prepare('SELECT count(*) FROM events').pluck().get());
    },
    schemaVersion() {
      return Number(db.pragma('user_version', { simple: true }));
    },
    close() {
      if (db.open) db.close();
    },
  };
}
