/**
 * Validation against the committed JSON Schemas (schemas/*.schema.json) with ajv: the same
 * files a user's own tooling would use, so the CLI never disagrees with them.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { UserError } from './errors.js';
import { kitPath } from './paths.js';

// ajv-formats is CommonJS: at run time the default import is the plugin function itself, but
// NodeNext types it as the module object, whose `default` has the function's type.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

export interface SchemaProblem {
  /** JSON Pointer of the failing value, `/` for the document itself. */
  path: string;
  /** The JSON Schema keyword that failed (required, type, maximum, additionalProperties, …). */
  rule: string;
  message: string;
}

export function readCommittedSchemaText(name: string): string {
  const file = kitPath('schemas', `${name}.schema.json`);
  try {
    return readFileSync(file, 'utf8');
  } catch {
    throw new UserError(`cannot read the schema ${file}; reinstall the kit with \`npm install\``);
  }
}

const compiled = new Map<string, ValidateFunction>();

export function schemaValidator(name: string): ValidateFunction {
  let validate = compiled.get(name);
  if (!validate) {
    const ajv = new Ajv({ allErrors: true, strict: true });
    addFormats(ajv);
    validate = ajv.compile(JSON.parse(readCommittedSchemaText(name)) as object);
    compiled.set(name, validate);
  }
  return validate;
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
 * The problems of a value against a committed schema, most specific first; empty when valid.
 * `anyOf` wrappers (a value or null) are dropped when a more specific error explains them.
 */
export function schemaProblems(name: string, value: unknown): SchemaProblem[] {
  const validate = schemaValidator(name);
  if (validate(value)) return [];
  const errors = validate.errors ?? [];
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
