/**
 * Calibration of {confidence, correct}: the Brier score, the expected calibration error over
 * equal-width and equal-mass bins, and the accuracy-based quantities (lift, confident errors).
 * Pure.
 */
import type { Labelled } from './auc.js';

export const ECE_BINS = 15;

export interface Bin {
  /** Lower (exclusive, except for the first bin) and upper (inclusive) confidence of the bin. */
  lo: number;
  hi: number;
  n: number;
  mean_confidence: number;
  accuracy: number;
}

export interface Ece {
  ece: number;
  /** The largest |accuracy − confidence| of a non-empty bin. */
  mce: number;
  bins: Bin[];
}

/** BS = (1/N) Σ (pᵢ − oᵢ)²; null for an empty sample. */
export function brier(rows: readonly Labelled[]): number | null {
  if (rows.length === 0) return null;
  return rows.reduce((s, r) => s + (r.confidence - (r.correct ? 1 : 0)) ** 2, 0) / rows.length;
}

function summarizeBins(groups: ReadonlyArray<{ lo: number; hi: number; rows: Labelled[] }>, total: number): Ece {
  const bins: Bin[] = [];
  let ece = 0;
  let mce = 0;
  for (const g of groups) {
    if (g.rows.length === 0) continue; // empty bins are dropped
    const n = g.rows.length;
    const conf = g.rows.reduce((s, r) => s + r.confidence, 0) / n;
    const acc = g.rows.filter((r) => r.correct).length / n;
    const gap = Math.abs(acc - conf);
    ece += (n / total) * gap;
    mce = Math.max(mce, gap);
    bins.push({ lo: g.lo, hi: g.hi, n, mean_confidence: conf, accuracy: acc });
  }
  return { ece, mce, bins };
}

/**
 * Equal-width bins ((m−1)/M, m/M], m = 1..M; a confidence of exactly 0 goes to the first bin and
 * a value on an inner edge to the lower bin (as sklearn's calibration_curve). Null when empty.
 */
export function eceEqualWidth(rows: readonly Labelled[], m = ECE_BINS): Ece | null {
  if (rows.length === 0) return null;
  const groups = Array.from({ length: m }, (_, i) => ({ lo: i / m, hi: (i + 1) / m, rows: [] as Labelled[] }));
  for (const r of rows) {
    let k = 0;
    while (k < m - 1 && r.confidence > (k + 1) / m) k++;
    (groups[k] as { rows: Labelled[] }).rows.push(r);
  }
  return summarizeBins(groups, rows.length);
}

/**
 * Equal-mass bins: rows sorted by confidence; a run of equal confidences starting at sorted
 * position s goes, whole, to bin ⌊s·M/N⌋. Cuts therefore snap to value boundaries, so the result
 * never depends on row order, and with few distinct values there are fewer than M bins.
 */
export function eceEqualMass(rows: readonly Labelled[], m = ECE_BINS): Ece | null {
  if (rows.length === 0) return null;
  const sorted = [...rows].sort((a, b) => a.confidence - b.confidence);
  const n = sorted.length;
  const groups: Array<{ lo: number; hi: number; rows: Labelled[]; index: number }> = [];
  let s = 0;
  while (s < n) {
    const value = (sorted[s] as Labelled).confidence;
    let e = s;
    while (e < n && (sorted[e] as Labelled).confidence === value) e++;
    const index = Math.floor((s * m) / n);
    const last = groups[groups.length - 1];
    if (last && last.index === index) {
      last.rows.push(...sorted.slice(s, e));
      last.hi = value;
    } else {
      groups.push({ lo: value, hi: value, rows: sorted.slice(s, e), index });
    }
    s = e;
  }
  return summarizeBins(groups, n);
}

export function accuracy(rows: readonly Labelled[]): number | null {
  if (rows.length === 0) return null;
  return rows.filter((r) => r.correct).length / rows.length;
}

/** mean(confidence) − accuracy: positive means overconfident. */
export function overconfidence(rows: readonly Labelled[]): number | null {
  const acc = accuracy(rows);
  if (acc === null) return null;
  return rows.reduce((s, r) => s + r.confidence, 0) / rows.length - acc;
}

/** Lift(S) = P(correct | S) / P(correct); null when either is undefined or the base rate is 0. */
export function lift(subset: readonly Labelled[], all: readonly Labelled[]): number | null {
  const a = accuracy(subset);
  const base = accuracy(all);
  if (a === null || base === null || base === 0) return null;
  return a / base;
}
