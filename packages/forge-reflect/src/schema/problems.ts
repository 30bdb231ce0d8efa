/**
 * What a JSON Schema validator's errors say, as problems a person can act on: the failing value's
 * JSON Pointer, the rule, a message. Pure (no ajv here): the CLI describes the errors of ajv
 * compiled at run time (schema-validator.ts), the Stop hook's helper those of the generated
 * standalone validators (sidecar/schema-validators.generated.ts), the same way.
 */
import type { ErrorObject } from 'ajv';

export interface SchemaProblem {
  /** JSON Pointer of the failing value, `/` for the document itself. */
  path: string;
  /** The JSON Schema keyword that failed (required, type, maximum, additionalProperties, …). */
  rule: string;
  message: string;
}

function describe(error: ErrorObject): SchemaProblem {
  const params = error.params as Record<string, unknown>;
  let path = error.instancePath || '/';
  let message = error.message ?? 'is invalid';
  if (error.keyword === 'required') {
    path = `${error.instancePath}/${String(params.missingProperty)}`;
    message = 'is required';
  } else if (error.keyword === 'additionalProperties') {
    path = `${error.instancePath}/${String(params.additionalProperty)}`;
    message = 'is not allowed (unknown key)';
  } else if (error.keyword === 'enum') {
    message = `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
  } else if (error.keyword === 'const') {
    message = `must be ${JSON.stringify(params.allowedValue)}`;
  }
  return { path, rule: error.keyword, message };
}

function isNullBranch(error: ErrorObject): boolean {
  return error.keyword === 'type' && (error.params as { type?: unknown }).type === 'null';
}

/**
 * The problems in a validator's errors, most specific first; empty when there are none. `anyOf`
 * wrappers (a value or null) are dropped when a more specific error explains them.
 */
export function describeSchemaErrors(errors: readonly ErrorObject[]): SchemaProblem[] {
  // A nullable field that fails reports its real rule plus "must be null" from the null branch
  // and an `anyOf` wrapper; the real rule alone says what is wrong.
  const explained = new Set(errors.filter((e) => !isNullBranch(e) && e.keyword !== 'anyOf').map((e) => e.instancePath));
  const specific = errors.filter((e) => e.keyword !== 'anyOf' && !(isNullBranch(e) && explained.has(e.instancePath)));
  const chosen = specific.length > 0 ? specific : errors;
  const seen = new Set<string>();
  const out: SchemaProblem[] = [];
  for (const problem of chosen.map(describe)) {
    const key = `${problem.path}\u0000${problem.rule}\u0000${problem.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(problem);
    }
  }
  return out;
}
