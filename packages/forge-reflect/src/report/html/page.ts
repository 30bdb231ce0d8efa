/**
 * The self-contained HTML page: every figure as an inline SVG (already rendered) next to a table of
 * the numbers it shows, no script, no external resource. Pure: a model and the SVGs in, text out.
 */
import type { CalibrationReport } from '../../analysis/calibration-report.js';
import type { ReportSummary } from '../summary.js';
import { escapeAttr, escapeText } from './render-svg.js';
import type { ReliabilityBin } from './charts.js';

export interface TurnRow {
  turn: number;
  time: string;
  task: string;
  agent: string;
  session: string;
  surface: string;
  score: number;
  needs_review: boolean;
  confidence: number | null;
  degraded: boolean;
  path: string;
}

export interface TurnDetail {
  turn: number;
  path: string;
  reason: string;
  most_likely_wrong: string | null;
  known_not_in_diff: string | null;
  files: string[];
}

export interface ToolRow {
  tool: string;
  calls: number;
  failed: number;
  success: number;
  mean_ms: number | null;
  max_ms: number | null;
}

export interface SlowCall {
  tool: string;
  duration_ms: number;
  time: string;
  session: string;
}

export interface BounceRow {
  task: string;
  approve: number;
  bounce: number;
  escalate: number;
}

export interface Reliability {
  /** Outcomes joined with sidecars (the corpus). */
  rows: number;
  correct: number;
  wrong: number;
  /** Correct and wrong outcomes still missing before the diagram means anything. */
  needed: { correct: number; wrong: number; min: number } | null;
  bins: ReliabilityBin[];
  report: CalibrationReport | null;
}

export interface PageModel {
  title: string;
  generated: string;
  sources: string[];
  filter: string;
  summary: ReportSummary | null;
  turns: TurnRow[];
  /** Turns left out of the chart and tables (only the most recent are drawn). */
  turnsOmitted: number;
  surfaces: { label: string; count: number }[];
  reliability: Reliability;
  tools: ToolRow[];
  slowest: SlowCall[];
  bounces: BounceRow[];
  details: TurnDetail[];
}

export interface PageSvgs {
  turns?: string;
  surfaces?: string;
  reliability?: string;
  tools?: string;
}

const t = escapeText;
const num = (x: number | null | undefined, digits = 2) => (x === null || x === undefined ? 'n/a' : x.toFixed(digits));
const pct = (x: number | null | undefined) => (x === null || x === undefined ? 'n/a' : `${(x * 100).toFixed(1)}%`);

function table(caption: string, head: string[], rows: string[][]): string {
  return `<table><caption>${t(caption)}</caption><thead><tr>${head.map((h) => `<th scope="col">${t(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

function figure(svg: string | undefined, empty: string): string {
  return svg ? `<figure class="chart">${svg}</figure>` : `<p class="empty">${t(empty)}</p>`;
}

const STYLE = `
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --warn: #b42318; }
@media (prefers-color-scheme: dark) { :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9da7b3; --line: #30363d; --warn: #ff7b72; } }
body { background: var(--bg); color: var(--fg); font: 15px/1.5 system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; margin-top: 2.5rem; border-bottom: 1px solid var(--line); }
.meta, caption, .note { color: var(--muted); } caption { text-align: left; padding: .3rem 0; }
dl.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(11rem, 1fr)); gap: .8rem; }
dl.figures div { border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem; }
dl.figures dt { color: var(--muted); font-size: .85rem; } dl.figures dd { margin: 0; font-size: 1.4rem; font-weight: 600; }
table { border-collapse: collapse; margin: .8rem 0; font-size: .9rem; } th, td { border-bottom: 1px solid var(--line); padding: .25rem .6rem; text-align: left; vertical-align: top; }
figure.chart { margin: 1rem 0; color: var(--fg); } figure.chart svg { max-width: 100%; height: auto; }
.review { color: var(--warn); font-weight: 600; } .empty { border: 1px dashed var(--line); padding: 1rem; }
code { font-size: .9em; } section.turn { border-top: 1px solid var(--line); padding-top: .5rem; }
`;

function summarySection(m: PageModel): string {
  const s = m.summary;
  if (!s || s.sidecars === 0) {
    return `<section><h2>Summary</h2><p class="empty">No sidecars${m.filter ? ' match these filters' : ' yet'}. Sidecars are written at the end of every agent turn once the hooks are installed (<code>forge-reflect install</code>) and <code>REFLECTION_MODE=solo</code> is set where the agent starts; <code>forge-reflect demo</code> shows a whole session.</p></section>`;
  }
  const figures: [string, string][] = [
    ['turns', String(s.sidecars)],
    ['need review', `${s.needs_review} (${pct(s.needs_review_share)})`],
    ['mean confidence', s.mean_confidence === null ? 'n/a' : `${num(s.mean_confidence)} (${s.confidence_reported} reported)`],
    ['degraded', `${s.degraded} (${pct(s.degraded_share)})`],
    ['outcomes labelled', String(m.reliability.rows)],
  ];
  return `<section><h2>Summary</h2><dl class="figures">${figures.map(([k, v]) => `<div><dt>${t(k)}</dt><dd>${t(v)}</dd></div>`).join('')}</dl>${
    s.invalid > 0 ? `<p class="note">${s.invalid} file(s) in the folders are not valid sidecars and are not counted.</p>` : ''
  }</section>`;
}

function turnsSection(m: PageModel, svg: string | undefined): string {
  if (m.turns.length === 0) return `<section><h2>Turns over time</h2><p class="empty">No turns to draw.</p></section>`;
  const rows = m.turns.map((r) => [
    String(r.turn),
    t(r.time),
    t(r.task),
    t(r.surface),
    num(r.score),
    r.needs_review ? `<a class="review" href="#turn-${r.turn}">▲ needs review</a>` : 'no',
    num(r.confidence),
    r.degraded ? 'yes' : 'no',
  ]);
  return `<section><h2>Turns over time</h2>${figure(svg, 'No turns to draw.')}${
    m.turnsOmitted > 0 ? `<p class="note">${m.turnsOmitted} older turn(s) are counted in the summary but not drawn.</p>` : ''
  }<details><summary>The numbers (one row per turn)</summary>${table('Turns: risk score (▲ = needs review) and self-reported confidence', ['turn', 'time (UTC)', 'task', 'surface', 'risk score', 'review', 'confidence', 'degraded'], rows)}</details></section>`;
}

function surfacesSection(m: PageModel, svg: string | undefined): string {
  const rows = m.surfaces.map((b) => [t(b.label), String(b.count)]);
  return `<section><h2>Surfaces</h2>${figure(svg, 'No turns, so no surfaces.')}${rows.length > 0 ? table('Turns per risk surface', ['surface', 'turns'], rows) : ''}</section>`;
}

function reliabilitySection(r: Reliability, svg: string | undefined): string {
  const head = '<h2>Does self-reported confidence mean anything? (reliability)</h2>';
  if (r.rows === 0) {
    return `<section>${head}<p class="empty">No outcomes are recorded yet, so confidence cannot be checked against what turned out true. Record one per task with <code>forge-reflect outcome --task acme#42 --correct</code> (or <code>--wrong --source revert</code>); <code>forge-reflect corpus</code> then joins them with the sidecars' confidence.</p></section>`;
  }
  const p = r.report;
  const auc = p?.overall.auc ?? null;
  const ci = p?.overall.delong_ci ?? null;
  const metrics = `<p>${r.rows} labelled turn(s): ${r.correct} correct, ${r.wrong} wrong. Brier score ${num(p?.overall.brier ?? null, 3)} (0 is perfect, 0.25 is a constant 0.5). ROC AUC ${num(auc, 3)}${
    ci ? ` (95% DeLong interval ${num(ci[0], 3)}–${num(ci[1], 3)})` : ''
  }. P1 verdict on the self-rated-high subset: <strong>${t(p?.verdict ?? 'INCONCLUSIVE')}</strong>: ${t(p?.reason ?? '')}.</p>`;
  if (r.needed) {
    return `<section>${head}${metrics}<p class="empty">Too few outcomes to draw a reliability diagram without drawing noise: ${r.needed.correct} more correct and ${r.needed.wrong} more wrong outcome(s) are needed (at least ${r.needed.min} of each).</p></section>`;
  }
  const rows = r.bins.map((b) => [`${num(b.lo, 1)}–${num(b.hi, 1)}`, String(b.n), num(b.mean_confidence), num(b.accuracy)]);
  return `<section>${head}${figure(svg, 'No bins.')}${metrics}${table('Per confidence bin: turns, mean confidence, share correct (the diagonal is perfect calibration)', ['bin', 'turns', 'mean confidence', 'share correct'], rows)}</section>`;
}

function toolsSection(m: PageModel, svg: string | undefined): string {
  if (m.tools.length === 0) return `<section><h2>Tools</h2><p class="empty">No tool calls in the event log.</p></section>`;
  const rows = m.tools.map((x) => [t(x.tool), String(x.calls), String(x.failed), pct(x.success), num(x.mean_ms, 0), num(x.max_ms, 0)]);
  const slow = m.slowest.map((x) => [t(x.tool), String(x.duration_ms), t(x.time), t(x.session)]);
  return `<section><h2>Tools</h2>${figure(svg, '')}${table('Tool calls per tool (durations in ms, where the runtime gives them)', ['tool', 'calls', 'failed', 'success', 'mean ms', 'max ms'], rows)}${
    slow.length > 0
      ? table('The slowest tool calls', ['tool', 'duration (ms)', 'time (UTC)', 'session'], slow)
      : '<p class="note">The runtime gave no durations.</p>'
  }</section>`;
}

function bouncesSection(m: PageModel): string {
  if (m.bounces.length === 0) return '';
  const rows = m.bounces.map((b) => [t(b.task), String(b.approve), String(b.bounce), String(b.escalate)]);
  return `<section><h2>Bounce outcomes</h2>${table('Checks per task (forge-reflect bounce)', ['task', 'approve', 'bounce', 'escalate'], rows)}</section>`;
}

function reviewSection(m: PageModel): string {
  if (m.details.length === 0) return `<section><h2>Turns needing review</h2><p class="note">None.</p></section>`;
  const list = m.details.map((d) => {
    const row = m.turns.find((r) => r.turn === d.turn);
    return `<li><a href="#turn-${d.turn}">turn ${d.turn}</a> ${t(row?.time ?? '')} ${t(row?.task ?? '')} (${t(row?.surface ?? '')})</li>`;
  });
  const details = m.details.map(
    (d) => `<section class="turn" id="turn-${d.turn}"><h3>Turn ${d.turn}</h3><p class="meta"><code>${t(d.path)}</code></p><dl>
<dt>risk floor</dt><dd>${t(d.reason)}</dd>
<dt>most likely wrong</dt><dd>${d.most_likely_wrong === null ? 'not reported' : t(d.most_likely_wrong)}</dd>
<dt>not in the diff</dt><dd>${d.known_not_in_diff === null ? 'not reported' : t(d.known_not_in_diff)}</dd>
<dt>files (${d.files.length})</dt><dd>${d.files
      .slice(0, 50)
      .map((f) => `<code>${t(f)}</code>`)
      .join(', ')}${d.files.length > 50 ? ` … +${d.files.length - 50}` : ''}</dd></dl></section>`,
  );
  return `<section><h2>Turns needing review</h2><ul>${list.join('')}</ul>${details.join('')}</section>`;
}

export function htmlPage(m: PageModel, svgs: PageSvgs): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${t(m.title)}</title><style>${STYLE}</style></head>
<body><header><h1>${t(m.title)}</h1><p class="meta">Generated ${t(m.generated)} from ${m.sources.map((s) => `<code>${t(s)}</code>`).join(', ')}${
    m.filter ? `; filters: <code>${t(m.filter)}</code>` : ''
  }</p></header>
<main>${summarySection(m)}${turnsSection(m, svgs.turns)}${surfacesSection(m, svgs.surfaces)}${reliabilitySection(m.reliability, svgs.reliability)}${toolsSection(m, svgs.tools)}${bouncesSection(m)}${reviewSection(m)}</main>
</body></html>
`;
}

/** A page with only the reliability section, for `analyze calibration --format html`. */
export function reliabilityPage(title: string, generated: string, source: string, r: Reliability, svg: string | undefined): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${t(title)}</title><style>${STYLE}</style></head>
<body><header><h1>${t(title)}</h1><p class="meta">Generated ${t(generated)} from <code>${escapeAttr(source)}</code></p></header>
<main>${reliabilitySection(r, svg)}</main></body></html>
`;
}
