/** The bounce loop's tables (migration 4): `checks` (every check) and `bounces` (every bounce). */
import type { Database } from '../log/event-log.js';
import { isoMicros } from '../since.js';
import type { BounceDecision, CheckSummary, Phase, TaskHistory } from './bounce-core.js';

export function taskHistory(db: Database, task: string, phase: Phase): TaskHistory {
  const last = db.prepare('SELECT number, actionable FROM bounces WHERE task_ref = ? AND phase = ? ORDER BY number DESC LIMIT 1').get(task, phase) as
    | { number: number; actionable: number }
    | undefined;
  const passed = new Set<string>();
  const rows = db
    .prepare("SELECT passed_tests FROM checks WHERE task_ref = ? AND phase = 'testing' AND passed_tests IS NOT NULL")
    .pluck()
    .all(task) as string[];
  for (const text of rows) for (const name of JSON.parse(text) as string[]) passed.add(name);
  return last === undefined ? { bounces: 0, previously_passed: passed } : { bounces: last.number, last_actionable: last.actionable, previously_passed: passed };
}

/** All bounces of a task, over every phase. */
export function taskBounces(db: Database, task: string): number {
  return Number(db.prepare('SELECT count(*) FROM bounces WHERE task_ref = ?').pluck().get(task));
}

export interface RecordedCheck {
  check_id: number;
  /** Bounces of the task over all phases, this one included. */
  task_bounces: number;
  /** The earlier bounce this check resolved (1) or did not (0), if there was one open. */
  closed_bounce?: { number: number; resolved: 0 | 1 };
}

/**
 * Records a check and its decision in one transaction: the check row, the verdict on the
 * phase's open bounce (resolved = this check approves), and the new bounce row if it bounces.
 */
export function recordCheck(db: Database, task: string, check: CheckSummary, decision: BounceDecision, now: number): RecordedCheck {
  const at = isoMicros(now);
  return db.transaction((): RecordedCheck => {
    const info = db
      .prepare(
        'INSERT INTO checks (task_ref, phase, at, decision, rule, total_items, actionable, passed_tests, failed_tests) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        task,
        check.phase,
        at,
        decision.decision,
        decision.rule,
        check.total,
        check.items.length,
        check.passed_tests ? JSON.stringify(check.passed_tests) : null,
        check.failed_tests ? JSON.stringify(check.failed_tests) : null,
      );
    const open = db
      .prepare('SELECT id, number FROM bounces WHERE task_ref = ? AND phase = ? AND resolved IS NULL ORDER BY number DESC LIMIT 1')
      .get(task, check.phase) as { id: number; number: number } | undefined;
    const out: RecordedCheck = { check_id: Number(info.lastInsertRowid), task_bounces: 0 };
    if (open) {
      const resolved = decision.decision === 'approve' ? 1 : 0;
      db.prepare('UPDATE bounces SET resolved = ? WHERE id = ?').run(resolved, open.id);
      out.closed_bounce = { number: open.number, resolved };
    }
    if (decision.decision === 'bounce') {
      db.prepare('INSERT INTO bounces (task_ref, phase, number, total_items, actionable, resolved, at) VALUES (?, ?, ?, ?, ?, NULL, ?)').run(
        task,
        check.phase,
        decision.bounce_number,
        check.total,
        check.items.length,
        at,
      );
    }
    out.task_bounces = taskBounces(db, task);
    return out;
  })();
}

/** Whether a task is known: a sidecar names it, or it has been checked. */
export function isKnownTask(db: Database, task: string): boolean {
  const inSidecars = db.prepare('SELECT 1 FROM sidecars WHERE task_ref = ? LIMIT 1').get(task) !== undefined;
  return inSidecars || db.prepare('SELECT 1 FROM checks WHERE task_ref = ? LIMIT 1').get(task) !== undefined;
}
