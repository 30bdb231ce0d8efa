/** Gathers the counts of the loop metrics from the log for a window [since, until]. */
import type { Database } from '../event-log.js';
import { isoMicros } from '../since.js';
import { PHASES, type Phase } from './bounce-core.js';
import { DAY_MS } from './confidence.js';
import { computeMetrics, STAGNATION_THRESHOLD, type Metrics, type MetricsData, type ToolData } from './metrics-core.js';

const num = (db: Database, sql: string, ...params: unknown[]): number => Number(db.prepare(sql).pluck().get(...params) ?? 0);

/** The tool events of the window: the (type, ts) index narrows them; SQL counts, sums and finds medians. */
const TOOL_WINDOW = "FROM events WHERE type IN ('tool.executed', 'tool.failed') AND ts >= ? AND ts <= ?";

export const TOOL_COUNTS_SQL = `SELECT coalesce(tool_name, '(unknown)') AS tool, sum(type = 'tool.executed') AS ok, sum(type = 'tool.failed') AS failed,
  count(duration_ms) AS timed, coalesce(sum(duration_ms), 0) AS duration_sum ${TOOL_WINDOW} GROUP BY 1`;

/** The middle one or two durations of each tool (their mean is the median), by window functions. */
export const TOOL_MEDIAN_SQL = `SELECT tool, avg(duration_ms) AS median FROM (
  SELECT coalesce(tool_name, '(unknown)') AS tool, duration_ms,
         row_number() OVER (PARTITION BY coalesce(tool_name, '(unknown)') ORDER BY duration_ms) AS rn,
         count(*) OVER (PARTITION BY coalesce(tool_name, '(unknown)')) AS n
  ${TOOL_WINDOW} AND duration_ms IS NOT NULL)
WHERE rn IN ((n + 1) / 2, (n + 2) / 2) GROUP BY tool`;

/**
 * Stagnation (seed 003 §8.1, threshold 3): in each session, tool calls in time order; a call's
 * signature is its tool and its input; a run is a maximal sequence of consecutive calls with the
 * same signature and outcome (gaps and islands); the failed runs of 3 or more are counted.
 */
export const STAGNATION_SQL = `WITH calls AS (
  SELECT coalesce(session_id, '') AS s, ts, id, type,
         coalesce(tool_name, '') || char(0) || coalesce(json_extract(payload, '$.tool_input'), '') AS sig
  ${TOOL_WINDOW} AND json_valid(payload)),
runs AS (
  SELECT s, sig, type,
         row_number() OVER (PARTITION BY s ORDER BY ts, id) - row_number() OVER (PARTITION BY s, sig, type ORDER BY ts, id) AS island
  FROM calls)
SELECT count(*) FROM (SELECT 1 FROM runs WHERE type = 'tool.failed' GROUP BY s, sig, island HAVING count(*) >= ${STAGNATION_THRESHOLD})`;

function gatherTools(db: Database, since: string, until: string): ToolData[] {
  const medians = new Map((db.prepare(TOOL_MEDIAN_SQL).all(since, until) as Array<{ tool: string; median: number }>).map((r) => [r.tool, r.median]));
  return (db.prepare(TOOL_COUNTS_SQL).all(since, until) as Array<Omit<ToolData, 'duration_median'>>).map((r) => ({ ...r, duration_median: medians.get(r.tool) ?? null }));
}

export function gatherMetricsData(db: Database, since: string, until: string): MetricsData {
  const w = [since, until];
  const sessions = num(db, "SELECT count(DISTINCT session_id) FROM events WHERE session_id IS NOT NULL AND session_id <> 'unknown' AND ts >= ? AND ts <= ?", ...w);
  const turns = num(db, "SELECT count(*) FROM events WHERE type = 'turn.stopped' AND ts >= ? AND ts <= ?", ...w);
  const tools = gatherTools(db, since, until);
  const stagnantRuns = num(db, STAGNATION_SQL, ...w);
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
