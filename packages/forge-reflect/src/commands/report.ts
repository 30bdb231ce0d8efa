import { join } from 'node:path';
import { RUNTIMES } from '../events.js';
import { usageError } from '../errors.js';
import { writeJson } from '../output.js';
import { renderCsv, renderMarkdown, renderTable, type ReportView } from '../report/render.js';
import { indexSidecars, queryInvalid, queryTotals, queryValid, type SidecarFilter } from '../report/sidecar-index.js';
import { summarize } from '../report/summary.js';
import { parseSince, SINCE_EXAMPLE } from '../since.js';
import { openDrainedLogForReading, openLogForReading } from '../log/reading-log.js';
import { resolveStateDir } from '../state-dir.js';

/** The folders a report reads: --dir values, else $REFLECTION_DIR, else <state dir>/reflections. */
export function reportDirs(given: readonly string[] | undefined, stateDir: string, env: NodeJS.ProcessEnv = process.env): string[] {
  if (given && given.length > 0) return [...given];
  return [env.REFLECTION_DIR || join(stateDir, 'reflections')];
}

function instant(flag: string, value: unknown, now: number): string | undefined {
  if (value === undefined) return undefined;
  const parsed = parseSince(String(value), now);
  if (parsed === undefined) throw usageError(`--${flag} ${JSON.stringify(String(value))} is not a time; use ${SINCE_EXAMPLE.replace(/--since/g, `--${flag}`)}`);
  return parsed;
}

export function filterFromArgs(args: Record<string, unknown>, now = Date.now()): SidecarFilter {
  const filter: SidecarFilter = {};
  const since = instant('since', args.since, now);
  const until = instant('until', args.until, now);
  if (since !== undefined) filter.since = since;
  if (until !== undefined) filter.until = until;
  if (args.surface !== undefined) filter.surface = String(args.surface);
  if (args.needsReview !== undefined) filter.needsReview = Boolean(args.needsReview);
  if (args.degraded !== undefined) filter.degraded = Boolean(args.degraded);
  if (args.agent !== undefined) filter.agent = String(args.agent);
  if (args.task !== undefined) filter.task = String(args.task);
  if (args.session !== undefined) filter.session = String(args.session);
  if (args.runtime !== undefined) {
    const runtime = String(args.runtime);
    if (!(RUNTIMES as readonly string[]).includes(runtime))
      throw usageError(`--runtime ${JSON.stringify(runtime)} is not a runtime; use one of ${RUNTIMES.join(', ')}`);
    filter.runtime = runtime;
  }
  return filter;
}

/** The filters given, as the user typed them, for the page's header. */
function filterText(args: Record<string, unknown>): string {
  const flags = ['since', 'until', 'surface', 'needsReview', 'agent', 'runtime', 'task', 'session', 'degraded'] as const;
  return flags
    .filter((k) => args[k] !== undefined)
    .map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${String(args[k])}`)
    .join(' ');
}

export async function run(args: Record<string, unknown>): Promise<number> {
  const limit = Number(args.limit ?? 50);
  if (!Number.isInteger(limit) || limit < 0) throw usageError('--limit takes a whole number, e.g. --limit 50 (0 shows only the summary)');
  const format = args.json ? 'json' : String(args.format ?? 'table');
  const filter = filterFromArgs(args);
  const stateDir = resolveStateDir();
  const dirs = reportDirs(args.dir as string[] | undefined, stateDir);

  // A runtime filter reads the events of each session: drain the spool first so none is missing.
  const log = filter.runtime !== undefined ? openDrainedLogForReading(stateDir) : openLogForReading(stateDir, { cache: true });
  try {
    const progress = process.stderr.isTTY ? (done: number, total: number) => process.stderr.write(`\rindexing sidecars: ${done}/${total}`) : undefined;
    const counts = indexSidecars(log.db, dirs, progress ? { onProgress: progress } : {});
    if (progress && counts.read >= 500) process.stderr.write('\n');
    const totals = queryTotals(log.db, dirs, filter);
    const invalid = queryInvalid(log.db, dirs);
    if (format === 'html') {
      // The charting libraries load here only: no other format or command pays for them.
      const { writeHtmlReport } = await import('../report/html/write-html.js');
      await writeHtmlReport({
        db: log.db,
        logPath: log.path,
        dirs,
        filterText: filterText(args),
        totals,
        invalidCount: invalid.length,
        records: queryValid(log.db, dirs, filter, -1),
        out: args.out,
      });
      return 0;
    }
    const view: ReportView = {
      summary: summarize(totals, invalid.length),
      rows: queryValid(log.db, dirs, filter, limit),
      omitted: Math.max(0, totals.sidecars - limit),
      invalid,
    };
    if (format === 'json') writeJson({ dirs, filter, ...view, index: counts });
    else if (format === 'markdown') process.stdout.write(renderMarkdown(view));
    else if (format === 'csv') process.stdout.write(renderCsv(view));
    else process.stdout.write(renderTable(view));
  } finally {
    log.close();
  }
  return 0;
}
