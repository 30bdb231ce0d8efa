/** Reading a JSON input file (review, tests, feedback, policy) and checking it against its schema. */
import { readFileSync } from 'node:fs';
import { UserError } from '../errors.js';
import { schemaProblems } from '../schema/validator.js';

export function readJsonFile(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UserError(`cannot read the ${what} file ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)}); check the path`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UserError(`the ${what} file ${path} is not JSON (${(error as Error).message}); fix it and run again`);
  }
}

/** The value when it matches the committed schema; else a one-line UserError with each field path and rule. */
export function readValidated<T>(path: string, schema: string, what: string): T {
  const value = readJsonFile(path, what);
  const problems = schemaProblems(schema, value);
  if (problems.length > 0) {
    const shown = problems.slice(0, 3).map((p) => `${p.path} ${p.message} (rule: ${p.rule})`);
    const more = problems.length > 3 ? `; and ${problems.length - 3} more` : '';
    throw new UserError(`the ${what} file ${path} does not match ${schema}: ${shown.join('; ')}${more}; nothing was recorded`);
  }
  return value as T;
}
