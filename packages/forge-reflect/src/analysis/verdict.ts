/**
 * The pre-registered P1 decision on the self-rated-high subset. Written before any data:
 *
 *   INCONCLUSIVE when the subset is empty or has one class, has fewer than `minPerClass` of a class,
 *   has a single distinct confidence, has more than half of its correct/wrong pairs tied, or when
 *   the 95% DeLong interval straddles the band's upper edge (chance + margin).
 *   KILL when the whole interval lies at or below chance + margin (the score does not rank the
 *   subset's outcomes better than the band around chance).
 *   CONTINUE when the whole interval lies above chance + margin.
 *
 * An AUC of 0.5 made by ties is not evidence of chance, hence the tie rules come first.
 */
import type { Discrimination } from './auc.js';

export type Verdict = 'KILL' | 'CONTINUE' | 'INCONCLUSIVE';

export interface VerdictRules {
  chance: number;
  margin: number;
  minPerClass: number;
  /** More than this share of tied correct/wrong pairs is "mostly tied". */
  maxTiedShare: number;
}

export const DEFAULT_RULES: VerdictRules = { chance: 0.5, margin: 0.05, minPerClass: 10, maxTiedShare: 0.5 };

export interface VerdictResult {
  verdict: Verdict;
  reason: string;
}

export function killCondition(rules: VerdictRules, high: number): string {
  const top = rules.chance + rules.margin;
  return (
    `KILL if the 95% DeLong interval of the ROC AUC on the self-rated-high subset (confidence >= ${high}) ` +
    `lies entirely at or below ${fmt(top)} (chance ${rules.chance} + margin ${rules.margin}); CONTINUE if it lies entirely above; ` +
    `INCONCLUSIVE if it straddles ${fmt(top)}, or the subset has fewer than ${rules.minPerClass} correct or wrong rows, ` +
    `a single distinct confidence, or more than ${rules.maxTiedShare * 100}% of its correct/wrong pairs tied.`
  );
}

function fmt(x: number): string {
  return String(Math.round(x * 1e6) / 1e6);
}

export function decide(d: Discrimination, rules: VerdictRules): VerdictResult {
  const n = d.n_pos + d.n_neg;
  if (n === 0) return { verdict: 'INCONCLUSIVE', reason: 'the high subset is empty' };
  if (d.n_pos === 0 || d.n_neg === 0) {
    return { verdict: 'INCONCLUSIVE', reason: `the high subset has one class only (${d.n_pos} correct, ${d.n_neg} wrong): AUC is undefined` };
  }
  if (d.distinct_confidences === 1) {
    return { verdict: 'INCONCLUSIVE', reason: 'every confidence in the high subset is the same value: AUC = 0.5 by construction, not evidence of chance' };
  }
  if (d.tied_pair_share !== null && d.tied_pair_share > rules.maxTiedShare) {
    return {
      verdict: 'INCONCLUSIVE',
      reason: `${fmt(d.tied_pair_share * 100)}% of the correct/wrong pairs in the high subset are tied (more than ${rules.maxTiedShare * 100}%): ties pull AUC to 0.5 mechanically`,
    };
  }
  if (d.n_pos < rules.minPerClass || d.n_neg < rules.minPerClass) {
    return {
      verdict: 'INCONCLUSIVE',
      reason: `too few per class in the high subset (${d.n_pos} correct, ${d.n_neg} wrong; need ${rules.minPerClass} of each)`,
    };
  }
  if (d.delong_ci === null) return { verdict: 'INCONCLUSIVE', reason: 'no DeLong interval (a class has fewer than 2 rows)' };
  const top = rules.chance + rules.margin;
  const [lo, hi] = d.delong_ci;
  const interval = `[${lo.toFixed(4)}, ${hi.toFixed(4)}]`;
  if (hi <= top)
    return { verdict: 'KILL', reason: `the 95% interval ${interval} lies at or below ${fmt(top)}: no discrimination beyond chance on the high subset` };
  if (lo > top) return { verdict: 'CONTINUE', reason: `the 95% interval ${interval} lies above ${fmt(top)}: the score ranks outcomes within the high subset` };
  return { verdict: 'INCONCLUSIVE', reason: `the 95% interval ${interval} straddles ${fmt(top)}: more data needed` };
}
