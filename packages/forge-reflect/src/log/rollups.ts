/**
 * Rollups of the event log, kept by `insertBatch` in the same transaction as the rows it inserts,
 * so `metrics` reads a few hundred rows instead of every event of its window (issue 12).
 *
 * - `tool_hours` / `tool_days`: per UTC hour (`ts` cut to `YYYY-MM-DDTHH`) or day (`YYYY-MM-DD`) and
 *   tool: calls that succeeded, failed, carried a duration, the sum of those durations, and the
 *   durations as a histogram (one blob per row, histogram.ts). One row per hour and tool, whatever the durations: a batch costs one
 *   read and one write per hour and tool it touches, and a window reads a few hundred rows.
 * - `session_hours` / `session_days`: which sessions had an event in the hour or day.
 * - `stagnation_streaks` / `stagnant_runs`: per session, the current streak of the same failing
 *   call, and one row per stagnant run, at the time of its STAGNATION_THRESHOLD-th failure
 *   (stagnation.ts).
 *
 * Only rows actually inserted count (INSERT OR IGNORE with `changes` 1): a re-drained duplicate
 * never counts twice. A batch is aggregated in Maps first, then written cell by cell.
 * A window is read as whole days and whole hours from the rollups plus its two partial edge hours
 * from the events themselves (loops/metrics-window.ts), so every count is exact.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { EventRow } from '../events.js';
import type { Database } from './connection.js';
import { addDuration, addHistogram, DenseHistogram, type Histogram } from './histogram.js';
import { before, stagnationKey, step, type Call, type Run, type Streak } from './stagnation.js';

/** The tables (migration 6); backfillRollups fills them from the events already logged. */
export const ROLLUP_TABLES_SQL = `
  CREATE TABLE tool_hours (
    hour TEXT NOT NULL, tool TEXT NOT NULL,
    ok INTEGER NOT NULL, failed INTEGER NOT NULL, timed INTEGER NOT NULL, duration_sum INTEGER NOT NULL, durations BLOB NOT NULL,
    PRIMARY KEY (hour, tool));
  CREATE TABLE tool_days (
    day TEXT NOT NULL, tool TEXT NOT NULL,
    ok INTEGER NOT NULL, failed INTEGER NOT NULL, timed INTEGER NOT NULL, duration_sum INTEGER NOT NULL, durations BLOB NOT NULL,
    PRIMARY KEY (day, tool));
  CREATE TABLE session_hours (hour TEXT NOT NULL, session_id TEXT NOT NULL, PRIMARY KEY (hour, session_id)) WITHOUT ROWID;
  CREATE TABLE session_days (day TEXT NOT NULL, session_id TEXT NOT NULL, PRIMARY KEY (day, session_id)) WITHOUT ROWID;
  CREATE TABLE stagnation_streaks (
    session TEXT PRIMARY KEY NOT NULL, ts TEXT NOT NULL, id TEXT NOT NULL, sig TEXT, len INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE stagnant_runs (ts TEXT NOT NULL, id TEXT NOT NULL, session TEXT NOT NULL, PRIMARY KEY (ts, id)) WITHOUT ROWID;
  CREATE INDEX stagnant_runs_by_session ON stagnant_runs (session);`;

const SEP = '\u0000';
const isToolType = (type: string): boolean => type === 'tool.executed' || type === 'tool.failed';

interface Statements {
  toolHour: ToolStatements;
  toolDay: ToolStatements;
  sessionHour: BetterStatement;
  sessionDay: BetterStatement;
  streak: BetterStatement;
  saveStreak: BetterStatement;
  saveRun: BetterStatement;
  dropRuns: BetterStatement;
  callsOf: BetterStatement;
  callsOfNone: BetterStatement;
}

interface ToolStatements {
  durations: BetterStatement;
  upsert: BetterStatement;
}

type BetterStatement = BetterSqlite3.Statement<unknown[]>;

const toolStatements = (db: Database, table: string, key: string): ToolStatements => ({
  durations: db.prepare(`SELECT durations FROM ${table} WHERE ${key} = ? AND tool = ?`).pluck(),
  upsert: db.prepare(
    `INSERT INTO ${table} (${key}, tool, ok, failed, timed, duration_sum, durations) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (${key}, tool) DO UPDATE SET ok = ok + excluded.ok, failed = failed + excluded.failed,
       timed = timed + excluded.timed, duration_sum = duration_sum + excluded.duration_sum, durations = excluded.durations`,
  ),
});
const CALLS =
  "SELECT ts, id, type, CASE WHEN type = 'tool.failed' THEN tool_name END AS tool_name, CASE WHEN type = 'tool.failed' THEN payload END AS payload FROM events";
/** The events that are tool calls (the rollups count them; metrics reads the edge hours with it). */
export const CALL_TYPES = "type IN ('tool.executed', 'tool.failed')";

const prepared = new WeakMap<Database, Statements>();

function statements(db: Database): Statements {
  let s = prepared.get(db);
  if (s === undefined) {
    s = {
      toolHour: toolStatements(db, 'tool_hours', 'hour'),
      toolDay: toolStatements(db, 'tool_days', 'day'),
      sessionHour: db.prepare('INSERT OR IGNORE INTO session_hours (hour, session_id) VALUES (?, ?)'),
      sessionDay: db.prepare('INSERT OR IGNORE INTO session_days (day, session_id) VALUES (?, ?)'),
      streak: db.prepare('SELECT ts, id, sig, len FROM stagnation_streaks WHERE session = ?'),
      saveStreak: db.prepare('INSERT OR REPLACE INTO stagnation_streaks (session, ts, id, sig, len) VALUES (?, ?, ?, ?, ?)'),
      saveRun: db.prepare('INSERT OR IGNORE INTO stagnant_runs (ts, id, session) VALUES (?, ?, ?)'),
      dropRuns: db.prepare('DELETE FROM stagnant_runs WHERE session = ?'),
      callsOf: db.prepare(`${CALLS} INDEXED BY events_by_session WHERE session_id = ? AND ${CALL_TYPES} ORDER BY ts, id`),
      callsOfNone: db.prepare(`${CALLS} WHERE (session_id IS NULL OR session_id = '') AND ${CALL_TYPES} ORDER BY ts, id`),
    };
    prepared.set(db, s);
  }
  return s;
}

const scratch = new DenseHistogram();

/** Adds a cell of a batch to its row: one read (its stored histogram) and one upsert. */
function writeCell(st: ToolStatements, c: ToolCell): void {
  scratch.clear();
  const stored = st.durations.get(c.key, c.tool) as Uint8Array | undefined;
  if (stored !== undefined) scratch.addStored(stored);
  scratch.addSparse(c.durations);
  st.upsert.run(c.key, c.tool, c.ok, c.failed, c.timed, c.sum, scratch.encode());
}

/** Replays one session's calls from the log: its runs and streak from scratch (a call that arrived out of order). */
function replaySession(s: Statements, session: string): void {
  const runs: Run[] = [];
  const streak: Streak = { ts: '', id: '', sig: null, len: 0 };
  let calls = 0;
  const rows = session === '' ? s.callsOfNone.iterate() : s.callsOf.iterate(session);
  for (const call of rows as IterableIterator<Call>) {
    step(streak, call, session, runs);
    calls += 1;
  }
  s.dropRuns.run(session);
  for (const r of runs) s.saveRun.run(r.ts, r.id, r.session);
  if (calls > 0) s.saveStreak.run(session, streak.ts, streak.id, streak.sig, streak.len);
}

interface ToolCell {
  /** The hour or the day. */
  key: string;
  tool: string;
  ok: number;
  failed: number;
  timed: number;
  sum: number;
  durations: Histogram;
}

/** The rows of one batch that were inserted, aggregated; `flush` writes them (inside the batch's transaction). */
export class RollupBatch {
  private readonly tools = new Map<string, ToolCell>();
  private readonly sessions = new Map<string, [string, string]>();
  private readonly calls = new Map<string, Call[]>();

  constructor(private readonly withStagnation = true) {}

  add(r: Pick<EventRow, 'ts' | 'id' | 'type' | 'session_id' | 'tool_name' | 'duration_ms' | 'payload'>): void {
    const hour = r.ts.slice(0, 13);
    const session = r.session_id;
    if (session !== null && session !== 'unknown') {
      const k = hour + SEP + session;
      if (!this.sessions.has(k)) this.sessions.set(k, [hour, session]);
    }
    if (!isToolType(r.type)) return;
    const tool = r.tool_name ?? '(unknown)';
    const key = hour + SEP + tool;
    let cell = this.tools.get(key);
    if (cell === undefined) {
      cell = { key: hour, tool, ok: 0, failed: 0, timed: 0, sum: 0, durations: new Map() };
      this.tools.set(key, cell);
    }
    if (r.type === 'tool.executed') cell.ok += 1;
    else cell.failed += 1;
    // The column is INTEGER: a numeric string is stored as its number; anything else counts as no duration.
    const d = r.duration_ms === null || r.duration_ms === undefined ? null : Number(r.duration_ms);
    if (d !== null && !Number.isNaN(d)) {
      cell.timed += 1;
      cell.sum += d;
      addDuration(cell.durations, d);
    }
    if (this.withStagnation) {
      const k = stagnationKey(session);
      const list = this.calls.get(k);
      const call: Call = { ts: r.ts, id: r.id, type: r.type, tool_name: r.tool_name, payload: r.type === 'tool.failed' ? r.payload : null };
      if (list === undefined) this.calls.set(k, [call]);
      else list.push(call);
    }
  }

  flush(db: Database): void {
    const s = statements(db);
    const days = new Map<string, ToolCell>();
    for (const c of this.tools.values()) {
      writeCell(s.toolHour, c);
      const day = c.key.slice(0, 10);
      const k = day + SEP + c.tool;
      let into = days.get(k);
      if (into === undefined) days.set(k, (into = { key: day, tool: c.tool, ok: 0, failed: 0, timed: 0, sum: 0, durations: new Map() }));
      into.ok += c.ok;
      into.failed += c.failed;
      into.timed += c.timed;
      into.sum += c.sum;
      addHistogram(into.durations, c.durations);
    }
    for (const c of days.values()) writeCell(s.toolDay, c);
    const sessionDays = new Set<string>();
    for (const [hour, session] of this.sessions.values()) {
      s.sessionHour.run(hour, session);
      const k = hour.slice(0, 10) + SEP + session;
      if (!sessionDays.has(k)) {
        sessionDays.add(k);
        s.sessionDay.run(hour.slice(0, 10), session);
      }
    }
    for (const [session, calls] of this.calls) this.flushStreak(s, session, calls);
  }

  private flushStreak(s: Statements, session: string, calls: Call[]): void {
    for (let i = 1; i < calls.length; i++) {
      if (before(calls[i] as Call, calls[i - 1] as Call)) {
        calls.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
        break;
      }
    }
    const saved = s.streak.get(session) as Streak | undefined;
    if (saved !== undefined && before(calls[0] as Call, saved)) {
      replaySession(s, session); // a call older than the last one counted: count this session again
      return;
    }
    const streak: Streak = saved ?? { ts: '', id: '', sig: null, len: 0 };
    const runs: Run[] = [];
    for (const call of calls) step(streak, call, session, runs);
    for (const r of runs) s.saveRun.run(r.ts, r.id, r.session);
    s.saveStreak.run(session, streak.ts, streak.id, streak.sig, streak.len);
  }
}

/**
 * Migration 6's backfill: the rollups of every event already in the log, so a log written by an
 * older version gives the same metrics. Runs inside the migration's transaction; reads in chunks
 * (by rowid for the counts, by session for the streaks), so memory stays bounded.
 */
export function backfillRollups(db: Database): void {
  // iterate, not all(): a chunk's rows are never all alive at once (10^6 events stay under 100 MiB)
  const chunk = db.prepare(
    'SELECT rowid AS rid, id, session_id, ts, type, tool_name, duration_ms, NULL AS payload FROM events WHERE rowid > ? ORDER BY rowid LIMIT 20000',
  );
  for (let last = -Infinity; ; ) {
    const batch = new RollupBatch(false);
    let rows = 0;
    for (const r of chunk.iterate(last) as IterableIterator<EventRow & { rid: number }>) {
      batch.add(r);
      last = r.rid;
      rows += 1;
    }
    if (rows === 0) break;
    batch.flush(db);
  }
  const s = statements(db);
  const sessions = db.prepare('SELECT DISTINCT session_id FROM events WHERE session_id > ? ORDER BY session_id LIMIT 1000').pluck();
  for (let after = ''; ; ) {
    const list = sessions.all(after) as string[];
    if (list.length === 0) break;
    for (const session of list) replaySession(s, session);
    after = list[list.length - 1] as string;
  }
  if (db.prepare("SELECT 1 FROM events WHERE session_id IS NULL OR session_id = '' LIMIT 1").get() !== undefined) replaySession(s, '');
}
