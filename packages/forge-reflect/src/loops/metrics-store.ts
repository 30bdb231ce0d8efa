/**
 * Gathers the counts of the loop metrics from the log for a window [since, until]. The tool
 * events are read from their rollups (log/rollups.ts): whole days and hours from the rollups,
 * the two partial edge hours from the events by the (type, ts) index; no query scans the events.
 */
import type { Database } from '../log/event-log.js';
import { isoMicros } from '../since.js';
import { PHASES, type Phase } from './bounce-core.js';
import { DAY_MS } from './confidence.js';
import { computeMetrics, type Metrics, type MetricsData, type ToolData } from './metrics-core.js';
import { CALL_TYPES } from '../log/rollups.js';
import { planWindow, type WindowPlan } from './metrics-window.js';
import { DenseHistogram } from '../log/histogram.js';

const num = (db: Database, sql: string, ...params: unknown[]): number =>
  Number(
    db
      .prepare(sql)
      .pluck()
      .get(...params) ?? 0,
  );

/** The window's parts (planWindow): whole days, whole hours, and the two partial edge hours from the events. */
const DAYS = 'day >= @dayLo AND day < @dayHi';
const HOURS_1 = 'hour >= @h1Lo AND hour < @h1Hi';
const HOURS_2 = 'hour >= @h2Lo AND hour < @h2Hi';
const EDGE_1 = 'ts >= @r1Lo AND ts < @r1Hi';
const EDGE_2 = 'ts >= @r2Lo AND ts <= @r2Hi';
const EDGE_CALLS = (edge: string) => `FROM events INDEXED BY events_by_type WHERE ${CALL_TYPES} AND ${edge}`;

/** Per tool and hour or day of the window: counts, duration sums and histograms (log/rollups.ts). */
export const TOOL_ROLLUPS_SQL = `SELECT tool, ok, failed, timed, duration_sum, durations FROM tool_days WHERE ${DAYS}
  UNION ALL SELECT tool, ok, failed, timed, duration_sum, durations FROM tool_hours WHERE ${HOURS_1}
  UNION ALL SELECT tool, ok, failed, timed, duration_sum, durations FROM tool_hours WHERE ${HOURS_2}`;

/** The calls of the two partial edge hours, from the events by the (type, ts) index. */
export const EDGE_CALLS_SQL = `SELECT coalesce(tool_name, '(unknown)') AS tool, type, duration_ms ${EDGE_CALLS(EDGE_1)}
  UNION ALL SELECT coalesce(tool_name, '(unknown)'), type, duration_ms ${EDGE_CALLS(EDGE_2)}`;

/** Distinct sessions with an event in the window, without null and the placeholder `unknown`. */
const SESSION_EDGE = (edge: string) =>
  `SELECT session_id FROM events INDEXED BY events_by_ts WHERE ${edge} AND session_id IS NOT NULL AND session_id <> 'unknown'`;
export const SESSIONS_SQL = `SELECT count(*) FROM (
  SELECT session_id FROM session_days WHERE ${DAYS}
  UNION SELECT session_id FROM session_hours WHERE ${HOURS_1}
  UNION SELECT session_id FROM session_hours WHERE ${HOURS_2}
  UNION ${SESSION_EDGE(EDGE_1)}
  UNION ${SESSION_EDGE(EDGE_2)})`;

/**
 * Stagnation (seed 003 §8.1, threshold 3): the runs recorded at insert time (log/rollups.ts)
 * whose STAGNATION_THRESHOLD-th consecutive failure of the same call falls in the window.
 */
export const STAGNATION_SQL = 'SELECT count(*) FROM stagnant_runs WHERE ts >= @since AND ts <= @until';

export const TURNS_SQL = "SELECT count(*) FROM events INDEXED BY events_by_type WHERE type = 'turn.stopped' AND ts >= @since AND ts <= @until";

/** Every statement metricsFor runs on the events and their rollups, for the EXPLAIN QUERY PLAN test. */
export const WINDOW_SQL = { TOOL_ROLLUPS_SQL, EDGE_CALLS_SQL, SESSIONS_SQL, STAGNATION_SQL, TURNS_SQL } as const;

interface ToolSum {
  tool: string;
  ok: number;
  failed: number;
  timed: number;
  duration_sum: number;
  durations: DenseHistogram;
}

function gatherTools(db: Database, plan: WindowPlan): ToolData[] {
  const tools = new Map<string, ToolSum>();
  const of = (tool: string): ToolSum => {
    let t = tools.get(tool);
    if (t === undefined) tools.set(tool, (t = { tool, ok: 0, failed: 0, timed: 0, duration_sum: 0, durations: new DenseHistogram() }));
    return t;
  };
  const rollups = db.prepare(TOOL_ROLLUPS_SQL).all(plan) as Array<Omit<ToolSum, 'durations'> & { durations: Uint8Array }>;
  for (const r of rollups) {
    const t = of(r.tool);
    t.ok += r.ok;
    t.failed += r.failed;
    t.timed += r.timed;
    t.duration_sum += r.duration_sum;
    t.durations.addStored(r.durations);
  }
  for (const e of db.prepare(EDGE_CALLS_SQL).all(plan) as Array<{ tool: string; type: string; duration_ms: number | null }>) {
    const t = of(e.tool);
    if (e.type === 'tool.executed') t.ok += 1;
    else t.failed += 1;
    if (e.duration_ms !== null) {
      t.timed += 1;
      t.duration_sum += e.duration_ms;
      t.durations.addValue(e.duration_ms);
    }
  }
  return [...tools.values()].map(({ durations, ...counts }) => ({ ...counts, duration_median: durations.median() }));
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
  for (const r of db.prepare('SELECT action, count(*) AS n FROM learning_actions WHERE at >= ? AND at <= ? GROUP BY action').all(...w) as Array<{
    action: string;
    n: number;
  }>) {
    if (r.action in actions) actions[r.action as keyof typeof actions] = r.n;
  }
  // Each task's latest outcome in the window beside its latest valid sidecar with a confidence (ties
  // by path, newest last). Only the sidecars of tasks with an outcome are ranked, and their path
  // is built for them alone: ranking every sidecar, or reading them through the sidecar_files view,
  // costs in proportion to all the sidecars even when no task has an outcome. No outcome: no sidecar is read.
  const anyOutcome = db.prepare('SELECT 1 FROM outcomes WHERE at >= ? AND at <= ? LIMIT 1').get(...w) !== undefined;
  const labelled = !anyOutcome
    ? []
    : (db
        .prepare(
          `SELECT s.confidence AS confidence, o.correct AS correct
           FROM (SELECT task_ref, correct, row_number() OVER (PARTITION BY task_ref ORDER BY at DESC, id DESC) AS rn FROM outcomes WHERE at >= ? AND at <= ?) o
           JOIN (SELECT task_ref, confidence,
                        row_number() OVER (PARTITION BY task_ref
                          ORDER BY ts DESC, rtrim((SELECT dir FROM sidecar_dirs d WHERE d.id = x.dir_id), '/') || '/' || x.name DESC) AS rn
                 FROM sidecars x WHERE valid = 1 AND confidence IS NOT NULL
                   AND task_ref IN (SELECT task_ref FROM outcomes WHERE at >= ? AND at <= ?)) s
             ON s.task_ref = o.task_ref AND s.rn = 1
           WHERE o.rn = 1 ORDER BY o.task_ref`,
        )
        .all(...w, ...w) as Array<{ confidence: number; correct: number }>);
  // One pass over the sidecars for both counts.
  const sidecarCounts = db
    .prepare('SELECT count(*) AS n, count(CASE WHEN degraded = 1 THEN 1 END) AS degraded FROM sidecars WHERE valid = 1 AND ts >= ? AND ts <= ?')
    .get(...w) as { n: number; degraded: number };
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
    sidecars: sidecarCounts.n,
    sidecars_degraded: sidecarCounts.degraded,
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
  const rows = db
    .prepare('SELECT * FROM (SELECT id, at, days, metrics FROM metrics_snapshots ORDER BY at DESC, id DESC LIMIT ?) ORDER BY at ASC, id ASC')
    .all(limit) as Array<{
    id: number;
    at: string;
    days: number;
    metrics: string;
  }>;
  return rows.map((r) => ({ ...r, metrics: JSON.parse(r.metrics) as Metrics }));
}
