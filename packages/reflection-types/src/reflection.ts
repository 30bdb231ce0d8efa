/**
 * reflection.v1: the sidecar written at the end of every agent turn (PRD §4).
 *
 * This file is the single source of the sidecar's shape. The committed JSON Schema
 * (schemas/reflection.v1.schema.json) is generated from it; a test fails when they drift.
 * Every object is strict: a key the PRD does not name is an error, at any depth.
 */
import { z } from 'zod';

export const REVIEW_SURFACES = ['auth', 'data', 'infra', 'ui', 'build', 'test', 'docs', 'none'] as const;
export const REFLECTION_MODES = ['off', 'solo', 'orchestrated'] as const;
export const REFLECTION_SCHEMA_ID = 'reflection.v1' as const;

/**
 * ISO-8601 in UTC with a literal `Z`, optional fractional seconds. The regex mirrors what
 * zod's datetime() accepts so the JSON Schema carries the same rule as a `pattern`, and
 * `format: date-time` adds the calendar check (no 30 February) on the ajv side. Hours, minutes and
 * seconds are ranged here because ajv-formats would accept a leap second (23:59:60) that zod refuses.
 */
export const UTC_TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?Z$/;

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
