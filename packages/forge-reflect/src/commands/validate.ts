import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { painter, useColour, writeJson } from '../output.js';
import { schemaProblems, type SchemaProblem } from '../schema/validator.js';
import { isSidecarName } from '../sidecar/files.js';

export interface FileVerdict {
  file: string;
  valid: boolean;
  /** Why the file could not be checked at all (unreadable, not JSON). */
  error?: string;
  problems: SchemaProblem[];
}

function sidecarsUnder(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sidecarsUnder(path));
    else if (entry.isFile() && isSidecarName(entry.name)) found.push(path);
  }
  return found;
}

function expand(paths: readonly string[]): string[] {
  const files: string[] = [];
  for (const path of paths) {
    let stats;
    try {
      stats = statSync(path);
    } catch {
      throw new UserError(`no such file or folder: ${path}; pass sidecar files or a folder that holds them`);
    }
    files.push(...(stats.isDirectory() ? sidecarsUnder(path) : [path]));
  }
  return files;
}

export function validateFile(file: string): FileVerdict {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return { file, valid: false, error: `cannot read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, problems: [] };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { file, valid: false, error: `not JSON: ${(error as Error).message}`, problems: [] };
  }
  const problems = schemaProblems('reflection.v1', value);
  return { file, valid: problems.length === 0, problems };
}

export async function run(args: Record<string, unknown>): Promise<number> {
  const files = expand((args.paths as string[] | undefined) ?? []);
  const verdicts = files.map(validateFile);
  const invalid = verdicts.filter((v) => !v.valid).length;
  if (args.json) {
    writeJson({ checked: verdicts.length, valid: verdicts.length - invalid, invalid, files: verdicts });
  } else {
    const paint = painter(useColour());
    for (const v of verdicts) {
      if (v.valid) continue;
      if (v.error) process.stdout.write(`${paint.bad('✗')} ${v.file}: ${v.error}\n`);
      for (const p of v.problems) process.stdout.write(`${paint.bad('✗')} ${v.file}: ${p.path} ${p.message} (${p.rule})\n`);
    }
    process.stdout.write(`${verdicts.length} checked, ${verdicts.length - invalid} valid, ${invalid} invalid\n`);
  }
  return invalid > 0 ? 1 : 0;
}
