/** The report as text: a terminal table, markdown for a pull request, or CSV. Pure. */
import { formatTable, printable } from '../output.js';
import type { SidecarRecord } from './sidecar-record.js';
import type { ReportSummary } from './summary.js';

export interface ReportView {
  summary: ReportSummary;
  /** The rows to show, newest first (already limited). */
  rows: readonly SidecarRecord[];
  /** Valid rows that matched but were cut by --limit. */
  omitted: number;
  invalid: readonly Pick<SidecarRecord, 'path' | 'error'>[];
}

const percent = (share: number | null) => (share === null ? 'n/a' : `${(share * 100).toFixed(1)}%`);
const fixed = (value: number | null, digits = 2) => (value === null ? '' : value.toFixed(digits));

function filesCell(files: readonly string[], max = 2): string {
  if (files.length === 0) return '0';
  const named = files.slice(0, max).join(', ');
  return `${files.length}: ${named}${files.length > max ? ', …' : ''}`;
}

function summaryPairs(s: ReportSummary): Array<[string, string]> {
  const surfaces = Object.entries(s.by_surface)
    .filter(([, n]) => n > 0)
    .map(([surface, n]) => `${surface} ${n}`)
    .join(', ');
  return [
    ['sidecars', `${s.sidecars}${s.invalid ? ` (+${s.invalid} invalid, listed below)` : ''}`],
    ['needs review', `${s.needs_review} (${percent(s.needs_review_share)})`],
    ['by surface', surfaces || 'none'],
    [
      'self-reported confidence',
      s.mean_confidence === null
        ? `n/a (0 of ${s.sidecars} reported one)`
        : `mean ${fixed(s.mean_confidence)} (${s.confidence_reported} of ${s.sidecars} reported one)`,
    ],
    ['degraded', `${s.degraded} (${percent(s.degraded_share)})`],
  ];
}

function rowCells(r: SidecarRecord): string[] {
  return rawCells(r).map(printable);
}

function rawCells(r: SidecarRecord): string[] {
  return [
    (r.timestamp ?? '').replace('T', ' ').slice(0, 19),
    r.task_ref ?? '',
    r.agent ?? '',
    r.surface ?? '',
    r.score === null ? '' : String(r.score),
    r.needs_review ? 'yes' : 'no',
    fixed(r.confidence),
    filesCell(r.files),
  ];
}

const HEADER = ['TIME (UTC)', 'TASK', 'AGENT', 'SURFACE', 'SCORE', 'REVIEW', 'CONF', 'FILES'];

export function renderTable(view: ReportView): string {
  const lines = summaryPairs(view.summary).map(([k, v]) => `${k.padEnd(25)} ${v}`);
  if (view.rows.length > 0) lines.push('', formatTable(HEADER, view.rows.map(rowCells)));
  if (view.omitted > 0) lines.push(`(+${view.omitted} older; raise --limit to see them)`);
  if (view.invalid.length > 0) {
    lines.push('', `invalid sidecars (${view.invalid.length}):`);
    for (const i of view.invalid) lines.push(`  ${printable(i.path)}: ${printable(i.error ?? '')}`);
  }
  return `${lines.join('\n')}\n`;
}

const mdCell = (text: string) => text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

export function renderMarkdown(view: ReportView): string {
  const out = ['### forge-reflect report', '', '| | |', '| --- | --- |'];
  for (const [k, v] of summaryPairs(view.summary)) out.push(`| ${mdCell(k)} | ${mdCell(v)} |`);
  if (view.rows.length > 0) {
    out.push('', `| ${HEADER.map((h) => h.toLowerCase()).join(' | ')} |`, `| ${HEADER.map(() => '---').join(' | ')} |`);
    for (const r of view.rows) {
      const cells = rowCells(r).map(mdCell);
      cells[5] = r.needs_review ? '**yes**' : 'no';
      out.push(`| ${cells.join(' | ')} |`);
    }
  }
  if (view.omitted > 0) out.push('', `_${view.omitted} older sidecars not shown._`);
  if (view.invalid.length > 0) {
    out.push('', `**Invalid sidecars (${view.invalid.length})**`, '');
    for (const i of view.invalid) out.push(`- \`${i.path.replace(/`/g, "'")}\`: ${mdCell(i.error ?? '')}`);
  }
  return `${out.join('\n')}\n`;
}

/** RFC 4180 quoting, and a leading ' on cells a spreadsheet would run as a formula. */
function csvCell(raw: string): string {
  const value = printable(raw);
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export const CSV_COLUMNS = [
  'timestamp',
  'task_ref',
  'agent',
  'session_id',
  'repo',
  'surface',
  'score',
  'needs_review',
  'confidence',
  'degraded',
  'mode',
  'attempt',
  'files_count',
  'files',
  'path',
] as const;

export function renderCsv(view: ReportView): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of view.rows) {
    const cells = [
      r.timestamp ?? '',
      r.task_ref ?? '',
      r.agent ?? '',
      r.session_id ?? '',
      r.repo ?? '',
      r.surface ?? '',
      r.score === null ? '' : String(r.score),
      String(r.needs_review),
      r.confidence === null ? '' : String(r.confidence),
      String(r.degraded),
      r.mode ?? '',
      r.attempt === null ? '' : String(r.attempt),
      String(r.files.length),
      r.files.join(' '),
      r.path,
    ];
    lines.push(cells.map(csvCell).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
