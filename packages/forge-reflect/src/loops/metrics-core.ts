/**
 * The loop metrics (docs/metrics.md gives each formula). Pure: metrics-store.ts gathers the counts
 * from the log for a window; this module divides. A ratio with a zero denominator is `null`
 * (shown `n/a`), never 0 or NaN.
 */
import type { Phase } from './bounce-core.js';
import { PHASES } from './bounce-core.js';

export const METRIC_WINDOWS = [7, 30, 90] as const;
export const CONFIDENT = 0.7;

/** One tool's calls in the window, counted by SQL (no row is loaded): calls, failures, durations. */
export interface ToolData {
  tool: string;
  ok: number;
  failed: number;
  /** Calls that carry a duration, their sum, and their median (null when none). */
  timed: number;
  duration_sum: number;
  duration_median: number | null;
}

/** Counted at insert time, by the rollups. */
export { STAGNATION_THRESHOLD } from '../log/stagnation.js';

export interface MetricsData {
  sessions: number;
  turns: number;
  tools: ToolData[];
  /** Runs of STAGNATION_THRESHOLD or more consecutive failures of one same call within a session. */
  stagnant_runs: number;
  /** Per phase: bounces recorded in the window and distinct tasks checked in that phase in the window. */
  phase: Record<Phase, { bounces: number; tasks: number }>;
  /** Bounces in the window whose next check is known: resolved (next check approved) or not. */
  bounces_resolved: number;
  bounces_closed: number;
  /** Tasks whose first review check falls in the window, and how many of those approved. */
  first_reviews: number;
  first_reviews_approved: number;
  /** Tasks checked in the window; of those, with a diminishing-returns escalation, with any escalation. */
  tasks_checked: number;
  tasks_diminishing: number;
  tasks_escalated: number;
  learnings_added: number;
  actions: { dismiss: number; confirm: number; applied: number; rewritten: number };
  sidecars: number;
  sidecars_degraded: number;
  /** One per labelled task: its latest self-reported confidence and its latest outcome. */
  labelled: Array<{ confidence: number; correct: boolean }>;
}

export interface Metrics {
  days: number;
  since: string;
  until: string;
  sessions: number;
  tool_success_rate: number | null;
  /** Per tool: its success rate (toolSuccessRate[tool]), calls, and median and mean duration in ms. */
  tools: Record<string, { calls: number; success_rate: number | null; median_ms: number | null; mean_ms: number | null }>;
  tool_median_ms: Record<string, number | null>;
  /** Stagnation: runs of 3+ consecutive failures of the same tool call (same tool, same input) in a session. */
  stagnant_runs: number | null;
  tool_calls_per_turn: number | null;
  avg_bounces_per_task: Record<Phase, number | null>;
  bounce_resolution_rate: number | null;
  first_pass_approval_rate: number | null;
  diminishing_returns_rate: number | null;
  escalation_rate: number | null;
  learnings_per_session: number | null;
  dismissal_rate: number | null;
  human_override_rate: number | null;
  degraded_sidecar_rate: number | null;
  calibration: { labelled: number; confident: number; accuracy_when_confident: number | null };
}

export function ratio(numerator: number, denominator: number): number | null {
  return denominator === 0 ? null : numerator / denominator;
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function computeMetrics(data: MetricsData, window: { days: number; since: string; until: string }): Metrics {
  const ok = data.tools.reduce((s, t) => s + t.ok, 0);
  const failed = data.tools.reduce((s, t) => s + t.failed, 0);
  const a = data.actions;
  const confident = data.labelled.filter((l) => l.confidence >= CONFIDENT);
  return {
    ...window,
    sessions: data.sessions,
    tool_success_rate: ratio(ok, ok + failed),
    tools: Object.fromEntries(
      [...data.tools]
        .sort((x, y) => x.tool.localeCompare(y.tool))
        .map((t) => [
          t.tool,
          { calls: t.ok + t.failed, success_rate: ratio(t.ok, t.ok + t.failed), median_ms: t.duration_median, mean_ms: ratio(t.duration_sum, t.timed) },
        ]),
    ),
    tool_median_ms: Object.fromEntries([...data.tools].sort((x, y) => x.tool.localeCompare(y.tool)).map((t) => [t.tool, t.duration_median])),
    stagnant_runs: ok + failed === 0 ? null : data.stagnant_runs,
    tool_calls_per_turn: ratio(ok + failed, data.turns),
    avg_bounces_per_task: Object.fromEntries(PHASES.map((p) => [p, ratio(data.phase[p].bounces, data.phase[p].tasks)])) as Record<Phase, number | null>,
    bounce_resolution_rate: ratio(data.bounces_resolved, data.bounces_closed),
    first_pass_approval_rate: ratio(data.first_reviews_approved, data.first_reviews),
    diminishing_returns_rate: ratio(data.tasks_diminishing, data.tasks_checked),
    escalation_rate: ratio(data.tasks_escalated, data.tasks_checked),
    learnings_per_session: ratio(data.learnings_added, data.sessions),
    dismissal_rate: ratio(a.dismiss, a.dismiss + a.confirm + a.applied + a.rewritten),
    human_override_rate: ratio(a.rewritten, a.applied + a.rewritten),
    degraded_sidecar_rate: ratio(data.sidecars_degraded, data.sidecars),
    calibration: {
      labelled: data.labelled.length,
      confident: confident.length,
      accuracy_when_confident: ratio(confident.filter((l) => l.correct).length, confident.length),
    },
  };
}

type Kind = 'rate' | 'count' | 'ms' | 'number';

/** The metrics as ordered display rows: label, value (null = n/a), kind. */
export function metricRows(m: Metrics): Array<[string, number | null, Kind]> {
  const rows: Array<[string, number | null, Kind]> = [
    ['sessions', m.sessions, 'count'],
    ['tool success rate', m.tool_success_rate, 'rate'],
    ['tool calls per turn', m.tool_calls_per_turn, 'number'],
  ];
  for (const [tool, t] of Object.entries(m.tools ?? {})) {
    rows.push([`success rate: ${tool}`, t.success_rate, 'rate'], [`median duration: ${tool}`, t.median_ms, 'ms'], [`mean duration: ${tool}`, t.mean_ms, 'ms']);
  }
  rows.push(['stagnant runs (3+ same failing call in a row)', m.stagnant_runs ?? null, 'count']);
  for (const p of PHASES) rows.push([`avg bounces per task: ${p}`, m.avg_bounces_per_task[p], 'number']);
  rows.push(
    ['bounce resolution rate', m.bounce_resolution_rate, 'rate'],
    ['first-pass approval rate', m.first_pass_approval_rate, 'rate'],
    ['diminishing-returns rate', m.diminishing_returns_rate, 'rate'],
    ['escalation rate', m.escalation_rate, 'rate'],
    ['learnings per session', m.learnings_per_session, 'number'],
    ['dismissal rate', m.dismissal_rate, 'rate'],
    ['human override rate', m.human_override_rate, 'rate'],
    ['degraded sidecar rate', m.degraded_sidecar_rate, 'rate'],
    ['outcomes labelled', m.calibration.labelled, 'count'],
    ['accuracy when confidence >= 0.7', m.calibration.accuracy_when_confident, 'rate'],
  );
  return rows;
}

export function formatMetric(value: number | null, kind: Kind): string {
  if (value === null || !Number.isFinite(value)) return 'n/a';
  if (kind === 'rate') return `${(value * 100).toFixed(1)}%`;
  if (kind === 'count') return String(value);
  if (kind === 'ms') return `${Math.round(value)} ms`;
  return value.toFixed(2);
}
