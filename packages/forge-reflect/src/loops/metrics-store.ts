/** Gathers the counts of the loop metrics from the log for a window [since, until]. */
import type { Database } from '../event-log.js';
import { isoMicros } from '../since.js';
import { PHASES, type Phase } from './bounce-core.js';
import { DAY_MS } from './confidence.js';
import { computeMetrics, type Metrics, type MetricsData, type ToolData } from './metrics-core.js';

const num = (db: Database, sql: string, ...params: unknown[]): number => Number(db.prepare(sql).pluck().get(...params) ?? 0);

export function gatherMetricsData(db: Database, since: string, until: string): MetricsData {
  const w = [since, until];
  const sessions = num(db, "SELECT count(DISTINCT session_id) FROM events WHERE session_id IS NOT NULL AND session_id <> 'unknown' AND ts >= ? AND ts <= ?", ...w);
  const turns = num(db, "SELECT count(*) FROM events WHERE type = 'turn.stopped' AND ts >= ? AND ts <= ?", ...w);
  const toolRows = db
    .prepare("SELECT coalesce(tool_name, '(unknown)') AS tool, type, duration_ms FROM events WHERE type IN ('tool.executed', 'tool.failed') AND ts >= ? AND ts <= ?")
    .all(...w) as Array<{ tool: string; type: string; duration_ms: number | null }>;
  const tools = new Map<string, ToolData>();
  for (const r of toolRows) {
    const t = tools.get(r.tool) ?? { tool: r.tool, ok: 0, failed: 0, durations: [] };
    if (r.type === 'tool.executed') t.ok++;
    else t.failed++;
    if (r.duration_ms !== null) t.durations.push(r.duration_ms);
    tools.set(r.tool, t);
  }
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
    tools: [...tools.values()],
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
