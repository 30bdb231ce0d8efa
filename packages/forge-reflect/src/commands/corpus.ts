/**
 * `forge-reflect corpus`: the P1 corpus (JSON Lines of {confidence, correct, …}) from the sidecars'
 * self-reported confidence and the recorded outcomes (see ../analysis/corpus-join.ts).
 */
import { writeAtomic } from '../atomic-write.js';
import { resolve } from 'node:path';
import { UserError } from '../errors.js';
import { openLogForReading } from '../log/reading-log.js';
import { indexSidecars } from '../report/sidecar-index.js';
import { resolveStateDir } from '../state-dir.js';
import { joinCorpus, type SidecarPoint } from '../analysis/corpus-join.js';
import { pooledOutcomes } from '../analysis/pooled-outcomes.js';
import { reportDirs } from './report.js';

export async function run(args: Record<string, unknown>): Promise<number> {
  const stateDir = resolveStateDir();
  const dirs = reportDirs(args.dir as string[] | undefined, stateDir);
  const log = openLogForReading(stateDir, { cache: true });
  let text: string;
  let summary: string;
  try {
    indexSidecars(log.db, dirs);
    const sidecars = log.db
      .prepare(`SELECT path, task_ref, ts, confidence FROM sidecar_files
                WHERE dir IN (${dirs.map(() => '?').join(', ')}) AND valid = 1
                  AND task_ref IS NOT NULL AND ts IS NOT NULL AND confidence IS NOT NULL`)
      .all(...dirs.map((d) => resolve(d))) as SidecarPoint[];
    const { outcomes, logs } = pooledOutcomes(log.db, log.path, dirs);
    const joined = joinCorpus(sidecars, outcomes);
    text = joined.rows.map((r) => JSON.stringify(r)).join('\n') + (joined.rows.length > 0 ? '\n' : '');
    summary = `corpus: ${joined.rows.length} row(s) from ${joined.outcomes} outcome(s)${logs > 1 ? ` pooled from ${logs} logs` : ''} and ${sidecars.length} sidecar(s) with a confidence; ${joined.unmatched} outcome(s) had no earlier sidecar of their task, ${joined.superseded} superseded by a later outcome`;
  } finally {
    log.close();
  }
  if (args.out !== undefined && String(args.out) !== '-') {
    const out = String(args.out);
    try {
      writeAtomic(out, text, 0o644);
    } catch (error) {
      throw new UserError(`cannot write ${out} (${(error as NodeJS.ErrnoException).code ?? String(error)}); pass --out a writable path`);
    }
    process.stderr.write(`${summary}; written to ${out}\n`);
  } else {
    process.stdout.write(text);
    process.stderr.write(`${summary}\n`);
  }
  return 0;
}
