/**
 * evaluateRiskFloor: the minimum review a change needs, from the paths it touches.
 *
 * Pure, deterministic, no IO. This is a floor beneath the other gates, never above them.
 * Precedence for a consumer: CI/tests > human merge > reviewer verdict > self-reflection.
 * A green floor does not make a change safe; a red one says a human should look.
 */
import type { ReviewSurface } from '@forge-reflect/reflection-types';
import { DEFAULT_THRESHOLD, NONE_WEIGHT, REASON_FILE_LIMIT, RISK_TABLE, THRESHOLD_TEXT_PATTERN, type SurfaceRule } from './risk-table.js';

export interface RiskFloorInput {
  filesChanged: readonly string[];
  insertions?: number;
  deletions?: number;
}

export interface RiskFloorOptions {
  /** needs_review when score >= threshold; a number in [0, 1], default 0.5. */
  threshold?: number;
}

export interface RiskFloorVerdict {
  needs_review: boolean;
  score: number;
  surface: ReviewSurface;
  reason: string;
}

export interface PathClassification {
  surface: ReviewSurface;
  weight: number;
}

/**
 * One regex per rule: its patterns as alternatives, which matches exactly when one of them would
 * (no pattern holds a numbered group reference that the joining could shift). A path then costs
 * at most one test per rule, not one per pattern.
 * Each rule twice: case-insensitive, and case-sensitive for an ASCII path lowercased first (the
 * patterns' letters are lowercase: a test holds them to it), which gives the same answer and
 * compiles and runs faster (in a fresh process most of the cost is V8 compiling the regexes, which
 * the Stop hook's helper pays at every turn). Each is built at its first use: a change that touches
 * `auth` never builds the other rules'.
 */
interface CompiledRule {
  readonly rule: SurfaceRule;
  readonly source: string;
  regex?: RegExp;
  lower?: RegExp;
}
const COMPILED: readonly CompiledRule[] = RISK_TABLE.map((rule) => ({ rule, source: rule.patterns.map((p) => `(?:${p})`).join('|') }));

/** Whether the rule matches `subject`: an ASCII path lowercased, or any other path as it is. */
function ruleMatches(entry: CompiledRule, subject: string, ascii: boolean): boolean {
  if (ascii) return (entry.lower ??= new RegExp(entry.source)).test(subject);
  return (entry.regex ??= new RegExp(entry.source, 'i')).test(subject);
}

/** Any character outside ASCII (its case rules are not JavaScript's toLowerCase's). */
const NON_ASCII = /[^\x00-\x7f]/;

/** Backslashes become `/`, and leading `./` segments are dropped. */
export function normalizeRepoPath(path: string): string {
  // (a path without a backslash, nearly every one, skips the regex)
  let out = path.includes('\\') ? path.replace(/\\/g, '/') : path;
  while (out.startsWith('./')) out = out.slice(2);
  return out;
}

/** For each rule, the highest weight it or a rule after it has (what a path not matched so far can still reach). */
const REACHABLE: readonly number[] = COMPILED.map((_, i) => Math.max(NONE_WEIGHT, ...COMPILED.slice(i).map((c) => c.rule.weight)));

/** The first surface, in table order, whose pattern matches the path. */
export function classifyPath(path: string): PathClassification {
  return classifyAtLeast(path, NONE_WEIGHT) ?? { surface: 'none', weight: NONE_WEIGHT };
}

/**
 * classifyPath for a verdict that already has a surface of weight `floor`: undefined when the path's
 * surface weighs less. The rules that cannot reach `floor` are not tried, so most paths of a change
 * that touches `auth` cost one test, and most rules are never compiled.
 */
function classifyAtLeast(path: string, floor: number): PathClassification | undefined {
  const normalized = normalizeRepoPath(path);
  const ascii = !NON_ASCII.test(normalized);
  const subject = ascii ? normalized.toLowerCase() : normalized;
  for (let i = 0; i < COMPILED.length; i++) {
    if ((REACHABLE[i] as number) < floor) return undefined;
    const entry = COMPILED[i] as CompiledRule;
    const { rule } = entry;
    if (ruleMatches(entry, subject, ascii)) return rule.weight < floor ? undefined : { surface: rule.surface, weight: rule.weight };
  }
  return NONE_WEIGHT < floor ? undefined : { surface: 'none', weight: NONE_WEIGHT };
}

export class RiskThresholdError extends RangeError {
  constructor(value: unknown) {
    super(`risk threshold must be a number from 0 to 1, got ${JSON.stringify(String(value))}`);
    this.name = 'RiskThresholdError';
  }
}

function checkThreshold(value: unknown): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0 || value > 1) {
    throw new RiskThresholdError(value);
  }
  return value;
}

/**
 * Reads a threshold written as text (an environment variable or a flag). Returns undefined
 * when the text is not a decimal from 0 to 1; callers decide whether that is an error.
 */
export function parseThresholdText(text: string): number | undefined {
  if (!new RegExp(THRESHOLD_TEXT_PATTERN).test(text)) return undefined;
  const value = Number(text);
  return value >= 0 && value <= 1 ? value : undefined;
}

function describeFiles(files: readonly string[]): string {
  const named = files.slice(0, REASON_FILE_LIMIT).join(', ');
  const rest = files.length - REASON_FILE_LIMIT;
  return rest > 0 ? `${named} (+${rest} more)` : named;
}

export function evaluateRiskFloor(input: RiskFloorInput, options: RiskFloorOptions = {}): RiskFloorVerdict {
  const threshold = options.threshold === undefined ? DEFAULT_THRESHOLD : checkThreshold(options.threshold);
  const files = input.filesChanged;
  if (files.length === 0) {
    return { needs_review: false, score: 0, surface: 'none', reason: 'no files changed' };
  }

  let best: PathClassification = { surface: 'none', weight: NONE_WEIGHT };
  const tripped: string[] = [];
  for (const file of files) {
    const found = classifyAtLeast(file, best.weight);
    if (found === undefined) continue; // a lighter surface than the best so far: it changes nothing
    if (found.weight > best.weight) {
      best = found;
      tripped.length = 0;
    }
    if (found.surface === best.surface) tripped.push(file);
  }

  const needsReview = best.weight >= threshold;
  if (best.surface === 'none') {
    return {
      needs_review: needsReview,
      score: best.weight,
      surface: 'none',
      reason: `no risky surface in ${files.length} file(s)${needsReview ? `; review required at threshold ${threshold}` : ''}`,
    };
  }
  const verdict = needsReview ? `review required at threshold ${threshold}` : `below review threshold ${threshold}`;
  return {
    needs_review: needsReview,
    score: best.weight,
    surface: best.surface,
    reason: `${best.surface} surface (weight ${best.weight}) in ${tripped.length} file(s): ${describeFiles(tripped)}; ${verdict}`,
  };
}
