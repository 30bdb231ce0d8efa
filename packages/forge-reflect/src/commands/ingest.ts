import { drainSpool, type DrainCounts } from '../drain.js';
import { UserError } from '../errors.js';
import { isBusyError } from '../event-log.js';
import { writeJson } from '../output.js';
import { rejectedDirOf, resolveStateDir } from '../state-dir.js';

/** One line for people: what a drain did. */
export function describeDrain(counts: DrainCounts): string {
  if (counts.locked) return 'another drain is running; nothing drained';
  const parts = [`drained ${counts.drained}`, `rejected ${counts.rejected}`, `already present ${counts.alreadyPresent}`];
  if (counts.removedTemp > 0) parts.push(`stale temp files removed ${counts.removedTemp}`);
  let line = parts.join(', ');
  if (counts.busy) line += ' (the log stayed busy; the rest waits for the next drain)';
  return line;
}

/** Tells people on stderr about rejected spool files, which they should look at. */
export function warnAboutRejected(counts: DrainCounts, stateDir: string): void {
  if (counts.rejected > 0) {
    process.stderr.write(`forge-reflect: ${counts.rejected} spool file(s) could not be read and were moved to ${rejectedDirOf(stateDir)} (each with a .reason)\n`);
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
    writeJson({ state_dir: stateDir, drained: counts.drained, rejected: counts.rejected, already_present: counts.alreadyPresent, removed_temp: counts.removedTemp, locked: counts.locked, busy: counts.busy });
  } else {
    process.stdout.write(`${describeDrain(counts)}\n`);
    warnAboutRejected(counts, stateDir);
  }
  return 0;
}
