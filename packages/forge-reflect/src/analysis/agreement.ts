/**
 * Agreement statistics for a hand-labelled sample: Wilson score intervals for proportions and
 * Cohen's kappa for two raters over the same categories. Pure.
 */

import { Z95 } from './auc.js';

export interface Proportion {
  k: number;
  n: number;
  p: number | null;
  /** 95% Wilson score interval; null when n = 0. */
  ci: [number, number] | null;
}

/** Wilson score interval (Wilson 1927) for k successes in n trials; n may be an effective (non-integer) size. */
export function wilson(k: number, n: number, z = Z95): Proportion {
  if (n <= 0) return { k, n, p: null, ci: null };
  const p = k / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return { k, n, p, ci: [Math.max(0, centre - half), Math.min(1, centre + half)] };
}

/** Cohen's kappa of paired categorical ratings; null with no pairs or when chance agreement is 1. */
export function cohenKappa(pairs: ReadonlyArray<readonly [string, string]>): {
  n: number;
  observed: number | null;
  expected: number | null;
  kappa: number | null;
} {
  const n = pairs.length;
  if (n === 0) return { n, observed: null, expected: null, kappa: null };
  const a = new Map<string, number>();
  const b = new Map<string, number>();
  let same = 0;
  for (const [x, y] of pairs) {
    a.set(x, (a.get(x) ?? 0) + 1);
    b.set(y, (b.get(y) ?? 0) + 1);
    if (x === y) same++;
  }
  const observed = same / n;
  let expected = 0;
  for (const [cat, ca] of a) expected += (ca / n) * ((b.get(cat) ?? 0) / n);
  const kappa = expected === 1 ? null : (observed - expected) / (1 - expected);
  return { n, observed, expected, kappa };
}

/** Where an interval lies against a threshold: below (all under it), above (all at or over it), or straddles. */
export function against(ci: [number, number] | null, threshold: number): 'below' | 'above' | 'straddles' | 'unknown' {
  if (!ci) return 'unknown';
  if (ci[1] < threshold) return 'below';
  if (ci[0] >= threshold) return 'above';
  return 'straddles';
}
