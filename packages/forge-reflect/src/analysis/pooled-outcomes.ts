/**
 * The outcomes `corpus` joins, pooled over a team: the local log's, plus those of each sidecar
 * folder's own state folder (`<dir>/../events.db`, e.g. `alice/.forge/reflections` →
 * `alice/.forge/events.db`). Other logs are attached read-only for the query and never changed.
 * Ids are renumbered in (time, log, id) order so the join's tie-breaking stays deterministic.
 */
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Database } from '../log/event-log.js';
import type { OutcomePoint } from './corpus-join.js';

type Row = Omit<OutcomePoint, 'correct'> & { correct: number };

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** Every outcome of the local log and of the folders' logs; `logs` counts the logs read. */
export function pooledOutcomes(db: Database, localDbPath: string, dirs: readonly string[]): { outcomes: OutcomePoint[]; logs: number } {
  const seen = new Set([real(localDbPath)]);
  const perLog: Row[][] = [db.prepare('SELECT id, task_ref, correct, source, at FROM outcomes ORDER BY at, id').all() as Row[]];
  for (const dir of dirs) {
    const path = join(dirname(resolve(dir)), 'events.db');
    if (!existsSync(path) || seen.has(real(path))) continue;
    seen.add(real(path));
    db.prepare('ATTACH DATABASE ? AS pooled').run(path);
    try {
      const has = db.prepare("SELECT 1 FROM pooled.sqlite_master WHERE type = 'table' AND name = 'outcomes'").get();
      if (has !== undefined) perLog.push(db.prepare('SELECT id, task_ref, correct, source, at FROM pooled.outcomes ORDER BY at, id').all() as Row[]);
    } finally {
      db.exec('DETACH DATABASE pooled');
    }
  }
  const all = perLog.flatMap((rows, log) => rows.map((r) => ({ r, log })));
  all.sort((a, b) => Date.parse(a.r.at) - Date.parse(b.r.at) || a.log - b.log || a.r.id - b.r.id);
  return { outcomes: all.map(({ r }, i) => ({ ...r, id: i + 1, correct: r.correct === 1 })), logs: perLog.length };
}
