/** The report's summary: shares and the mean from the totals SQLite summed. Pure. */
import type { ReviewSurface } from '@forge-reflect/reflection-types';
import { REVIEW_SURFACES } from '@forge-reflect/reflection-types/constants';
import type { SidecarTotals } from './sidecar-index.js';

export interface ReportSummary {
  sidecars: number;
  needs_review: number;
  /** needs_review / sidecars, or null without sidecars. */
  needs_review_share: number | null;
  by_surface: Record<ReviewSurface, number>;
  /** Sidecars that carry a self-reported confidence. */
  confidence_reported: number;
  /** Mean self-reported confidence over those, or null when none reported one. */
  mean_confidence: number | null;
  degraded: number;
  degraded_share: number | null;
  /** Files that are not valid sidecars (listed separately, never counted above). */
  invalid: number;
}

/** The summary from the totals of the matching sidecars and the count of invalid files. */
export function summarize(totals: SidecarTotals, invalidCount: number): ReportSummary {
  const bySurface = Object.fromEntries(REVIEW_SURFACES.map((s) => [s, totals.by_surface[s] ?? 0])) as Record<ReviewSurface, number>;
  const n = totals.sidecars;
  return {
    sidecars: n,
    needs_review: totals.needs_review,
    needs_review_share: n === 0 ? null : totals.needs_review / n,
    by_surface: bySurface,
    confidence_reported: totals.confidence_reported,
    mean_confidence: totals.confidence_reported === 0 ? null : totals.confidence_sum / totals.confidence_reported,
    degraded: totals.degraded,
    degraded_share: n === 0 ? null : totals.degraded / n,
    invalid: invalidCount,
  };
}
