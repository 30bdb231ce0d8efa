/**
 * Rollups of the event log, kept by `insertBatch` in the same transaction as the rows it inserts,
 * so `metrics` reads a few hundred rows instead of every event of its window (issue 12).
 *
 * - `tool_hours` / `tool_days`: per UTC hour (`ts` cut to `YYYY-MM-DDTHH`) or day (`YYYY-MM-DD`) and
 *   tool: calls that succeeded, failed, carried a duration, the sum of those durations, and the
 *   durations as a histogram (one blob per row: log-scale buckets 2% wide, bucketOf, each with its
 *   count and its smallest and largest value), from which the median is found (medianFromBuckets:
 *   exact, or within 1%). One row per hour and tool, whatever the durations: a batch costs one
 *   read and one write per hour and tool it touches, and a window reads a few hundred rows.
 * - `session_hours` / `session_days`: which sessions had an event in the hour or day.
 * - `stagnation_streaks` / `stagnant_runs`: per session, the current streak of the same failing
 *   call, and one row per stagnant run, at the time of its STAGNATION_THRESHOLD-th failure.
 *
 * Only rows actually inserted count (INSERT OR IGNORE with `changes` 1): a re-drained duplicate
 * never counts twice. A batch is aggregated in Maps first, then written cell by cell.
 * A window is read as whole days and whole hours from the rollups plus its two partial edge hours
 * from the events themselves (planWindow), so every count is exact.
 */
import { nodeCrypto } from '../lazy-builtins.js';
import type BetterSqlite3 from 'better-sqlite3';
import type { EventRow } from '../events.js';

type Database = BetterSqlite3.Database;

/** A run of at least STAGNATION_THRESHOLD consecutive failures of the same tool call (same tool and input) in a session. */
export const STAGNATION_THRESHOLD = 3;

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

/** The relative width of a duration bucket: bucket b holds [1.02^b, 1.02^(b+1)). */
export const BUCKET_RATIO = 1.02;
const LOG_RATIO = Math.log(BUCKET_RATIO);
/** Durations below 1 ms (0 in practice) and negative ones (never logged) get their own buckets. */
const BELOW_ONE = -1;
const NEGATIVE = -2;

export function bucketOf(ms: number): number {
  if (ms >= 1) return Math.floor(Math.log(ms) / LOG_RATIO);
  return ms >= 0 ? BELOW_ONE : NEGATIVE;
}

export interface Bucket {
  bucket: number;
  n: number;
  lo: number;
  hi: number;
}

/**
 * The median of the values a histogram holds (buckets in ascending order): the value of rank
 * (n + 1) / 2, or the mean of ranks n / 2 and n / 2 + 1 for an even count, as the exact median is
 * defined. A rank is read from its bucket: the first of a bucket is its `lo` and the last its `hi`
 * (both exact); one in between is the middle of [lo, hi], within 1% of the true value, because a
 * bucket spans 2% (hi < 1.02 lo) and the middle is at most half of that from any value in it.
 */
export function medianFromBuckets(buckets: readonly Bucket[]): number | null {
  const total = buckets.reduce((s, b) => s + b.n, 0);
  if (total === 0) return null;
  const at = (rank: number): number => {
    let before = 0;
    for (const b of buckets) {
      if (rank <= before + b.n) {
        const j = rank - before - 1;
        if (j === 0) return b.lo;
        if (j === b.n - 1) return b.hi;
        return (b.lo + b.hi) / 2;
      }
      before += b.n;
    }
    throw new Error('rank beyond the histogram');
  };
  const low = Math.floor((total + 1) / 2);
  const high = Math.floor((total + 2) / 2);
  return low === high ? at(low) : (at(low) + at(high)) / 2;
}

/** The histogram of a batch's cell (sparse): bucket → its count, smallest and largest value. */
export type Histogram = Map<number, Bucket>;

/** Adds `n` values from lo to hi, all in bucket `bucket`, to `h`. */
export function addBucket(h: Histogram, bucket: number, n: number, lo: number, hi: number): void {
  const b = h.get(bucket);
  if (b === undefined) h.set(bucket, { bucket, n, lo, hi });
  else {
    b.n += n;
    if (lo < b.lo) b.lo = lo;
    if (hi > b.hi) b.hi = hi;
  }
}

export function addDuration(h: Histogram, ms: number): void {
  addBucket(h, bucketOf(ms), 1, ms, ms);
}

export function addHistogram(h: Histogram, from: Histogram): void {
  for (const b of from.values()) addBucket(h, b.bucket, b.n, b.lo, b.hi);
}

/** Every bucket a duration can have: NEGATIVE … 1.02^2045 ms (2^53 ms is bucket 1852); larger ones share the last. */
const SLOTS = 2048;
const slotOf = (bucket: number): number => Math.min(bucket - NEGATIVE, SLOTS - 1);

/** The two stored formats: varints (the usual case: whole milliseconds) or float64 little-endian. */
const VARINTS = 1;
const FLOATS = 2;
const wholeNumber = (v: number): boolean => Number.isSafeInteger(v) && v >= 0;

/**
 * A histogram with a slot per bucket, for adding many up quickly (a window's rows, or a stored
 * row and a batch's cell). Stored (encode) by bucket: when every count and value is a whole
 * number, a VARINTS byte then per bucket the varints of (zigzag) bucket − previous bucket, n, lo,
 * hi − lo (about 5 bytes a bucket); otherwise a FLOATS byte then float64 little-endian quadruples
 * (bucket, n, lo, hi).
 */
export class DenseHistogram {
  private readonly n = new Float64Array(SLOTS);
  private readonly lo = new Float64Array(SLOTS);
  private readonly hi = new Float64Array(SLOTS);

  clear(): void {
    this.n.fill(0);
  }

  add(bucket: number, n: number, lo: number, hi: number): void {
    const i = slotOf(bucket);
    if (this.n[i] === 0) {
      this.n[i] = n;
      this.lo[i] = lo;
      this.hi[i] = hi;
    } else {
      this.n[i] = (this.n[i] as number) + n;
      if (lo < (this.lo[i] as number)) this.lo[i] = lo;
      if (hi > (this.hi[i] as number)) this.hi[i] = hi;
    }
  }

  addValue(ms: number): void {
    this.add(bucketOf(ms), 1, ms, ms);
  }

  addSparse(h: Histogram): void {
    for (const b of h.values()) this.add(b.bucket, b.n, b.lo, b.hi);
  }

  /** Adds a stored histogram (encode's format). */
  addStored(blob: Uint8Array): void {
    if (blob.length === 0) return;
    if (blob[0] === FLOATS) {
      const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
      for (let i = 1; i + 32 <= blob.length; i += 32) this.add(view.getFloat64(i, true), view.getFloat64(i + 8, true), view.getFloat64(i + 16, true), view.getFloat64(i + 24, true));
      return;
    }
    let i = 1;
    const next = (): number => {
      let v = 0;
      let scale = 1;
      for (;;) {
        const byte = blob[i++] as number;
        v += (byte & 0x7f) * scale;
        if (byte < 0x80) return v;
        scale *= 128;
      }
    };
    let bucket = 0;
    while (i < blob.length) {
      const delta = next();
      bucket += delta % 2 === 0 ? delta / 2 : -(delta + 1) / 2;
      const n = next();
      const lo = next();
      this.add(bucket, n, lo, lo + next());
    }
  }

  /** The occupied buckets in ascending order. */
  buckets(): Bucket[] {
    const out: Bucket[] = [];
    for (let i = 0; i < SLOTS; i++) if ((this.n[i] as number) > 0) out.push({ bucket: i + NEGATIVE, n: this.n[i] as number, lo: this.lo[i] as number, hi: this.hi[i] as number });
    return out;
  }

  encode(): Buffer {
    const buckets = this.buckets();
    if (!buckets.every((b) => wholeNumber(b.n) && wholeNumber(b.lo) && wholeNumber(b.hi))) {
      const out = Buffer.alloc(1 + buckets.length * 32);
      out[0] = FLOATS;
      buckets.forEach((b, i) => [b.bucket, b.n, b.lo, b.hi].forEach((v, j) => out.writeDoubleLE(v, 1 + i * 32 + j * 8)));
      return out;
    }
    const out = Buffer.allocUnsafe(1 + buckets.length * 4 * 8);
    let at = 0;
    out[at++] = VARINTS;
    const put = (value: number): void => {
      let v = value;
      while (v >= 0x80) {
        out[at++] = (v % 0x80) + 0x80;
        v = Math.floor(v / 0x80);
      }
      out[at++] = v;
    };
    let previous = 0;
    for (const b of buckets) {
      const delta = b.bucket - previous;
      put(delta >= 0 ? delta * 2 : -delta * 2 - 1);
      put(b.n);
      put(b.lo);
      put(b.hi - b.lo);
      previous = b.bucket;
    }
    return Buffer.from(out.subarray(0, at));
  }

  median(): number | null {
    return medianFromBuckets(this.buckets());
  }
}

const SEP = '\u0000';
const isToolType = (type: string): boolean => type === 'tool.executed' || type === 'tool.failed';

/**
 * The signature of a failed call for stagnation: its tool name and its `tool_input` as stored
 * (a string input as itself, any other value as JSON), hashed. `undefined` when the payload is
 * not JSON (the log stores every payload as JSON, a truncated one as a JSON string).
 */
export function callSignature(tool: string | null, payload: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return undefined;
  }
  const input = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as { tool_input?: unknown }).tool_input : undefined;
  const text = input === undefined || input === null ? '' : typeof input === 'string' ? input : JSON.stringify(input);
  return nodeCrypto().createHash('sha1').update(`${tool ?? ''}${SEP}${text}`).digest('base64');
}

/** Where a session's failing-call streak stands after its latest call (by `ts`, then `id`). */
interface Streak {
  ts: string;
  id: string;
  sig: string | null;
  len: number;
}

interface Call {
  ts: string;
  id: string;
  type: string;
  tool_name: string | null;
  payload: string | null;
}

interface Run {
  ts: string;
  id: string;
  session: string;
}

/** Sessions of stagnation: a null session id and '' are one, as they were in the SQL definition. */
const stagnationKey = (session: string | null): string => session ?? '';

const before = (a: { ts: string; id: string }, b: { ts: string; id: string }): boolean => a.ts < b.ts || (a.ts === b.ts && a.id < b.id);

function step(streak: Streak, call: Call, session: string, runs: Run[]): void {
  streak.ts = call.ts;
  streak.id = call.id;
  if (call.type !== 'tool.failed') {
    streak.sig = null;
    streak.len = 0;
    return;
  }
  const sig = callSignature(call.tool_name, call.payload ?? '');
  if (sig === undefined) return; // not JSON: not a call (the SQL definition required json_valid)
  if (streak.len > 0 && streak.sig === sig) streak.len += 1;
  else {
    streak.sig = sig;
    streak.len = 1;
  }
  if (streak.len === STAGNATION_THRESHOLD) runs.push({ ts: call.ts, id: call.id, session });
}

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
const CALLS = "SELECT ts, id, type, CASE WHEN type = 'tool.failed' THEN tool_name END AS tool_name, CASE WHEN type = 'tool.failed' THEN payload END AS payload FROM events";
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
  const chunk = db.prepare('SELECT rowid AS rid, id, session_id, ts, type, tool_name, duration_ms, NULL AS payload FROM events WHERE rowid > ? ORDER BY rowid LIMIT 20000');
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
  const sessions = db.prepare("SELECT DISTINCT session_id FROM events WHERE session_id > ? ORDER BY session_id LIMIT 1000").pluck();
  for (let after = ''; ; ) {
    const list = sessions.all(after) as string[];
    if (list.length === 0) break;
    for (const session of list) replaySession(s, session);
    after = list[list.length - 1] as string;
  }
  if (db.prepare("SELECT 1 FROM events WHERE session_id IS NULL OR session_id = '' LIMIT 1").get() !== undefined) replaySession(s, '');
}

/**
 * A window [since, until] as read from the rollups: whole days [dayLo, dayHi), whole hours
 * [h1Lo, h1Hi) and [h2Lo, h2Hi) around them, and the partial edge hours from the events:
 * [r1Lo, r1Hi) and [r2Lo, r2Hi] by `ts`. An empty range is ('', ''). `since` and `until` are in
 * the log's format (`YYYY-MM-DDTHH:MM:SS.ffffffZ`); anything else is read from the events alone.
 */
export interface WindowPlan {
  dayLo: string;
  dayHi: string;
  h1Lo: string;
  h1Hi: string;
  h2Lo: string;
  h2Hi: string;
  r1Lo: string;
  r1Hi: string;
  r2Lo: string;
  r2Hi: string;
}

const LOG_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const HOUR_MS = 3_600_000;
const nextHour = (hour: string): string => new Date(Date.parse(`${hour}:00:00Z`) + HOUR_MS).toISOString().slice(0, 13);
const nextDay = (day: string): string => new Date(Date.parse(`${day}T00:00:00Z`) + 24 * HOUR_MS).toISOString().slice(0, 10);

export function planWindow(since: string, until: string): WindowPlan {
  const none = { dayLo: '', dayHi: '', h1Lo: '', h1Hi: '', h2Lo: '', h2Hi: '', r1Lo: '', r1Hi: '' };
  if (!LOG_TIME.test(since) || !LOG_TIME.test(until)) return { ...none, r2Lo: since, r2Hi: until };
  // Whole hours: from the first hour starting at or after `since` up to (not including) the hour of `until`.
  const hourLo = since.slice(13) === ':00:00.000000Z' ? since.slice(0, 13) : nextHour(since.slice(0, 13));
  const hourHi = until.slice(0, 13);
  if (!(hourLo < hourHi)) return { ...none, r2Lo: since, r2Hi: until };
  const plan: WindowPlan = { ...none, h1Lo: hourLo, h1Hi: hourHi, r1Lo: since, r1Hi: hourLo, r2Lo: hourHi, r2Hi: until };
  const dayLo = hourLo.endsWith('T00') ? hourLo.slice(0, 10) : nextDay(hourLo.slice(0, 10));
  const dayHi = hourHi.slice(0, 10);
  if (dayLo < dayHi) {
    plan.dayLo = dayLo;
    plan.dayHi = dayHi;
    plan.h1Hi = `${dayLo}T00`;
    plan.h2Lo = `${dayHi}T00`;
    plan.h2Hi = hourHi;
  }
  return plan;
}
