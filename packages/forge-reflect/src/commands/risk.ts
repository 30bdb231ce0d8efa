import { classifyPath, DEFAULT_THRESHOLD, evaluateRiskFloor, parseThresholdText } from '@forge-reflect/risk-floor';
import { usageError } from '../errors.js';
import { changedFiles } from '../sidecar/git-changes.js';
import { formatTable, painter, useColour, writeJson } from '../output.js';

/** Exit status of `risk --fail-on-review` when the change needs review. */
export const EXIT_NEEDS_REVIEW = 3;

export function resolveThreshold(flag: unknown, env: NodeJS.ProcessEnv = process.env): number {
  if (flag !== undefined) {
    const value = parseThresholdText(String(flag));
    if (value === undefined)
      throw usageError(`--threshold ${JSON.stringify(String(flag))} is not a number from 0 to 1 (at most 6 decimals), e.g. --threshold 0.5`);
    return value;
  }
  const fromEnv = env.REFLECTION_RISK_THRESHOLD;
  if (fromEnv !== undefined && fromEnv !== '') {
    const value = parseThresholdText(fromEnv);
    if (value === undefined) throw usageError(`REFLECTION_RISK_THRESHOLD=${JSON.stringify(fromEnv)} is not a number from 0 to 1; unset it or set e.g. 0.5`);
    return value;
  }
  return DEFAULT_THRESHOLD;
}

export async function run(args: Record<string, unknown>): Promise<number> {
  const given = (args.files as string[] | undefined) ?? [];
  if (args.git && given.length > 0) throw usageError('give paths or --git, not both');
  if (args.base !== undefined && !args.git) throw usageError('--base goes with --git, e.g. risk --git --base origin/main');
  if (!args.git && given.length === 0) throw usageError('give the paths to evaluate, or --git for the current change');
  const threshold = resolveThreshold(args.threshold);
  const files = args.git ? changedFiles(process.cwd(), (args.base as string | undefined) ?? 'HEAD') : given;
  const verdict = evaluateRiskFloor({ filesChanged: files }, { threshold });
  const perFile = files.map((path) => ({ path, ...classifyPath(path) }));

  if (args.json) {
    writeJson({ ...verdict, threshold, files: perFile });
  } else {
    const paint = painter(useColour());
    const review = verdict.needs_review ? paint.bad('needs review') : paint.ok('no review required');
    process.stdout.write(`risk floor: ${paint.bold(verdict.surface)} (score ${verdict.score}, threshold ${threshold}): ${review}\n`);
    process.stdout.write(`reason: ${verdict.reason}\n`);
    if (perFile.length > 0) {
      process.stdout.write(
        `\n${formatTable(
          ['SURFACE', 'WEIGHT', 'FILE'],
          perFile.map((f) => [f.surface, String(f.weight), f.path]),
        )}\n`,
      );
    }
  }
  return args.failOnReview && verdict.needs_review ? EXIT_NEEDS_REVIEW : 0;
}
