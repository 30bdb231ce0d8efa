/**
 * The loops' own events (`loop.*`, `feedback.*`) go into the same `events` table as the hook
 * events. Their ids start with `loop-`, which no spool id does (spool ids start with digits).
 */
import { nodeCrypto } from '../lazy-builtins.js';
import type { EventLog } from '../log/event-log.js';
import type { EventRow, EventType } from '../events.js';
import { isoMicros } from '../since.js';

export const LOOP_EVENT_TYPES = [
  'loop.phase_bounce',
  'loop.diminishing_returns',
  'loop.escalated',
  'feedback.learning_added',
  'feedback.confidence_increased',
  'feedback.confidence_decreased',
  'feedback.confidence_unchanged',
  'feedback.learning_archived',
] as const;
export type LoopEventType = (typeof LOOP_EVENT_TYPES)[number];

export interface LoopEvent {
  type: LoopEventType;
  payload: Record<string, unknown>;
}

export function loopEventRow(event: LoopEvent, now: number): EventRow {
  return {
    id: `loop-${now}-${nodeCrypto().randomBytes(6).toString('hex')}`,
    session_id: null,
    agent_id: null,
    ts: isoMicros(now),
    runtime: 'unknown',
    type: event.type as unknown as EventType, // the loops extend the hook event types
    hook_event: null,
    tool_name: null,
    tool_use_id: null,
    duration_ms: null,
    cwd: null,
    payload: JSON.stringify(event.payload),
    truncated: 0,
  };
}

export function insertLoopEvents(log: EventLog, events: readonly LoopEvent[], now: number): void {
  log.insertBatch(events.map((e) => loopEventRow(e, now)));
}
