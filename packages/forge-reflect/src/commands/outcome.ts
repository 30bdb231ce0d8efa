/** `forge-reflect outcome`: record what turned out true for a task (the labels calibration needs). */
import { openDrainedLog } from '../log/drain.js';
import { usageError } from '../errors.js';
import { writeJson } from '../output.js';
import { indexSidecars } from '../report/sidecar-index.js';
import { resolveStateDir } from '../state-dir.js';
import { isKnownTask } from '../loops/bounce-store.js';
import { isoMicros, parseTimeOption, resolveNow } from '../loops/clock.js';
import { reportDirs } from './report.js';
import { taskArg } from './bounce.js';

export const OUTCOME_SOURCES = ['ci', 'human', 'revert', 'production'] as const;

export async function run(args: Record<string, unknown>): Promise<number> {
  const task = taskArg(args);
  if (Boolean(args.correct) === Boolean(args.wrong)) throw usageError('give exactly one of --correct or --wrong');
  const source = String(args.source ?? 'human');
  if (!(OUTCOME_SOURCES as readonly string[]).includes(source))
    throw usageError(`--source ${JSON.stringify(source)} is not one of ${OUTCOME_SOURCES.join(', ')}`);
  const now = resolveNow(args);
  const at = args.at === undefined ? isoMicros(now) : parseTimeOption('at', args.at, now);
  const note = args.note === undefined ? null : String(args.note);
  const stateDir = resolveStateDir();
  const log = openDrainedLog(stateDir);
  let id: number;
  let known: boolean;
  try {
    indexSidecars(log.db, reportDirs(undefined, stateDir));
    known = isKnownTask(log.db, task);
    const info = log.db
      .prepare('INSERT INTO outcomes (task_ref, correct, source, at, note, recorded_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(task, args.correct ? 1 : 0, source, at, note, isoMicros(now));
    id = Number(info.lastInsertRowid);
  } finally {
    log.close();
  }
  const result = { id, task_ref: task, correct: Boolean(args.correct), source, at, note, known_task: known };
  if (args.json) writeJson(result);
  else {
    process.stdout.write(`recorded outcome #${id}: ${task} was ${args.correct ? 'correct' : 'wrong'} (${source}, ${at})\n`);
    if (!known) process.stdout.write(`note: no sidecar or check names ${task} yet; the outcome is kept and will match when one does\n`);
  }
  return 0;
}
