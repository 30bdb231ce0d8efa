/** `forge-reflect learn <action>`: keep learned patterns and move their confidence on feedback. */
import { openDrainedLog } from '../log/drain.js';
import { openDrainedLogForReading } from '../log/reading-log.js';
import { usageError } from '../errors.js';
import { formatTable, writeJson } from '../output.js';
import { resolveStateDir } from '../state-dir.js';
import { resolveNow } from '../loops/clock.js';
import { LEARNING_SOURCES, LEARNING_TYPES, type LearningSource, type LearningType } from '../loops/confidence.js';
import {
  addLearning,
  appliedLearning,
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

export async function run(args: Record<string, unknown>): Promise<number> {
  const action = String(args.action);
  if (!(LEARN_ACTIONS as readonly string[]).includes(action))
    throw usageError(`unknown learn action ${JSON.stringify(action)}; use one of ${LEARN_ACTIONS.join(', ')}`);
  const now = resolveNow(args);
  // Validate options before opening anything.
  let type: LearningType | undefined;
  let source: LearningSource | undefined;
  if (action === 'add') {
    type = String(args.type ?? 'semantic') as LearningType;
    if (!(LEARNING_TYPES as readonly string[]).includes(type)) throw usageError(`--type must be one of ${LEARNING_TYPES.join(', ')}`);
    source = String(args.source ?? 'machine') as LearningSource;
    if (!(LEARNING_SOURCES as readonly string[]).includes(source)) throw usageError(`--source must be one of ${LEARNING_SOURCES.join(', ')}`);
  }
  const stateDir = resolveStateDir();
  // only `add` makes something from nothing; every other action on no state finds nothing to change
  const log = action === 'add' ? openDrainedLog(stateDir) : openDrainedLogForReading(stateDir);
  let out: unknown;
  let text: string;
  try {
    const db = log.db;
    const apply = (events: readonly LoopEvent[]) => insertLoopEvents(log, events, now);
    switch (action) {
      case 'add': {
        const tags = (Array.isArray(args.tags) ? args.tags : args.tags === undefined ? [] : [args.tags]).flatMap((t) => String(t).split(','));
        const change = addLearning(
          db,
          {
            type: type as LearningType,
            source: source as LearningSource,
            content: requiredText(args, 'content', '--content "…"'),
            context: String(args.context ?? ''),
            tags,
          },
          now,
        );
        apply(change.events);
        out = change.learning;
        text = `added learning #${change.learning.id} (${change.learning.type}, confidence ${change.learning.confidence.toFixed(2)})\n`;
        break;
      }
      case 'list':
      case 'search': {
        const filter = {
          ...(args.tag !== undefined ? { tag: String(args.tag) } : {}),
          ...(action === 'search' && args.target !== undefined ? { text: String(args.target) } : {}),
          includeArchived: Boolean(args.all),
        };
        if (action === 'search' && filter.text === undefined && filter.tag === undefined)
          throw usageError('learn search needs text or --tag, e.g. learn search "null check" --tag auth');
        const list = listLearnings(db, filter);
        out = list;
        text = rows(list);
        break;
      }
      case 'dismiss':
      case 'confirm':
      case 'applied':
      case 'rewritten': {
        const id = idArg(args, action);
        const change =
          action === 'dismiss'
            ? dismissLearning(db, id, args.reason === undefined ? undefined : String(args.reason), now)
            : action === 'confirm'
              ? confirmLearning(db, id, now)
              : action === 'applied'
                ? appliedLearning(db, id, now)
                : rewrittenLearning(db, id, requiredText(args, 'human', '--human "use early returns"'), now);
        apply(change.events);
        out = { learning: change.learning, created: change.created ?? null, changes: change.events.map((e) => ({ type: e.type, ...e.payload })) };
        text = describeEvents(change.events);
        break;
      }
      case 'decay': {
        const result = decayLearnings(db, now);
        apply(result.events);
        out = { changed: result.changed, changes: result.events.map((e) => ({ type: e.type, ...e.payload })) };
        text = result.events.length === 0 ? 'nothing to decay\n' : describeEvents(result.events);
        break;
      }
      default: {
        const result = pruneLearnings(db, now);
        apply(result.events);
        out = { archived: result.archived };
        text =
          result.archived.length === 0
            ? 'nothing to archive\n'
            : result.archived.map((l) => `archived #${l.id} (${l.archive_reason ?? ''}, confidence ${l.confidence.toFixed(2)})\n`).join('');
      }
    }
  } finally {
    log.close();
  }
  if (args.json) writeJson(out);
  else process.stdout.write(text);
  return 0;
}
