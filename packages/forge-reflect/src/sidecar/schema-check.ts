/**
 * The sidecar and the self-report checked against their committed JSON Schemas by the validators
 * ajv generated from them (schema-validators.generated.ts, `npm run schemas`): neither zod nor ajv
 * is loaded, so the Stop hook's helper does not pay for loading them. Problems read as the CLI's do.
 */
import type { ErrorObject } from 'ajv';
import { describeSchemaErrors, type SchemaProblem } from '../schema/problems.js';
import { validateSelfReportInput, validateSidecar } from './schema-validators.generated.js';

/** A generated validator: true when valid, else its errors in `errors`. */
interface GeneratedValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

function problemsOf(validate: GeneratedValidator, value: unknown): SchemaProblem[] {
  return validate(value) ? [] : describeSchemaErrors(validate.errors ?? []);
}

/** What breaks reflection.v1 in `value`, most specific first; empty when it is a valid sidecar. */
export function sidecarProblems(value: unknown): SchemaProblem[] {
  return problemsOf(validateSidecar as GeneratedValidator, value);
}

/** What breaks reflection-input.v1 in `value`; empty when it is a valid self-report. */
export function selfReportInputProblems(value: unknown): SchemaProblem[] {
  return problemsOf(validateSelfReportInput as GeneratedValidator, value);
}
