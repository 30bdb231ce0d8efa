/**
 * `report --format html`: gathers what the page shows from the event log and the sidecars (the same
 * index and filters as the table report), renders the charts to SVG, writes one self-contained file.
 */
import { resolve } from 'node:path';
import type { Database } from 'better-sqlite3';
import { REVIEW_SURFACES } from '@forge-reflect/reflection-types/constants';
import { joinCorpus, type SidecarPoint } from '../../analysis/corpus-join.js';
import { pooledOutcomes } from '../../analysis/pooled-outcomes.js';
import { redactText } from '../../log/redact.js';
import type { SidecarRecord } from '../sidecar-record.js';
import type { ReportSummary } from '../summary.js';
import { reliabilitySpec, surfacesSpec, toolsSpec, turnsSpec } from './charts.js';
import { htmlPage, type BounceRow, type PageModel, type PageSvgs, type SlowCall, type ToolRow, type TurnDetail, type TurnRow } from './page.js';
import { reliabilityOf } from './reliability.js';
import { renderSvg } from './render-svg.js';
import { readRegularText } from '../../regular-file.js';

/** Turns drawn and listed at most (the summary counts all). */
export const MAX_TURNS_DRAWN = 2000;
/** Needs-review turns given a details section at most. */
export const MAX_DETAILS = 500;

export interface HtmlInput {
  db: Database;
  logPath: string;
  dirs: readonly string[];
  filterText: string;
  summary: ReportSummary;
  /** The matching sidecars, newest first (queryValid's order). */
  records: readonly SidecarRecord[];
  now: Date;
}

function toolRows(db: Database): { tools: ToolRow[]; slowest: SlowCall[] } {
  const tools = (
    db
      .prepare(`SELECT tool_name AS tool, COUNT(*) AS calls, SUM(type = 'tool.failed') AS failed,
                     AVG(duration_ms) AS mean_ms, MAX(duration_ms) AS max_ms
              FROM events WHERE type IN ('tool.executed', 'tool.failed') AND tool_name IS NOT NULL
              GROUP BY tool_name ORDER BY calls DESC, tool_name LIMIT 50`)
      .all() as Omit<ToolRow, 'success'>[]
  ).map((r) => ({ ...r, success: r.calls === 0 ? 0 : (r.calls - r.failed) / r.calls }));
  const slowest = db
    .prepare(`SELECT tool_name AS tool, duration_ms, ts AS time, COALESCE(session_id, '') AS session FROM events
              WHERE type IN ('tool.executed', 'tool.failed') AND duration_ms IS NOT NULL AND tool_name IS NOT NULL
              ORDER BY duration_ms DESC LIMIT 10`)
    .all() as SlowCall[];
  return { tools, slowest };
}

function bounceRows(db: Database): BounceRow[] {
  return db
    .prepare(`SELECT task_ref AS task, SUM(decision = 'approve') AS approve, SUM(decision = 'bounce') AS bounce, SUM(decision = 'escalate') AS escalate
              FROM checks GROUP BY task_ref ORDER BY task_ref LIMIT 200`)
    .all() as BounceRow[];
}

function detailOf(turn: number, record: SidecarRecord): TurnDetail {
  const fallback: TurnDetail = {
    turn,
    path: record.path,
    reason: 'the sidecar could not be read again',
    most_likely_wrong: null,
    known_not_in_diff: null,
    files: record.files,
  };
  try {
    const s = JSON.parse(readRegularText(record.path)) as {
      risk?: { reason?: unknown };
      most_likely_wrong?: { surface?: unknown; description?: unknown } | null;
      known_not_in_diff?: unknown;
    };
    const wrong = s.most_likely_wrong;
    return {
      ...fallback,
      reason: redactText(String(s.risk?.reason ?? '')),
      most_likely_wrong: wrong && typeof wrong.description === 'string' ? redactText(`[${String(wrong.surface)}] ${wrong.description}`) : null,
      known_not_in_diff: typeof s.known_not_in_diff === 'string' ? redactText(s.known_not_in_diff) : null,
    };
  } catch {
    return fallback;
  }
}

export function buildModel(input: HtmlInput): PageModel {
  const drawn = [...input.records.slice(0, MAX_TURNS_DRAWN)].reverse(); // oldest first
  const first = input.records.length - drawn.length;
  const turns: TurnRow[] = drawn.map((r, i) => ({
    turn: first + i + 1,
    time: r.timestamp ?? '',
    task: r.task_ref ?? '',
    agent: r.agent ?? '',
    session: r.session_id ?? '',
    surface: r.surface ?? 'none',
    score: r.score ?? 0,
    needs_review: r.needs_review === true,
    confidence: r.confidence,
    degraded: r.degraded === true,
    path: r.path,
  }));
  const details = turns
    .filter((r) => r.needs_review)
    .slice(-MAX_DETAILS)
    .map((r) => detailOf(r.turn, drawn[r.turn - first - 1] as SidecarRecord));
  const surfaces = REVIEW_SURFACES.map((s) => ({ label: s, count: input.summary.by_surface[s] ?? 0 })).filter((b) => b.count > 0);
  const points: SidecarPoint[] = input.records
    .filter((r) => r.task_ref !== null && r.timestamp !== null && r.confidence !== null)
    .map((r) => ({ path: r.path, task_ref: r.task_ref as string, ts: r.timestamp as string, confidence: r.confidence as number }));
  const { outcomes } = pooledOutcomes(input.db, input.logPath, input.dirs);
  const corpus = joinCorpus(points, outcomes);
  const { tools, slowest } = toolRows(input.db);
  return {
    title: 'forge-reflect report',
    generated: input.now.toISOString(),
    sources: input.dirs.map((d) => resolve(d)),
    filter: input.filterText,
    summary: input.summary,
    turns,
    turnsOmitted: input.records.length - drawn.length,
    surfaces,
    reliability: reliabilityOf(corpus.rows),
    tools,
    slowest,
    bounces: bounceRows(input.db),
    details,
  };
}

export async function renderPage(model: PageModel): Promise<string> {
  const svgs: PageSvgs = {};
  if (model.turns.length > 0) {
    svgs.turns = await renderSvg(
      turnsSpec(
        model.turns.map((r) => ({
          turn: r.turn,
          time: r.time,
          score: r.score,
          confidence: r.confidence,
          review: r.needs_review ? 'needs review' : 'no review',
        })),
      ),
      `${model.turns.length} turns; ${model.turns.filter((r) => r.needs_review).length} need review (triangles); squares are the self-reported confidence. The table below lists every value.`,
    );
  }
  if (model.surfaces.length > 0) {
    svgs.surfaces = await renderSvg(surfacesSpec(model.surfaces), model.surfaces.map((b) => `${b.label}: ${b.count}`).join('; '));
  }
  const r = model.reliability;
  if (r.rows > 0 && r.needed === null && r.bins.length > 0) {
    svgs.reliability = await renderSvg(
      reliabilitySpec(r.bins),
      r.bins.map((b) => `confidence ${b.lo.toFixed(1)}–${b.hi.toFixed(1)}: ${b.n} turns, ${(b.accuracy * 100).toFixed(0)}% correct`).join('; '),
    );
  }
  if (model.tools.length > 0) {
    svgs.tools = await renderSvg(
      toolsSpec(model.tools.map((x) => ({ tool: x.tool, success: x.success, calls: x.calls }))),
      model.tools.map((x) => `${x.tool}: ${x.calls} calls, ${(x.success * 100).toFixed(0)}% succeeded`).join('; '),
    );
  }
  return htmlPage(model, svgs);
}
