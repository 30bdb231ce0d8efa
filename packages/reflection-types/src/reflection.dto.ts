/** The types that cross a boundary (files, the CLI, other packages), inferred from the zod schemas. */
import type { z } from 'zod';
import type {
  mostLikelyWrongSchema,
  provenanceSchema,
  reflectionModeSchema,
  reflectionV1Schema,
  reviewSurfaceSchema,
  riskVerdictSchema,
  selfReportInputSchema,
} from './reflection.js';

export type ReviewSurface = z.infer<typeof reviewSurfaceSchema>;
export type ReflectionMode = z.infer<typeof reflectionModeSchema>;
export type MostLikelyWrongDto = z.infer<typeof mostLikelyWrongSchema>;
export type RiskVerdictDto = z.infer<typeof riskVerdictSchema>;
export type ProvenanceDto = z.infer<typeof provenanceSchema>;
export type ReflectionV1Dto = z.infer<typeof reflectionV1Schema>;
export type SelfReportInputDto = z.infer<typeof selfReportInputSchema>;
