/**
 * reflection.v1: the sidecar written at the end of every agent turn (PRD §4).
 *
 * This file is the single source of the sidecar's shape. The committed JSON Schema
 * (schemas/reflection.v1.schema.json) is generated from it; a test fails when they drift.
 * Every object is strict: a key the PRD does not name is an error, at any depth.
 */
import { z } from 'zod';
import { REFLECTION_MODES, REFLECTION_SCHEMA_ID, REVIEW_SURFACES, UTC_TIMESTAMP_PATTERN } from './constants.js';

export { REFLECTION_MODES, REFLECTION_SCHEMA_ID, REVIEW_SURFACES, UTC_TIMESTAMP_PATTERN } from './constants.js';

export const reviewSurfaceSchema = z.enum(REVIEW_SURFACES);
export const reflectionModeSchema = z.enum(REFLECTION_MODES);
export const confidenceSchema = z.number().min(0).max(1);
export const utcTimestampSchema = z.string().datetime().regex(UTC_TIMESTAMP_PATTERN);

export const mostLikelyWrongSchema = z
  .object({
    surface: reviewSurfaceSchema,
    description: z.string(),
  })
  .strict();

export const riskVerdictSchema = z
  .object({
    needs_review: z.boolean(),
    score: z.number().min(0).max(1),
    surface: reviewSurfaceSchema,
    reason: z.string(),
  })
  .strict();

export const provenanceSchema = z
  .object({
    source: z.literal('stop-hook'),
    reflection_attempt: z.number().int().min(1),
    degraded: z.boolean(),
    reflection_mode: reflectionModeSchema,
  })
  .strict();

export const reflectionV1Schema = z
  .object({
    schema: z.literal(REFLECTION_SCHEMA_ID),
    task_ref: z.string(),
    agent: z.string(),
    session_id: z.string(),
    timestamp: utcTimestampSchema,
    repo: z.string(),
    confidence: confidenceSchema.nullable(),
    most_likely_wrong: mostLikelyWrongSchema.nullable(),
    known_not_in_diff: z.string().nullable(),
    risk: riskVerdictSchema,
    files_changed: z.array(z.string()),
    provenance: provenanceSchema,
  })
  .strict();

/**
 * The self-report an agent leaves for the Stop hook (default `.forge/reflection-input.json`).
 * The hook merges it into the sidecar's self-reported fields and consumes it.
 */
export const selfReportInputSchema = z
  .object({
    confidence: confidenceSchema,
    most_likely_wrong: mostLikelyWrongSchema,
    known_not_in_diff: z.string().nullable(),
    session_id: z.string().optional(),
  })
  .strict();
