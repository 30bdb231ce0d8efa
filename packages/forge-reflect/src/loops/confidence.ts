/**
 * Confidence arithmetic of learned patterns. Pure; every result is clamped to [0, 1] and rounded
 * to 4 decimals (so 0.5 − 0.2 is 0.3, not 0.30000000000000004).
 */
export const LEARNING_TYPES = ['episodic', 'semantic', 'procedural'] as const;
export type LearningType = (typeof LEARNING_TYPES)[number];

export const LEARNING_SOURCES = ['machine', 'human', 'production'] as const;
export type LearningSource = (typeof LEARNING_SOURCES)[number];

/** Starting confidence by where a learning came from. */
export const START_CONFIDENCE: Readonly<Record<LearningSource, number>> = { machine: 0.5, human: 0.7, production: 0.9 };

export const DISMISS_DELTA = -0.2;
export const CONFIRM_DELTA = 0.2;
export const APPLIED_DELTA = 0.1;
export const DECAY_PER_WEEK = 0.05;
/** The dismissal itself is kept as a semantic learning at this confidence. */
export const DISMISSAL_LEARNING_CONFIDENCE = 0.7;
/** A human's rewrite of a suggestion is kept as a procedural learning at this confidence. */
export const REWRITE_LEARNING_CONFIDENCE = 0.8;
/** prune archives below this confidence … */
export const PRUNE_BELOW = 0.2;
/** … or unused (not accessed) for this many days. */
export const PRUNE_UNUSED_DAYS = 90;

export const DAY_MS = 86_400_000;
export const WEEK_MS = 7 * DAY_MS;

export function clampConfidence(value: number): number {
  const clamped = Math.min(1, Math.max(0, value));
  return Math.round(clamped * 10_000) / 10_000;
}

export function adjustConfidence(current: number, delta: number): number {
  return clampConfidence(current + delta);
}

/** Whole weeks from `accessedAt` to `now` (0 when now is earlier). */
export function wholeWeeks(accessedAt: number, now: number): number {
  return Math.max(0, Math.floor((now - accessedAt) / WEEK_MS));
}

/**
 * Decay since the last access: 0.05 for every whole week, minus the weeks already decayed since
 * that access (so running decay twice in one week decays once).
 */
export function decayStep(
  confidence: number,
  accessedAt: number,
  now: number,
  alreadyDecayedWeeks: number,
): { confidence: number; weeks: number; newWeeks: number } {
  const weeks = wholeWeeks(accessedAt, now);
  const newWeeks = Math.max(0, weeks - alreadyDecayedWeeks);
  return { confidence: clampConfidence(confidence - DECAY_PER_WEEK * newWeeks), weeks, newWeeks };
}

/** Why prune archives a learning, or undefined to keep it. */
export function pruneReason(confidence: number, accessedAt: number, now: number): 'low_confidence' | 'unused' | undefined {
  if (confidence < PRUNE_BELOW) return 'low_confidence';
  if (now - accessedAt >= PRUNE_UNUSED_DAYS * DAY_MS) return 'unused';
  return undefined;
}
