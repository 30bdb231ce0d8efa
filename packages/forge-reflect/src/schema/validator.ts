/**
 * Validation against the committed JSON Schemas (schemas/*.schema.json) with ajv: the same
 * files a user's own tooling would use, so the CLI never disagrees with them.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { UserError } from '../errors.js';
import { kitPath } from '../paths.js';
import { describeSchemaErrors, type SchemaProblem } from './problems.js';

export type { SchemaProblem } from './problems.js';

// ajv-formats is CommonJS: at run time the default import is the plugin function itself, but
// NodeNext types it as the module object, whose `default` has the function's type.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

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

/**
 * The problems of a value against a committed schema, most specific first; empty when valid.
 */
export function schemaProblems(name: string, value: unknown): SchemaProblem[] {
  const validate = schemaValidator(name);
  return validate(value) ? [] : describeSchemaErrors(validate.errors ?? []);
}
