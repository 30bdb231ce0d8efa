/**
 * The log's schema, by `PRAGMA user_version`: the migrations in order, and the step that brings a
 * file up to date inside one `BEGIN IMMEDIATE` transaction, so two processes opening a new file
 * migrate it once.
 */
import { UserError } from '../errors.js';
import { withBusyRetry, type Database } from './connection.js';
import { backfillRollups, ROLLUP_TABLES_SQL } from './rollups.js';

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
  // 6: the rollups `metrics` reads (log/rollups.ts), kept by insertBatch, filled from the events already logged.
  (db) => {
    db.exec(ROLLUP_TABLES_SQL);
    backfillRollups(db);
  },
  // 7: how far each sealed segment of the spool log has been drained (spool-log.ts), moved on in the
  // transaction that inserts its records, so a record is never logged twice or skipped.
  `CREATE TABLE spool_segments (name TEXT PRIMARY KEY NOT NULL, done INTEGER NOT NULL) WITHOUT ROWID;`,
  // 8: the report's totals (report/sidecar-index.ts queryTotals, queryInvalid) from an index alone,
  // grouped in its order: the sidecars summed without reading a row of the table or sorting, at
  // some cost to a cold index's inserts.
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
  // 11: how much of each segment's drained bytes are overwritten with zeros (scrub.ts), so a
  // drain killed between its commit and the overwrite leaves the next drain the range to wipe. A
  // segment an earlier version drained starts at 0: the next drain wipes all it committed.
  `ALTER TABLE spool_segments ADD COLUMN scrubbed INTEGER NOT NULL DEFAULT 0;`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the file to SCHEMA_VERSION; a file newer than this build is a UserError. */
export function migrate(db: Database, path: string): void {
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
