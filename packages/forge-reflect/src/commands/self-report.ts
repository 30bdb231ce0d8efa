/**
 * `forge-reflect self-report`: the agent's own view of its work (confidence, the most likely way it
 * is wrong, what the diff does not show), written as the input file the Stop hook merges into the
 * turn's reflection.v1 sidecar. Checked with the same zod schema the hook uses, written through a
 * temp file and a rename (0600), so the hook never reads half of it.
 */
import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { REVIEW_SURFACES, selfReportInputSchema, type SelfReportInputDto } from '@forge-reflect/reflection-types';
import { UserError, usageError } from '../errors.js';
import { lstatOrNull } from '../install/files.js';
import { writeAtomic } from '../atomic-write.js';
import { writeJson } from '../output.js';
import { ensureStateDir, resolveStateDir } from '../state-dir.js';

export const INPUT_FILE_NAME = 'reflection-input.json';
/** The Stop hook's helper refuses a self-report file larger than this. */
export const SELF_REPORT_MAX_BYTES = 256 * 1024;

const SURFACE_LIST = REVIEW_SURFACES.join('|');
const DECIMAL = /^(\d+(\.\d*)?|\.\d+)$/;

function single(args: Record<string, unknown>, key: string, flag: string): string | undefined {
  const value = args[key];
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw usageError(`${flag} was given ${value.length} times; give it once`);
  return String(value);
}

/** The self-report from the command's options; a usage error (exit 2) names what is allowed. */
export function selfReportFromArgs(args: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): SelfReportInputDto {
  const confidenceText = (single(args, 'confidence', '--confidence') ?? '').trim();
  if (!DECIMAL.test(confidenceText)) {
    throw usageError(
      `--confidence ${JSON.stringify(confidenceText)} is not a number from 0 to 1; give e.g. --confidence 0.7 (0: surely wrong, 1: surely right)`,
    );
  }
  const surface = (single(args, 'surface', '--surface') ?? '').trim().toLowerCase();
  const wrong = (single(args, 'wrong', '--wrong') ?? '').trim();
  if (wrong === '') throw usageError('--wrong is empty; say in one sentence the single most likely way the work is wrong');
  const notInDiff = single(args, 'notInDiff', '--not-in-diff')?.trim();
  const flagged = single(args, 'session', '--session')?.trim();
  if (flagged === '') throw usageError('--session is empty; pass the session id, or leave the option out');
  // The report belongs to the session that wrote it: Claude Code sets its id inside the Bash tool.
  const fromEnv = env.CLAUDE_CODE_SESSION_ID?.trim();
  const session = flagged ?? (fromEnv ? fromEnv : undefined);

  const candidate = {
    confidence: Number(confidenceText),
    most_likely_wrong: { surface, description: wrong },
    known_not_in_diff: notInDiff ? notInDiff : null,
    ...(session === undefined ? {} : { session_id: session }),
  };
  const parsed = selfReportInputSchema.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') ?? '';
    if (where === 'confidence') {
      throw usageError(
        `--confidence ${JSON.stringify(confidenceText)} is not a number from 0 to 1; give e.g. --confidence 0.7 (0: surely wrong, 1: surely right)`,
      );
    }
    if (where === 'most_likely_wrong.surface') throw usageError(`--surface ${JSON.stringify(surface)} is not a surface; use one of ${SURFACE_LIST}`);
    throw usageError(`the self-report is invalid at ${where || '/'}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** Where the file goes: --file, else $REFLECTION_INPUT, else <state dir>/reflection-input.json. */
export function inputPath(
  args: Record<string, unknown>,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): { path: string; inState: boolean } {
  const flag = single(args, 'file', '--file');
  if (flag !== undefined && flag !== '') return { path: resolve(cwd, flag), inState: false };
  const fromEnv = env.REFLECTION_INPUT;
  if (fromEnv !== undefined && fromEnv !== '') return { path: resolve(cwd, fromEnv), inState: false };
  return { path: join(resolveStateDir({ env, cwd }), INPUT_FILE_NAME), inState: true };
}

export async function run(args: Record<string, unknown>): Promise<number> {
  const report = selfReportFromArgs(args);
  const text = `${JSON.stringify(report, null, 2)}\n`;
  if (Buffer.byteLength(text) > SELF_REPORT_MAX_BYTES) {
    throw usageError(
      `the self-report is ${Buffer.byteLength(text)} bytes, more than the Stop hook reads (${SELF_REPORT_MAX_BYTES}); shorten --wrong and --not-in-diff`,
    );
  }
  const { path, inState } = inputPath(args);
  if (inState) {
    ensureStateDir(dirname(path));
  } else {
    let folder = false;
    try {
      folder = statSync(dirname(path)).isDirectory();
    } catch {
      // reported below
    }
    if (!folder) throw new UserError(`the folder of ${path} does not exist; create it, or pass another --file`);
  }
  const existing = lstatOrNull(path);
  if (existing?.isDirectory()) throw new UserError(`${path} is a folder; pass a file path with --file`);
  try {
    writeAtomic(path, text, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new UserError(`cannot write ${path} (${code}); fix the folder's permissions or pass another --file`);
  }
  const replaced = existing !== null;
  const mode = process.env.REFLECTION_MODE;
  const warnings =
    mode === 'solo' || mode === 'orchestrated'
      ? []
      : [`REFLECTION_MODE is ${mode ? JSON.stringify(mode) : 'unset'} here; the Stop hook reads the file only when it is solo or orchestrated`];
  if (report.session_id === undefined) {
    warnings.push('no session id (pass --session ID): the Stop hook refuses this file as stale if it is older than the session it ends');
  }
  if (args.json) {
    writeJson({ file: path, replaced, report, warnings });
  } else {
    process.stdout.write(
      `self-report written to ${path} (confidence ${report.confidence}, surface ${report.most_likely_wrong.surface})` +
        `${replaced ? ', replacing one the Stop hook had not read yet' : ''}; the Stop hook adds it to this turn's reflection\n`,
    );
    for (const warning of warnings) process.stdout.write(`note: ${warning}\n`);
  }
  return 0;
}
