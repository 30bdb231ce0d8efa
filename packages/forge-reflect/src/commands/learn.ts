/** `forge-reflect learn <action>`: keep learned patterns and move their confidence on feedback. */
import { openDrainedLog } from '../log/drain.js';
import type { EventLog } from '../log/event-log.js';
import { openDrainedLogForReading } from '../log/reading-log.js';
import { usageError } from '../errors.js';
import { formatTable, writeJson } from '../output.js';
import { resolveStateDir } from '../state-dir.js';
import { resolveNow } from '../loops/clock.js';
import { LEARNING_SOURCES, LEARNING_TYPES, type LearningSource, type LearningType } from '../loops/confidence.js';
import {
  addLearning,
  appliedLearning,
  type Change,
  confirmLearning,
  decayLearnings,
  dismissLearning,
  listLearnings,
  pruneLearnings,
  rewrittenLearning,
  type Learning,
} from '../loops/learn-store.js';
import { insertLoopEvents, type LoopEvent } from '../loops/loop-events.js';

export const LEARN_ACTIONS = ['add', 'list', 'search', 'dismiss', 'confirm', 'applied', 'rewritten', 'decay', 'prune'] as const;
type LearnAction = (typeof LEARN_ACTIONS)[number];

function requiredText(args: Record<string, unknown>, name: string, example: string): string {
  const value = args[name];
  if (Array.isArray(value)) throw usageError(`--${name} was given more than once; give it once`);
  if (value === undefined || String(value).trim() === '') throw usageError(`--${name} is required here, e.g. ${example}`);
  return String(value);
}

function idArg(args: Record<string, unknown>, action: string): number {
  const raw = args.target;
  if (raw === undefined) throw usageError(`learn ${action} needs a learning id, e.g. forge-reflect learn ${action} 3`);
  const text = String(raw).trim().replace(/^#/, '');
  if (!/^\d{1,12}$/.test(text)) throw usageError(`${JSON.stringify(String(raw))} is not a learning id (a whole number, e.g. 3)`);
  return Number(text);
}

function rows(list: readonly Learning[]): string {
  if (list.length === 0) return 'no learnings match\n';
  return `${formatTable(
    ['ID', 'CONF', 'TYPE', 'STATUS', 'TAGS', 'CONTENT'],
    list.map((l) => [String(l.id), l.confidence.toFixed(2), l.type, l.status, l.tags.join(','), l.content.replace(/\s+/g, ' ').slice(0, 80)]),
  )}\n`;
}

function describeEvents(events: readonly LoopEvent[]): string {
  return events
    .map((e) => {
      const p = e.payload as { learning_id: number; old_confidence: number | null; new_confidence: number; reason: string };
      const from = p.old_confidence === null ? 'new' : p.old_confidence.toFixed(2);
      return `#${p.learning_id}: ${from} → ${p.new_confidence.toFixed(2)} (${p.reason})\n`;
    })
    .join('');
}

/** The events as --json shows them: each one flat, its type beside its payload. */
function changesOf(events: readonly LoopEvent[]): Array<Record<string, unknown>> {
  return events.map((e) => ({ type: e.type, ...e.payload }));
}

/**
 * The action and the options checked before the log is opened. The action's own operands (the id,
 * --content, --human, search text) are read once it is open.
 */
interface Request {
  args: Record<string, unknown>;
  action: LearnAction;
  now: number;
  json: boolean;
  /** add's kind of learning and where it came from. */
  added?: { type: LearningType; source: LearningSource };
}

/** What an action works on: the request and the open log. */
interface Learn extends Request {
  log: EventLog;
}

/** What an action prints: its --json value, else its text. */
interface Result {
  json: unknown;
  text: string;
}

export async function run(args: Record<string, unknown>): Promise<number> {
  const request = resolveRequest(args);
  const log = openLogFor(request.action);
  let result: Result;
  try {
    result = ACTIONS[request.action]({ ...request, log });
  } finally {
    log.close();
  }
  printResult(result, request.json);
  return 0;
}

function resolveRequest(args: Record<string, unknown>): Request {
  const action = String(args.action);
  if (!(LEARN_ACTIONS as readonly string[]).includes(action))
    throw usageError(`unknown learn action ${JSON.stringify(action)}; use one of ${LEARN_ACTIONS.join(', ')}`);
  const now = resolveNow(args);
  const request: Request = { args, action: action as LearnAction, now, json: Boolean(args.json) };
  if (action === 'add') request.added = addedKind(args);
  return request;
}

function addedKind(args: Record<string, unknown>): { type: LearningType; source: LearningSource } {
  const type = String(args.type ?? 'semantic') as LearningType;
  if (!(LEARNING_TYPES as readonly string[]).includes(type)) throw usageError(`--type must be one of ${LEARNING_TYPES.join(', ')}`);
  const source = String(args.source ?? 'machine') as LearningSource;
  if (!(LEARNING_SOURCES as readonly string[]).includes(source)) throw usageError(`--source must be one of ${LEARNING_SOURCES.join(', ')}`);
  return { type, source };
}

/** Only `add` makes something from nothing; every other action on no state finds nothing to change. */
function openLogFor(action: LearnAction): EventLog {
  const stateDir = resolveStateDir();
  return action === 'add' ? openDrainedLog(stateDir) : openDrainedLogForReading(stateDir);
}

const ACTIONS: Record<LearnAction, (learn: Learn) => Result> = {
  add: addOne,
  list: listMatching,
  search: listMatching,
  dismiss: giveFeedback,
  confirm: giveFeedback,
  applied: giveFeedback,
  rewritten: giveFeedback,
  decay: decayUnused,
  prune: archiveWeak,
};

function addOne({ args, log, now, added }: Learn): Result {
  const { type, source } = added as { type: LearningType; source: LearningSource };
  const tags = (Array.isArray(args.tags) ? args.tags : args.tags === undefined ? [] : [args.tags]).flatMap((t) => String(t).split(','));
  const change = addLearning(log.db, { type, source, content: requiredText(args, 'content', '--content "…"'), context: String(args.context ?? ''), tags }, now);
  insertLoopEvents(log, change.events, now);
  const { learning } = change;
  return { json: learning, text: `added learning #${learning.id} (${learning.type}, confidence ${learning.confidence.toFixed(2)})\n` };
}

function listMatching({ args, action, log }: Learn): Result {
  const filter = {
    ...(args.tag !== undefined ? { tag: String(args.tag) } : {}),
    ...(action === 'search' && args.target !== undefined ? { text: String(args.target) } : {}),
    includeArchived: Boolean(args.all),
  };
  if (action === 'search' && filter.text === undefined && filter.tag === undefined)
    throw usageError('learn search needs text or --tag, e.g. learn search "null check" --tag auth');
  const list = listLearnings(log.db, filter);
  return { json: list, text: rows(list) };
}

/** dismiss, confirm, applied, rewritten: a person's word on one learning. */
function giveFeedback({ args, action, log, now }: Learn): Result {
  const change = feedbackChange(log, action, idArg(args, action), args, now);
  insertLoopEvents(log, change.events, now);
  return {
    json: { learning: change.learning, created: change.created ?? null, changes: changesOf(change.events) },
    text: describeEvents(change.events),
  };
}

function feedbackChange({ db }: EventLog, action: LearnAction, id: number, args: Record<string, unknown>, now: number): Change {
  if (action === 'dismiss') return dismissLearning(db, id, args.reason === undefined ? undefined : String(args.reason), now);
  if (action === 'confirm') return confirmLearning(db, id, now);
  if (action === 'applied') return appliedLearning(db, id, now);
  return rewrittenLearning(db, id, requiredText(args, 'human', '--human "use early returns"'), now);
}

function decayUnused({ log, now }: Learn): Result {
  const result = decayLearnings(log.db, now);
  insertLoopEvents(log, result.events, now);
  return {
    json: { changed: result.changed, changes: changesOf(result.events) },
    text: result.events.length === 0 ? 'nothing to decay\n' : describeEvents(result.events),
  };
}

function archiveWeak({ log, now }: Learn): Result {
  const { archived, events } = pruneLearnings(log.db, now);
  insertLoopEvents(log, events, now);
  return {
    json: { archived },
    text:
      archived.length === 0
        ? 'nothing to archive\n'
        : archived.map((l) => `archived #${l.id} (${l.archive_reason ?? ''}, confidence ${l.confidence.toFixed(2)})\n`).join(''),
  };
}

function printResult({ json, text }: Result, asJson: boolean): void {
  if (asJson) writeJson(json);
  else process.stdout.write(text);
}
