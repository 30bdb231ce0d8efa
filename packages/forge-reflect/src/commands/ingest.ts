import { drainSpool, type DrainCounts } from '../log/drain.js';
import { UserError } from '../errors.js';
import { isBusyError } from '../log/event-log.js';
import { AUTO_EXPORT_BUDGET_MS, autoExportEnabled, readExportConfig } from '../export/auto.js';
import { writeJson } from '../output.js';
import { rejectedDirOf, resolveStateDir } from '../state-dir.js';

/** One line for people: what a drain did. */
export function describeDrain(counts: DrainCounts): string {
  if (counts.locked) return 'another drain is running; nothing drained';
  const parts = [`drained ${counts.drained}`, `rejected ${counts.rejected}`, `already present ${counts.alreadyPresent}`];
  if (counts.removedTemp > 0) parts.push(`stale temp files removed ${counts.removedTemp}`);
  if (counts.inFlight > 0) parts.push(`still being written ${counts.inFlight} (left for the next drain)`);
  let line = parts.join(', ');
  if (counts.busy) line += ' (the log stayed busy; the rest waits for the next drain)';
  return line;
}

/** Tells people on stderr about rejected spool files, which they should look at. */
export function warnAboutRejected(counts: DrainCounts, stateDir: string): void {
  if (counts.rejected > 0) {
    process.stderr.write(
      `forge-reflect: ${counts.rejected} spool file(s) could not be read and were moved to ${rejectedDirOf(stateDir)} (each with a .reason)\n`,
    );
  }
}

export async function run(args: Record<string, unknown>): Promise<number> {
  const stateDir = resolveStateDir();
  let counts: DrainCounts;
  try {
    counts = drainSpool(stateDir);
  } catch (error) {
    if (!isBusyError(error)) throw error;
    throw new UserError(`the event log in ${stateDir} stayed busy for more than 5 s; run the command again`);
  }
  if (args.json) {
    writeJson({
      state_dir: stateDir,
      drained: counts.drained,
      rejected: counts.rejected,
      already_present: counts.alreadyPresent,
      removed_temp: counts.removedTemp,
      in_flight: counts.inFlight,
      locked: counts.locked,
      busy: counts.busy,
    });
  } else {
    process.stdout.write(`${describeDrain(counts)}\n`);
    warnAboutRejected(counts, stateDir);
  }
  await exportAfterIngest(stateDir);
  return 0;
}

/**
 * The automatic export after a drain (the Stop hook starts `ingest` detached, so this is off the
 * agent's path): bounded by AUTO_EXPORT_BUDGET_MS, and a failure is one line on stderr, never the
 * ingest's exit status. What it could not send stays pending for the next one.
 */
async function exportAfterIngest(stateDir: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (!autoExportEnabled(readExportConfig(stateDir), env)) return;
  try {
    const [{ runExport }, { reportDirs }] = await Promise.all([import('../export/run-export.js'), import('./report.js')]);
    await runExport(stateDir, { flags: {}, budgetMs: AUTO_EXPORT_BUDGET_MS, dirs: reportDirs(undefined, stateDir, env), env });
  } catch (error) {
    process.stderr.write(`forge-reflect: export after ingest: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}
