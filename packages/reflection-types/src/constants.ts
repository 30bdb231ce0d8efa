/**
 * The sidecar's fixed vocabularies, without zod: what a caller that only names them (the Stop
 * hook's helper, which loads no zod) imports. The zod schemas in reflection.ts are built from these.
 */
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
