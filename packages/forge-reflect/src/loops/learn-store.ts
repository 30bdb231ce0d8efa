/**
 * Learned patterns (`learnings`, migration 4) and the human actions on them (`learning_actions`).
 * Every confidence change returns a `feedback.*` event (old value, new value, reason) for the log.
 * `accessed_at` is the last time a person or agent acted on a learning (add, confirm, applied,
 * dismiss, rewritten); list and search do not count as access. Nothing is ever deleted.
 */
import { UserError } from '../errors.js';
import type { Database } from '../log/event-log.js';
import { isoMicros } from '../since.js';
import {
  adjustConfidence,
  APPLIED_DELTA,
  clampConfidence,
  CONFIRM_DELTA,
  decayStep,
  DISMISS_DELTA,
  DISMISSAL_LEARNING_CONFIDENCE,
  pruneReason,
  REWRITE_LEARNING_CONFIDENCE,
  START_CONFIDENCE,
  type LearningSource,
  type LearningType,
} from './confidence.js';
import type { LoopEvent } from './loop-events.js';

export interface Learning {
  id: number;
  type: LearningType;
  content: string;
  context: string;
  tags: string[];
  source: string;
  confidence: number;
  status: 'active' | 'archived';
  created_at: string;
  accessed_at: string;
  decay_weeks: number;
  archived_at: string | null;
  archive_reason: string | null;
}

interface Row extends Omit<Learning, 'tags'> {
  tags: string;
}

const fromRow = (r: Row): Learning => ({ ...r, tags: JSON.parse(r.tags) as string[] });

export interface Change {
  learning: Learning;
  events: LoopEvent[];
  /** A learning this action created (dismissal, rewrite). */
  created?: Learning;
}

export function getLearning(db: Database, id: number): Learning {
  const row = db.prepare('SELECT * FROM learnings WHERE id = ?').get(id) as Row | undefined;
  if (row === undefined) throw new UserError(`no learning with id ${id}; see \`forge-reflect learn list --all\``);
  return fromRow(row);
}

function recordAction(db: Database, id: number, action: string, now: number): void {
  db.prepare('INSERT INTO learning_actions (learning_id, action, at) VALUES (?, ?, ?)').run(id, action, isoMicros(now));
}

function changeEvent(id: number, oldValue: number | null, newValue: number, reason: string): LoopEvent {
  const type =
    oldValue === null
      ? 'feedback.learning_added'
      : newValue > oldValue
        ? 'feedback.confidence_increased'
        : newValue < oldValue
          ? 'feedback.confidence_decreased'
          : 'feedback.confidence_unchanged';
  return { type, payload: { learning_id: id, old_confidence: oldValue, new_confidence: newValue, reason } };
}

export interface NewLearning {
  type: LearningType;
  content: string;
  context: string;
  tags: readonly string[];
  /** Where it came from: sets the starting confidence unless `confidence` is given. */
  source: LearningSource;
  confidence?: number;
  /** Free-text provenance kept with it (default: the source). */
  origin?: string;
}

export function addLearning(db: Database, input: NewLearning, now: number, reason = `added (${input.source})`): Change {
  const at = isoMicros(now);
  const confidence = clampConfidence(input.confidence ?? START_CONFIDENCE[input.source]);
  const tags = [...new Set(input.tags.map((t) => t.trim().toLowerCase()).filter((t) => t !== ''))];
  const info = db
    .prepare(
      "INSERT INTO learnings (type, content, context, tags, source, confidence, status, created_at, accessed_at, decay_weeks) VALUES (?, ?, ?, ?, ?, ?, 'active', ?, ?, 0)",
    )
    .run(input.type, input.content, input.context, JSON.stringify(tags), input.origin ?? input.source, confidence, at, at);
  const id = Number(info.lastInsertRowid);
  recordAction(db, id, 'add', now);
  return { learning: getLearning(db, id), events: [changeEvent(id, null, confidence, reason)] };
}

/** Moves confidence by `delta`, marks the learning accessed (its decay starts over) and records the action. */
export function adjustLearning(db: Database, id: number, delta: number, action: string, reason: string, now: number): Change {
  const before = getLearning(db, id);
  const next = adjustConfidence(before.confidence, delta);
  db.prepare('UPDATE learnings SET confidence = ?, accessed_at = ?, decay_weeks = 0 WHERE id = ?').run(next, isoMicros(now), id);
  recordAction(db, id, action, now);
  return { learning: getLearning(db, id), events: [changeEvent(id, before.confidence, next, reason)] };
}

export function confirmLearning(db: Database, id: number, now: number): Change {
  return db.transaction(() => adjustLearning(db, id, CONFIRM_DELTA, 'confirm', 'confirmed by a human', now))();
}

export function appliedLearning(db: Database, id: number, now: number): Change {
  return db.transaction(() => adjustLearning(db, id, APPLIED_DELTA, 'applied', 'suggested fix applied', now))();
}

export function dismissLearning(db: Database, id: number, reason: string | undefined, now: number): Change {
  return db.transaction(() => {
    const change = adjustLearning(db, id, DISMISS_DELTA, 'dismiss', `dismissed by a human${reason ? `: ${reason}` : ''}`, now);
    const l = change.learning;
    const created = addLearning(
      db,
      {
        type: 'semantic',
        content: `A human dismissed learning #${id} ("${l.content}")${reason ? `: ${reason}` : ''}`,
        context: l.context,
        tags: [...l.tags, 'dismissal'],
        source: 'human',
        confidence: DISMISSAL_LEARNING_CONFIDENCE,
        origin: `dismissal:${id}`,
      },
      now,
      `dismissal of #${id} kept as a learning`,
    );
    return { learning: l, events: [...change.events, ...created.events], created: created.learning };
  })();
}

export function rewrittenLearning(db: Database, id: number, human: string, now: number): Change {
  return db.transaction(() => {
    const l = getLearning(db, id);
    db.prepare('UPDATE learnings SET accessed_at = ?, decay_weeks = 0 WHERE id = ?').run(isoMicros(now), id);
    recordAction(db, id, 'rewritten', now);
    const created = addLearning(
      db,
      {
        type: 'procedural',
        content: `Suggested: ${l.content}\nA human preferred: ${human}`,
        context: l.context,
        tags: [...l.tags, 'human-preference'],
        source: 'human',
        confidence: REWRITE_LEARNING_CONFIDENCE,
        origin: `rewrite:${id}`,
      },
      now,
      `human rewrite of #${id} kept as a preference`,
    );
    return { learning: getLearning(db, id), events: created.events, created: created.learning };
  })();
}

export interface ListFilter {
  tag?: string;
  text?: string;
  includeArchived?: boolean;
}

export function listLearnings(db: Database, filter: ListFilter = {}): Learning[] {
  const rows = (
    db.prepare(`SELECT * FROM learnings ${filter.includeArchived ? '' : "WHERE status = 'active'"} ORDER BY confidence DESC, id ASC`).all() as Row[]
  ).map(fromRow);
  const tag = filter.tag?.trim().toLowerCase();
  const words = (filter.text ?? '')
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== '');
  return rows.filter((l) => {
    if (tag !== undefined && tag !== '' && !l.tags.includes(tag)) return false;
    const hay = `${l.content}\n${l.context}\n${l.tags.join(' ')}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

/** Applies the weekly decay to every active learning; returns the changed ones' events. */
export function decayLearnings(db: Database, now: number): { changed: Learning[]; events: LoopEvent[] } {
  return db.transaction(() => {
    const changed: Learning[] = [];
    const events: LoopEvent[] = [];
    for (const l of listLearnings(db)) {
      const step = decayStep(l.confidence, Date.parse(l.accessed_at), now, l.decay_weeks);
      if (step.newWeeks === 0) continue;
      db.prepare('UPDATE learnings SET confidence = ?, decay_weeks = ? WHERE id = ?').run(step.confidence, step.weeks, l.id);
      events.push(changeEvent(l.id, l.confidence, step.confidence, `decay: ${step.newWeeks} week(s) without access`));
      changed.push(getLearning(db, l.id));
    }
    return { changed, events };
  })();
}

/** Archives (never deletes) active learnings below 0.2 or unused for 90 days. */
export function pruneLearnings(db: Database, now: number): { archived: Learning[]; events: LoopEvent[] } {
  return db.transaction(() => {
    const archived: Learning[] = [];
    const events: LoopEvent[] = [];
    for (const l of listLearnings(db)) {
      const reason = pruneReason(l.confidence, Date.parse(l.accessed_at), now);
      if (reason === undefined) continue;
      db.prepare("UPDATE learnings SET status = 'archived', archived_at = ?, archive_reason = ? WHERE id = ?").run(isoMicros(now), reason, l.id);
      recordAction(db, l.id, 'archive', now);
      events.push({ type: 'feedback.learning_archived', payload: { learning_id: l.id, old_confidence: l.confidence, new_confidence: l.confidence, reason } });
      archived.push(getLearning(db, l.id));
    }
    return { archived, events };
  })();
}
