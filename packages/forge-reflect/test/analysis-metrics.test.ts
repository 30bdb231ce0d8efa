/**
 * P1 math with answers worked out by hand here (not by the code under test): AUC with ties,
 * DeLong, bootstrap, Brier, ECE (equal-width and equal-mass), lift, confident errors, verdicts.
 */
import { describe, expect, it } from 'vitest';
import { aucOf, discrimination, type Labelled } from '../src/analysis/auc.js';
import { bootstrapAuc, quantileSorted } from '../src/analysis/bootstrap.js';
import { brier, eceEqualMass, eceEqualWidth, lift, overconfidence } from '../src/analysis/calibration.js';
import { calibrationReport, renderCalibrationMarkdown } from '../src/analysis/calibration-report.js';
import { parseCorpus } from '../src/analysis/corpus-rows.js';
import { mulberry32 } from '../src/analysis/prng.js';
import { decide, DEFAULT_RULES } from '../src/analysis/verdict.js';

const rows = (conf: number[], correct: number[]): Labelled[] => conf.map((c, i) => ({ confidence: c, correct: correct[i] === 1 }));
// The reference vector of analysis-methods.md §1.2.
const VECTOR = rows([0.9, 0.9, 0.9, 0.7, 0.7, 0.7, 0.5, 0.5, 0.9, 0.5], [1, 0, 1, 1, 0, 0, 0, 1, 1, 0]);
const OPTIONS = { ...DEFAULT_RULES, high: 0.7, bootstrap: 200, seed: 7 };

describe('AUC and DeLong', () => {
  it('reproduces the reference vector: AUC 0.7, Var 0.031, CI clipped at 1', () => {
    const d = discrimination(VECTOR);
    // pos {0.9,0.9,0.9,0.7,0.5}, neg {0.9,0.7,0.7,0.5,0.5}: U = 3·4.5 + 2 + 0.5·... = 17.5 of 25
    expect(d.auc).toBeCloseTo(0.7, 12);
    expect((d.delong_se as number) ** 2).toBeCloseTo(0.031, 12);
    expect(d.delong_se).toBeCloseTo(0.176068, 6);
    expect(d.delong_ci?.[0]).toBeCloseTo(0.7 - 1.959963984540054 * Math.sqrt(0.031), 12);
    expect(d.delong_ci?.[1]).toBe(1);
    // tied pairs: 0.9: 3·1, 0.7: 1·2, 0.5: 1·2 → 7 of 25
    expect(d.tied_pair_share).toBeCloseTo(7 / 25, 12);
    expect(d.distinct_confidences).toBe(3);
  });

  it('a small untied case: pos {0.9,0.6}, neg {0.7,0.3} → AUC 3/4, Var 1/8', () => {
    const d = discrimination(rows([0.9, 0.6, 0.7, 0.3], [1, 1, 0, 0]));
    expect(d.auc).toBe(0.75);
    // V10 = {1, ½}, V01 = {½, 1}; S10 = S01 = 2·(¼)²/1 = ⅛; Var = ⅛/2 + ⅛/2
    expect(d.delong_se).toBeCloseTo(Math.sqrt(0.125), 12);
    expect(d.tied_pair_share).toBe(0);
  });

  it('ties count one half; all-equal confidences give 0.5 by construction', () => {
    expect(aucOf([0.8], [0.8])).toBe(0.5);
    expect(aucOf([0.8, 0.9], [0.8])).toBe(0.75);
    const d = discrimination(rows([0.9, 0.9, 0.9, 0.9], [1, 0, 1, 0]));
    expect(d.auc).toBe(0.5);
    expect(d.tied_pair_share).toBe(1);
    expect(d.distinct_confidences).toBe(1);
    expect(d.delong_se).toBe(0); // every placement is ½
  });

  it('perfect and inverted separation', () => {
    const perfect = discrimination(rows([0.9, 0.8, 0.2, 0.1], [1, 1, 0, 0]));
    expect(perfect.auc).toBe(1);
    expect(perfect.delong_se).toBe(0);
    expect(perfect.delong_ci).toEqual([1, 1]);
    expect(discrimination(rows([0.9, 0.8, 0.2, 0.1], [0, 0, 1, 1])).auc).toBe(0);
  });

  it('one class, or n = 1: no AUC and no interval', () => {
    const one = discrimination(rows([0.9, 0.5], [1, 1]));
    expect(one.auc).toBeNull();
    expect(one.delong_ci).toBeNull();
    expect(one.tied_pair_share).toBeNull();
    const pair = discrimination(rows([0.9, 0.5], [1, 0]));
    expect(pair.auc).toBe(1);
    expect(pair.delong_se).toBeNull(); // DeLong needs two of each class
  });
});

describe('bootstrap', () => {
  it('is reproducible with a seed and changes with another', () => {
    const pos = [0.9, 0.9, 0.9, 0.7, 0.5];
    const neg = [0.9, 0.7, 0.7, 0.5, 0.5];
    const a = bootstrapAuc(pos, neg, 500, 42);
    expect(bootstrapAuc(pos, neg, 500, 42)).toEqual(a);
    expect(bootstrapAuc(pos, neg, 500, 43)?.ci).not.toEqual(a?.ci);
    expect(a?.ci[0]).toBeGreaterThanOrEqual(0);
    expect(a?.ci[1]).toBeLessThanOrEqual(1);
    expect(a?.ci[0]).toBeLessThan(0.7);
    expect(a?.ci[1]).toBeGreaterThan(0.7);
    expect(bootstrapAuc([], neg, 10, 1)).toBeNull();
  });

  it('perfect separation resamples to AUC 1 every time', () => {
    expect(bootstrapAuc([0.9, 0.8], [0.2, 0.1], 100, 3)?.ci).toEqual([1, 1]);
  });

  it('percentiles interpolate linearly; the PRNG is in [0, 1) and seeded', () => {
    expect(quantileSorted([0, 10], 0.025)).toBeCloseTo(0.25, 12);
    expect(quantileSorted([1, 2, 3, 4, 5], 0.5)).toBe(3);
    const r1 = mulberry32(5);
    const r2 = mulberry32(5);
    const xs = Array.from({ length: 1000 }, () => r1());
    expect(xs).toEqual(Array.from({ length: 1000 }, () => r2()));
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
  });
});

describe('calibration metrics', () => {
  it('Brier of the reference vector is 2.66 / 10', () => {
    // 3·0.1² + 0.9² + 0.3² + 2·0.7² + 2·0.5² + 0.5² = 0.03 + 0.81 + 0.09 + 0.98 + 0.5 + 0.25
    expect(brier(VECTOR)).toBeCloseTo(0.266, 12);
    expect(brier([{ confidence: 0.8, correct: true }])).toBeCloseTo(0.04, 12);
    expect(brier([])).toBeNull();
  });

  it('equal-width ECE (15 bins) of the reference vector is 0.22', () => {
    // bins of 0.5 (acc ⅓), 0.7 (acc ⅓), 0.9 (acc ¾): 0.3·⅙ + 0.3·(0.7 − ⅓) + 0.4·0.15
    const e = eceEqualWidth(VECTOR);
    expect(e?.ece).toBeCloseTo(0.22, 12);
    expect(e?.bins.map((b) => b.n)).toEqual([3, 3, 4]);
    expect(e?.mce).toBeCloseTo(0.7 - 1 / 3, 12);
  });

  it('equal-width bins are right-closed; 0 goes to the first bin', () => {
    const e = eceEqualWidth([
      { confidence: 0.4, correct: true },
      { confidence: 0, correct: false },
    ]);
    expect(e?.bins[0]?.lo).toBe(0);
    expect(e?.bins[1]?.hi).toBeCloseTo(6 / 15, 12); // 0.4 = 6/15 sits at the top of bin 6
    expect(e?.bins[1]?.lo).toBeCloseTo(5 / 15, 12);
  });

  it('equal-mass bins snap to value boundaries and ignore row order', () => {
    const r = rows([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1]);
    // M = 2: {0.1, 0.2} (conf .15, acc .5) and {0.3, 0.4} (conf .35, acc .5) → ½·.35 + ½·.15
    expect(eceEqualMass(r, 2)?.ece).toBeCloseTo(0.25, 12);
    expect(eceEqualMass([...r].reverse(), 2)?.ece).toBeCloseTo(0.25, 12);
    // a run of ties is never split: {0.5×3} stays together, {0.9} alone
    const tied = rows([0.5, 0.5, 0.5, 0.9], [1, 0, 0, 1]);
    const e = eceEqualMass(tied, 2);
    expect(e?.bins.map((b) => b.n)).toEqual([3, 1]);
    expect(e?.ece).toBeCloseTo(0.75 * (0.5 - 1 / 3) + 0.25 * 0.1, 12);
    expect(eceEqualMass(VECTOR)?.ece).toBeCloseTo(0.22, 12);
  });

  it('lift, overconfidence and the confident-error rate', () => {
    const high = VECTOR.filter((r) => r.confidence >= 0.7); // 7 rows, 4 correct
    expect(lift(high, VECTOR)).toBeCloseTo(4 / 7 / 0.5, 12);
    expect(overconfidence(VECTOR)).toBeCloseTo(0.72 - 0.5, 12);
    const report = calibrationReport(VECTOR, [], OPTIONS);
    expect(report.high.n).toBe(7);
    expect(report.high.correct).toBe(4);
    expect(report.high.wrong).toBe(3);
    expect(report.high.confident_error_rate).toBeCloseTo(3 / 7, 12);
    expect(report.overall.lift).toBe(1);
    // high subset AUC: pos {0.9,0.9,0.9,0.7} vs neg {0.9,0.7,0.7}: (3·2.5 + 1·1)/12
    expect(report.high.auc).toBeCloseTo(8.5 / 12, 12);
  });
});

describe('verdicts', () => {
  const spread = (n: number, offset: number) => Array.from({ length: n }, (_, i) => (2 * i + offset) / (4 * n));

  it('all-equal, one class, too few, mostly tied: INCONCLUSIVE with the reason', () => {
    expect(decide(discrimination(rows([0.9, 0.9], [1, 0])), DEFAULT_RULES).reason).toMatch(/same value/);
    expect(decide(discrimination(rows([0.9, 0.8], [1, 1])), DEFAULT_RULES).reason).toMatch(/one class/);
    expect(decide(discrimination([]), DEFAULT_RULES).reason).toMatch(/empty/);
    expect(decide(discrimination(rows([0.9, 0.8, 0.1], [1, 1, 0])), DEFAULT_RULES).reason).toMatch(/too few per class/);
    const mostly = rows([...Array(12).fill(0.9), 0.95, ...Array(12).fill(0.9), 0.8], [...Array(13).fill(1), ...Array(13).fill(0)]);
    const d = decide(discrimination(mostly), DEFAULT_RULES);
    expect(d.verdict).toBe('INCONCLUSIVE');
    expect(d.reason).toMatch(/tied/);
  });

  it('KILL when the interval sits at or below chance + margin; CONTINUE when above; else INCONCLUSIVE', () => {
    // 500 each, interleaved: pos 0/2000.., neg 1/2000..: AUC = Σk / 500² = 0.499, SE ≈ 0.018
    const interleaved = [...spread(500, 0).map((c) => ({ confidence: c, correct: true })), ...spread(500, 1).map((c) => ({ confidence: c, correct: false }))];
    const dk = discrimination(interleaved);
    expect(dk.auc).toBeCloseTo(0.499, 12);
    expect(decide(dk, DEFAULT_RULES).verdict).toBe('KILL');
    const separated = [...spread(20, 0).map((c) => ({ confidence: 0.5 + c, correct: true })), ...spread(20, 1).map((c) => ({ confidence: c, correct: false }))];
    expect(decide(discrimination(separated), DEFAULT_RULES).verdict).toBe('CONTINUE');
    const small = [...spread(10, 0).map((c) => ({ confidence: c, correct: true })), ...spread(10, 1).map((c) => ({ confidence: c, correct: false }))];
    const ds = decide(discrimination(small), DEFAULT_RULES);
    expect(ds.verdict).toBe('INCONCLUSIVE');
    expect(ds.reason).toMatch(/straddles 0.55/);
  });
});

describe('corpus rows', () => {
  it('accepts boolean, 0/1 and "true"/"false", skips bad rows with their line numbers', () => {
    const text = [
      '{"confidence":0.9,"correct":true}',
      '{"confidence":0.1,"correct":0}',
      '',
      '{"confidence":0.5,"correct":"false"}',
      'nope',
      '{"confidence":1.5,"correct":true}',
      '{"confidence":0.5,"correct":"yes"}',
      '[1]',
    ].join('\n');
    const p = parseCorpus(text);
    expect(p.rows).toEqual([
      { confidence: 0.9, correct: true },
      { confidence: 0.1, correct: false },
      { confidence: 0.5, correct: false },
    ]);
    expect(p.bad.map((b) => b.line)).toEqual([5, 6, 7, 8]);
  });

  it('an empty corpus is a valid INCONCLUSIVE report', () => {
    const r = calibrationReport([], [], OPTIONS);
    expect(r.verdict).toBe('INCONCLUSIVE');
    expect(r.reason).toBe('the corpus is empty');
    expect(r.overall.auc).toBeNull();
    const md = renderCalibrationMarkdown(r);
    expect(md.indexOf('Kill condition')).toBeLessThan(md.indexOf('Verdict'));
  });
});
