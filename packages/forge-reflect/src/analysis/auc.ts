/**
 * Discrimination of a score between two classes: the Mann–Whitney AUC (a tied positive/negative
 * pair counts ½), DeLong's variance from the placements, and how much of the sample is tied.
 * Positives are `correct = 1`, negatives `correct = 0`; the score is the self-reported confidence.
 * Pure; O(n log n).
 */

/** z for a two-sided 95% normal interval. */
export const Z95 = 1.959963984540054;

export interface Labelled {
  confidence: number;
  correct: boolean;
}

export interface Discrimination {
  n_pos: number;
  n_neg: number;
  /** Mann–Whitney AUC; null when a class is empty. */
  auc: number | null;
  /** DeLong standard error; null when a class has fewer than 2 members. */
  delong_se: number | null;
  /** Â ± z·SE, clipped to [0, 1]. */
  delong_ci: [number, number] | null;
  distinct_confidences: number;
  /** Share of the positive/negative pairs whose confidences are equal; null when a class is empty. */
  tied_pair_share: number | null;
}

/** Counts of values in a sorted array below and equal to x. */
function below(sorted: readonly number[], x: number): { less: number; equal: number } {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  let end = lo;
  hi = sorted.length;
  while (end < hi) {
    const mid = (end + hi) >> 1;
    if ((sorted[mid] as number) <= x) end = mid + 1;
    else hi = mid;
  }
  return { less: lo, equal: end - lo };
}

/** AUC = (1/(n₁n₀)) Σ ψ(Xᵢ, Yⱼ); null when either class is empty. */
export function aucOf(pos: readonly number[], neg: readonly number[]): number | null {
  if (pos.length === 0 || neg.length === 0) return null;
  const sortedNeg = [...neg].sort((a, b) => a - b);
  let u = 0;
  for (const x of pos) {
    const { less, equal } = below(sortedNeg, x);
    u += less + equal / 2;
  }
  return u / (pos.length * neg.length);
}

export function splitByClass(rows: readonly Labelled[]): { pos: number[]; neg: number[] } {
  const pos: number[] = [];
  const neg: number[] = [];
  for (const r of rows) (r.correct ? pos : neg).push(r.confidence);
  return { pos, neg };
}

export function discrimination(rows: readonly Labelled[]): Discrimination {
  const { pos, neg } = splitByClass(rows);
  const n1 = pos.length;
  const n0 = neg.length;
  const distinct = new Set(rows.map((r) => r.confidence)).size;
  const out: Discrimination = {
    n_pos: n1,
    n_neg: n0,
    auc: null,
    delong_se: null,
    delong_ci: null,
    distinct_confidences: distinct,
    tied_pair_share: null,
  };
  if (n1 === 0 || n0 === 0) return out;
  const sortedPos = [...pos].sort((a, b) => a - b);
  const sortedNeg = [...neg].sort((a, b) => a - b);
  // Placements: V10(Xi) = share of negatives X beats (ties ½); V01(Yj) = share of positives beating Y.
  let ties = 0;
  const v10 = pos.map((x) => {
    const { less, equal } = below(sortedNeg, x);
    ties += equal;
    return (less + equal / 2) / n0;
  });
  const v01 = neg.map((y) => {
    const { less, equal } = below(sortedPos, y);
    return (n1 - less - equal + equal / 2) / n1;
  });
  const auc = v10.reduce((s, v) => s + v, 0) / n1;
  out.auc = auc;
  out.tied_pair_share = ties / (n1 * n0);
  if (n1 >= 2 && n0 >= 2) {
    const s10 = v10.reduce((s, v) => s + (v - auc) ** 2, 0) / (n1 - 1);
    const s01 = v01.reduce((s, v) => s + (v - auc) ** 2, 0) / (n0 - 1);
    const se = Math.sqrt(s10 / n1 + s01 / n0);
    out.delong_se = se;
    out.delong_ci = [Math.max(0, auc - Z95 * se), Math.min(1, auc + Z95 * se)];
  }
  return out;
}
