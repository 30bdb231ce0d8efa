/**
 * P1: every metric, overall and on the self-rated-high subset, and the pre-registered verdict.
 */
import { discrimination, splitByClass, type Discrimination, type Labelled } from './auc.js';
import { bootstrapAuc, type BootstrapResult } from './bootstrap.js';
import { accuracy, brier, eceEqualMass, eceEqualWidth, lift, overconfidence, type Ece } from './calibration.js';
import type { BadRow } from './corpus-rows.js';
import { decide, killCondition, type Verdict, type VerdictRules } from './verdict.js';
import { markdownOpening } from './report-markdown.js';

export interface CalibrationOptions extends VerdictRules {
  high: number;
  bootstrap: number;
  seed: number;
}

export interface GroupMetrics extends Discrimination {
  n: number;
  correct: number;
  wrong: number;
  accuracy: number | null;
  bootstrap: BootstrapResult | null;
  lift: number | null;
  brier: number | null;
  ece_equal_width: Ece | null;
  ece_equal_mass: Ece | null;
  overconfidence: number | null;
  /** Share of wrong rows among rows with confidence >= high. */
  confident_error_rate: number | null;
}

export interface CalibrationReport {
  analysis: 'calibration';
  kill_condition: string;
  options: CalibrationOptions;
  verdict: Verdict;
  reason: string;
  overall: GroupMetrics;
  high: GroupMetrics;
  bad_rows: { count: number; lines: BadRow[] };
}

function group(rows: readonly Labelled[], all: readonly Labelled[], o: CalibrationOptions): GroupMetrics {
  const d = discrimination(rows);
  const { pos, neg } = splitByClass(rows);
  const confident = rows.filter((r) => r.confidence >= o.high);
  return {
    n: rows.length,
    correct: pos.length,
    wrong: neg.length,
    accuracy: accuracy(rows),
    ...d,
    bootstrap: bootstrapAuc(pos, neg, o.bootstrap, o.seed),
    lift: lift(rows, all),
    brier: brier(rows),
    ece_equal_width: eceEqualWidth(rows),
    ece_equal_mass: eceEqualMass(rows),
    overconfidence: overconfidence(rows),
    confident_error_rate: confident.length === 0 ? null : confident.filter((r) => !r.correct).length / confident.length,
  };
}

export const BAD_ROWS_LISTED = 50;

export function calibrationReport(rows: readonly Labelled[], bad: readonly BadRow[], o: CalibrationOptions): CalibrationReport {
  const high = rows.filter((r) => r.confidence >= o.high);
  const overall = group(rows, rows, o);
  const subset = group(high, rows, o);
  let { verdict, reason } = decide(subset, o);
  if (rows.length === 0) reason = bad.length > 0 ? `the corpus has no valid rows (${bad.length} bad)` : 'the corpus is empty';
  return {
    analysis: 'calibration',
    kill_condition: killCondition(o, o.high),
    options: o,
    verdict,
    reason,
    overall,
    high: subset,
    bad_rows: { count: bad.length, lines: bad.slice(0, BAD_ROWS_LISTED) },
  };
}

const num = (x: number | null | undefined, digits = 4) => (x === null || x === undefined ? 'n/a' : x.toFixed(digits));
const ci = (c: [number, number] | null | undefined) => (c ? `[${num(c[0])}, ${num(c[1])}]` : 'n/a');

export function renderCalibrationMarkdown(r: CalibrationReport): string {
  const g = [r.overall, r.high];
  const row = (label: string, f: (m: GroupMetrics) => string) => `| ${label} | ${g.map(f).join(' | ')} |`;
  const lines = [
    ...markdownOpening('P1: calibration of self-reported confidence', r),
    `| metric | overall | high (confidence >= ${r.options.high}) |`,
    '|---|---|---|',
    row('n (correct / wrong)', (m) => `${m.n} (${m.correct} / ${m.wrong})`),
    row('accuracy', (m) => num(m.accuracy)),
    row('ROC AUC', (m) => num(m.auc)),
    row('DeLong SE', (m) => num(m.delong_se)),
    row('DeLong 95% CI', (m) => ci(m.delong_ci)),
    row(`bootstrap 95% CI (B=${r.options.bootstrap}, seed ${r.options.seed})`, (m) => ci(m.bootstrap?.ci)),
    row('lift', (m) => num(m.lift)),
    row('Brier score', (m) => num(m.brier)),
    row('ECE, 15 equal-width bins', (m) => num(m.ece_equal_width?.ece)),
    row('ECE, equal-mass bins', (m) => num(m.ece_equal_mass?.ece)),
    row('overconfidence (mean conf − accuracy)', (m) => num(m.overconfidence)),
    row('distinct confidences', (m) => String(m.distinct_confidences)),
    row('tied correct/wrong pairs', (m) => (m.tied_pair_share === null ? 'n/a' : `${(m.tied_pair_share * 100).toFixed(1)}%`)),
    row(`confident-error rate (wrong among conf >= ${r.options.high})`, (m) => num(m.confident_error_rate)),
    '',
  ];
  if (r.bad_rows.count > 0) {
    lines.push(`Skipped ${r.bad_rows.count} bad row(s): ${r.bad_rows.lines.map((b) => `line ${b.line} (${b.reason})`).join('; ')}`, '');
  }
  return `${lines.join('\n')}\n`;
}
