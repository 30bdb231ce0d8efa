/**
 * The statements of the event log: inserting a batch with its rollups and its spool mark, the
 * segment marks, and reading events back by filter.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { EventRow, EventType } from '../events.js';
import type { Database } from './connection.js';
import { RollupBatch } from './rollups.js';

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

const COLUMNS = 'id, session_id, agent_id, ts, runtime, type, hook_event, tool_name, tool_use_id, duration_ms, cwd, payload, truncated';

export interface EventQueries {
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
}

/** The log's queries over an open, migrated connection. */
export function eventQueries(db: Database): EventQueries {
  const insert = db.prepare(`INSERT OR IGNORE INTO events (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  // The rollups of the rows actually inserted (changes 1: a duplicate id counts once) are written
  // in the same transaction, so the log and its rollups never disagree.
  let markStatement: BetterSqlite3.Statement | undefined;
  const insertAll = db.transaction((rows: readonly EventRow[], mark: SegmentMark | undefined): InsertResult => {
    let inserted = 0;
    const rollup = new RollupBatch();
    for (const r of rows) {
      if (
        insert.run(
          r.id,
          r.session_id,
          r.agent_id,
          r.ts,
          r.runtime,
          r.type,
          r.hook_event,
          r.tool_name,
          r.tool_use_id,
          r.duration_ms,
          r.cwd,
          r.payload,
          r.truncated,
        ).changes === 1
      ) {
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
  };
}
