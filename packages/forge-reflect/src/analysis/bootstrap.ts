/**
 * Stratified percentile bootstrap of the AUC (as pROC's ci.auc): positives and negatives are
 * resampled separately with replacement, so no replicate lacks a class. Seeded, so reproducible.
 */
import { aucOf } from './auc.js';
import { mulberry32, randomIndex } from './prng.js';

export interface BootstrapResult {
  replicates: number;
  seed: number;
  /** The 2.5% and 97.5% percentiles (linear interpolation between order statistics). */
  ci: [number, number];
}

/** The p-quantile of sorted values, linear between order statistics (numpy's default). */
export function quantileSorted(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(sorted.length - 1, lo + 1);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (h - lo) * (b - a);
}

export function bootstrapAuc(pos: readonly number[], neg: readonly number[], replicates: number, seed: number): BootstrapResult | null {
  if (pos.length === 0 || neg.length === 0 || replicates < 1) return null;
  const random = mulberry32(seed);
  const values: number[] = [];
  const p = new Array<number>(pos.length);
  const q = new Array<number>(neg.length);
  for (let b = 0; b < replicates; b++) {
    for (let i = 0; i < pos.length; i++) p[i] = pos[randomIndex(random, pos.length)] as number;
    for (let j = 0; j < neg.length; j++) q[j] = neg[randomIndex(random, neg.length)] as number;
    values.push(aucOf(p, q) as number);
  }
  values.sort((a, b) => a - b);
  return { replicates, seed, ci: [quantileSorted(values, 0.025), quantileSorted(values, 0.975)] };
}
