/**
 * The reliability section's numbers from labelled rows: the P1 report (Brier, AUC with its DeLong
 * interval, the verdict), ten equal-width bins, and how many more outcomes of each class are needed
 * before a diagram means anything (the verdict's own minimum per class). Pure.
 */
import type { Labelled } from '../../analysis/auc.js';
import { calibrationReport, type CalibrationOptions } from '../../analysis/calibration-report.js';
import { eceEqualWidth } from '../../analysis/calibration.js';
import { DEFAULT_RULES } from '../../analysis/verdict.js';
import type { Reliability } from './page.js';

export const RELIABILITY_BINS = 10;

export const DEFAULT_CALIBRATION: CalibrationOptions = { ...DEFAULT_RULES, high: 0.7, bootstrap: 0, seed: 0 };

export function reliabilityOf(rows: readonly Labelled[], options: CalibrationOptions = DEFAULT_CALIBRATION): Reliability {
  const correct = rows.filter((r) => r.correct).length;
  const wrong = rows.length - correct;
  const min = options.minPerClass;
  const needed = correct >= min && wrong >= min ? null : { correct: Math.max(0, min - correct), wrong: Math.max(0, min - wrong), min };
  return {
    rows: rows.length,
    correct,
    wrong,
    needed,
    bins: eceEqualWidth(rows, RELIABILITY_BINS)?.bins ?? [],
    report: rows.length === 0 ? null : calibrationReport(rows, [], options),
  };
}
