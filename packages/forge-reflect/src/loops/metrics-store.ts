/**
 * Gathers the counts of the loop metrics from the log for a window [since, until]. The tool
 * events are read from their rollups (metrics-rollup.ts): whole days and hours from the rollups,
 * the two partial edge hours from the events by the (type, ts) index; no query scans the events.
 */
import type { Database } from '../event-log.js';
import { isoMicros } from '../since.js';
import { PHASES, type Phase } from './bounce-core.js';
import { DAY_MS } from './confidence.js';
import { computeMetrics, type Metrics, type MetricsData, type ToolData } from './metrics-core.js';
import { bucketOf, medianFromBuckets, planWindow, type Bucket, type WindowPlan } from './metrics-rollup.js';

const num = (db: Database, sql: string, ...params: unknown[]): number => Number(db.prepare(sql).pluck().get(...params) ?? 0);

const CALL_TYPES = "type IN ('tool.executed', 'tool.failed')";
/** The window's parts (planWindow): whole days, whole hours, and the two partial edge hours from the events. */
const DAYS = 'day >= @dayLo AND day < @dayHi';
const HOURS_1 = 'hour >= @h1Lo AND hour < @h1Hi';
const HOURS_2 = 'hour >= @h2Lo AND hour < @h2Hi';
const EDGE_1 = 'ts >= @r1Lo AND ts < @r1Hi';
const EDGE_2 = 'ts >= @r2Lo AND ts <= @r2Hi';
const EDGE_CALLS = (edge: string) => `FROM events INDEXED BY events_by_type WHERE ${CALL_TYPES} AND ${edge}`;

/** Per tool: calls that succeeded, failed, carried a duration, and their sum (rollups plus edges). */
export const TOOL_COUNTS_SQL = `SELECT tool, sum(ok) AS ok, sum(failed) AS failed, sum(timed) AS timed, sum(duration_sum) AS duration_sum FROM (
  SELECT tool, ok, failed, timed, duration_sum FROM tool_days WHERE ${DAYS}
  UNION ALL SELECT tool, ok, failed, timed, duration_sum FROM tool_hours WHERE ${HOURS_1}
  UNION ALL SELECT tool, ok, failed, timed, duration_sum FROM tool_hours WHERE ${HOURS_2}
  UNION ALL SELECT coalesce(tool_name, '(unknown)'), type = 'tool.executed', type = 'tool.failed', duration_ms IS NOT NULL, coalesce(duration_ms, 0) ${EDGE_CALLS(EDGE_1)}
  UNION ALL SELECT coalesce(tool_name, '(unknown)'), type = 'tool.executed', type = 'tool.failed', duration_ms IS NOT NULL, coalesce(duration_ms, 0) ${EDGE_CALLS(EDGE_2)}
) GROUP BY tool`;

/** Per tool, the duration histogram of the whole days and hours (the edges' durations are added in JS). */
export const TOOL_DURATIONS_SQL = `SELECT tool, bucket, sum(n) AS n, min(lo) AS lo, max(hi) AS hi FROM (
  SELECT tool, bucket, n, lo, hi FROM duration_days WHERE ${DAYS}
  UNION ALL SELECT tool, bucket, n, lo, hi FROM duration_hours WHERE ${HOURS_1}
  UNION ALL SELECT tool, bucket, n, lo, hi FROM duration_hours WHERE ${HOURS_2}
) GROUP BY tool, bucket`;

/** The durations of the edge hours' calls. */
export const EDGE_DURATIONS_SQL = `SELECT coalesce(tool_name, '(unknown)') AS tool, duration_ms AS d ${EDGE_CALLS(EDGE_1)} AND duration_ms IS NOT NULL
  UNION ALL SELECT coalesce(tool_name, '(unknown)'), duration_ms ${EDGE_CALLS(EDGE_2)} AND duration_ms IS NOT NULL`;

/** Distinct sessions with an event in the window, without null and the placeholder `unknown`. */
const SESSION_EDGE = (edge: string) => `SELECT session_id FROM events INDEXED BY events_by_ts WHERE ${edge} AND session_id IS NOT NULL AND session_id <> 'unknown'`;
export const SESSIONS_SQL = `SELECT count(*) FROM (
  SELECT session_id FROM session_days WHERE ${DAYS}
  UNION SELECT session_id FROM session_hours WHERE ${HOURS_1}
  UNION SELECT session_id FROM session_hours WHERE ${HOURS_2}
  UNION ${SESSION_EDGE(EDGE_1)}
  UNION ${SESSION_EDGE(EDGE_2)})`;

/**
 * Stagnation (seed 003 §8.1, threshold 3): the runs recorded at insert time (metrics-rollup.ts)
 * whose STAGNATION_THRESHOLD-th consecutive failure of the same call falls in the window.
 */
export const STAGNATION_SQL = 'SELECT count(*) FROM stagnant_runs WHERE ts >= @since AND ts <= @until';

export const TURNS_SQL = "SELECT count(*) FROM events INDEXED BY events_by_type WHERE type = 'turn.stopped' AND ts >= @since AND ts <= @until";

/** Every statement metricsFor runs on the events and their rollups, for the EXPLAIN QUERY PLAN test. */
export const WINDOW_SQL = { TOOL_COUNTS_SQL, TOOL_DURATIONS_SQL, EDGE_DURATIONS_SQL, SESSIONS_SQL, STAGNATION_SQL, TURNS_SQL } as const;

function gatherTools(db: Database, plan: WindowPlan): ToolData[] {
  const histograms = new Map<string, Map<number, Bucket>>();
  const histogram = (tool: string): Map<number, Bucket> => {
    let h = histograms.get(tool);
    if (h === undefined) histograms.set(tool, (h = new Map()));
    return h;
  };
  for (const b of db.prepare(TOOL_DURATIONS_SQL).all(plan) as Array<Bucket & { tool: string }>) histogram(b.tool).set(b.bucket, { bucket: b.bucket, n: b.n, lo: b.lo, hi: b.hi });
  for (const { tool, d } of db.prepare(EDGE_DURATIONS_SQL).all(plan) as Array<{ tool: string; d: number }>) {
    const h = histogram(tool);
    const k = bucketOf(d);
    const b = h.get(k);
    if (b === undefined) h.set(k, { bucket: k, n: 1, lo: d, hi: d });
    else {
      b.n += 1;
      if (d < b.lo) b.lo = d;
      if (d > b.hi) b.hi = d;
    }
  }
  const medianOf = (tool: string): number | null => {
    const h = histograms.get(tool);
    return h === undefined ? null : medianFromBuckets([...h.values()].sort((a, b) => a.bucket - b.bucket));
  };
  return (db.prepare(TOOL_COUNTS_SQL).all(plan) as Array<Omit<ToolData, 'duration_median'>>).map((r) => ({ ...r, duration_median: medianOf(r.tool) }));
}

export function gatherMetricsData(db: Database, since: string, until: string): MetricsData {
  const w = [since, until];
  const plan = planWindow(since, until);
  const sessions = num(db, SESSIONS_SQL, plan);
  const turns = num(db, TURNS_SQL, { since, until });
  const tools = gatherTools(db, plan);
  const stagnantRuns = num(db, STAGNATION_SQL, { since, until });
  const phase = Object.fromEntries(
    PHASES.map((p) => [
      p,
      {
        bounces: num(db, 'SELECT count(*) FROM bounces WHERE phase = ? AND at >= ? AND at <= ?', p, ...w),
        tasks: num(db, 'SELECT count(DISTINCT task_ref) FROM checks WHERE phase = ? AND at >= ? AND at <= ?', p, ...w),
      },
    ]),
  ) as Record<Phase, { bounces: number; tasks: number }>;
  const firsts = db
    .prepare(
      `SELECT c.decision FROM checks c JOIN (SELECT task_ref, min(id) AS id FROM checks WHERE phase = 'review' GROUP BY task_ref) f ON c.id = f.id
       WHERE c.at >= ? AND c.at <= ?`,
    )
    .pluck()
    .all(...w) as string[];
  const actions = { dismiss: 0, confirm: 0, applied: 0, rewritten: 0 };
  for (const r of db.prepare('SELECT action, count(*) AS n FROM learning_actions WHERE at >= ? AND at <= ? GROUP BY action').all(...w) as Array<{ action: string; n: number }>) {
    if (r.action in actions) actions[r.action as keyof typeof actions] = r.n;
  }
  const labelled = db
    .prepare(
      `SELECT s.confidence AS confidence, o.correct AS correct
       FROM (SELECT task_ref, correct, row_number() OVER (PARTITION BY task_ref ORDER BY at DESC, id DESC) AS rn FROM outcomes WHERE at >= ? AND at <= ?) o
       JOIN (SELECT task_ref, confidence, row_number() OVER (PARTITION BY task_ref ORDER BY ts DESC, path DESC) AS rn
             FROM sidecars WHERE valid = 1 AND confidence IS NOT NULL AND task_ref IS NOT NULL) s
         ON s.task_ref = o.task_ref AND s.rn = 1
       WHERE o.rn = 1 ORDER BY o.task_ref`,
    )
    .all(...w) as Array<{ confidence: number; correct: number }>;
  return {
    sessions,
    turns,
    tools,
    stagnant_runs: stagnantRuns,
    phase,
    bounces_resolved: num(db, 'SELECT count(*) FROM bounces WHERE resolved = 1 AND at >= ? AND at <= ?', ...w),
    bounces_closed: num(db, 'SELECT count(*) FROM bounces WHERE resolved IS NOT NULL AND at >= ? AND at <= ?', ...w),
    first_reviews: firsts.length,
    first_reviews_approved: firsts.filter((d) => d === 'approve').length,
    tasks_checked: num(db, 'SELECT count(DISTINCT task_ref) FROM checks WHERE at >= ? AND at <= ?', ...w),
    tasks_diminishing: num(db, "SELECT count(DISTINCT task_ref) FROM checks WHERE rule = 'diminishing_returns' AND at >= ? AND at <= ?", ...w),
    tasks_escalated: num(db, "SELECT count(DISTINCT task_ref) FROM checks WHERE decision = 'escalate' AND at >= ? AND at <= ?", ...w),
    learnings_added: num(db, 'SELECT count(*) FROM learnings WHERE created_at >= ? AND created_at <= ?', ...w),
    actions,
    sidecars: num(db, 'SELECT count(*) FROM sidecars WHERE valid = 1 AND ts >= ? AND ts <= ?', ...w),
    sidecars_degraded: num(db, 'SELECT count(*) FROM sidecars WHERE valid = 1 AND degraded = 1 AND ts >= ? AND ts <= ?', ...w),
    labelled: labelled.map((l) => ({ confidence: l.confidence, correct: l.correct === 1 })),
  };
}

/** The metrics of the `days` days up to `now`. */
export function metricsFor(db: Database, now: number, days: number): Metrics {
  const since = isoMicros(now - days * DAY_MS);
  const until = isoMicros(now);
  return computeMetrics(gatherMetricsData(db, since, until), { days, since, until });
}

export interface Snapshot {
  id: number;
  at: string;
  days: number;
  metrics: Metrics;
}

export function storeSnapshot(db: Database, metrics: Metrics, now: number): Snapshot {
  const at = isoMicros(now);
  const info = db.prepare('INSERT INTO metrics_snapshots (at, days, metrics) VALUES (?, ?, ?)').run(at, metrics.days, JSON.stringify(metrics));
  return { id: Number(info.lastInsertRowid), at, days: metrics.days, metrics };
}

/** The latest `limit` snapshots, oldest first. */
export function latestSnapshots(db: Database, limit: number): Snapshot[] {
  const rows = db.prepare('SELECT * FROM (SELECT id, at, days, metrics FROM metrics_snapshots ORDER BY at DESC, id DESC LIMIT ?) ORDER BY at ASC, id ASC').all(limit) as Array<{
    id: number;
    at: string;
    days: number;
    metrics: string;
  }>;
  return rows.map((r) => ({ ...r, metrics: JSON.parse(r.metrics) as Metrics }));
}
