/**
 * `forge-reflect export`: sends every sidecar, event and finished turn not yet acknowledged to an
 * OTLP/HTTP endpoint (see ../export/run-export.ts and docs/otlp.md). The OpenTelemetry code is
 * imported here, when the command runs, and nowhere else in the CLI's start.
 */
import { usageError } from '../errors.js';
import { writeJson } from '../output.js';
import { parseSince, SINCE_EXAMPLE } from '../since.js';
import { resolveStateDir } from '../state-dir.js';
import { reportDirs } from './report.js';

export const DEFAULT_BUDGET_S = 30;

function positive(flag: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw usageError(`--${flag} ${JSON.stringify(String(value))} is not a positive number; e.g. --${flag} ${fallback}`);
  return n;
}

export async function run(args: Record<string, unknown>): Promise<number> {
  const stateDir = resolveStateDir();
  let since: string | undefined;
  if (args.since !== undefined) {
    since = parseSince(String(args.since), Date.now());
    if (since === undefined) throw usageError(`--since ${JSON.stringify(String(args.since))} is not a time; use ${SINCE_EXAMPLE}`);
  }
  const budgetS = positive('timeout', args.timeout, DEFAULT_BUDGET_S);
  const batchSize = Math.trunc(positive('batch-size', args['batch-size'], 500));
  const { runExport } = await import('../export/run-export.js');
  const result = await runExport(stateDir, {
    flags: { endpoint: args.endpoint as string | undefined, protocol: args.protocol as string | undefined },
    since,
    dryRun: Boolean(args['dry-run']),
    budgetMs: budgetS * 1000,
    batchSize,
    dirs: reportDirs(args.dir as string[] | undefined, stateDir),
  });
  if (args.json) {
    writeJson(result);
    return 0;
  }
  const p = result.pending;
  const what = `${p.sidecars} sidecar(s), ${p.events} event(s), ${p.turns} turn(s) with ${p.spans} span(s)`;
  if (result.locked) process.stdout.write('another export is running; nothing sent\n');
  else if (result.dry_run)
    process.stdout.write(
      `dry run: would export ${what}${result.endpoints ? ` to ${result.endpoints.logs} and ${result.endpoints.traces} (${result.protocol})` : ''}\n`,
    );
  else
    process.stdout.write(
      `exported ${what} in ${result.sent.requests} request(s) to ${result.endpoints?.logs} and ${result.endpoints?.traces}; ${result.marked} record(s) marked\n`,
    );
  return 0;
}
