/**
 * The log's words: the event types, the runtimes and one row of the event log. A leaf every part
 * imports (the runtimes, the log, the commands), so none of them imports another for a type.
 */

export const EVENT_TYPES = [
  'session.started',
  'prompt.submitted',
  'tool.executed',
  'tool.failed',
  'subagent.stopped',
  'turn.stopped',
  'reflection.written',
  'session.ended',
  'context.compacting',
  'context.compacted',
  'turn.interrupted',
  'notification',
  /** The turn going on after tool results (Qwen's UserPromptSubmit with an empty prompt): not a prompt. */
  'turn.continued',
  'event.unknown',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const RUNTIMES = ['claude-code', 'cursor', 'codex', 'gemini', 'copilot', 'cline', 'qwen', 'opencode', 'unknown'] as const;
export type Runtime = (typeof RUNTIMES)[number];

/** The envelope `event` of the Stop hook's own record that it wrote a sidecar. */
export const REFLECTION_WRITTEN_EVENT = 'reflection.written';

/** One row of `events`. `payload` is JSON text (a JSON string for a truncated, unparseable payload). */
export interface EventRow {
  /** The spool file's name without `.event`: `<received_us>-<pid>-<rand>`. */
  id: string;
  session_id: string | null;
  agent_id: string | null;
  /** ISO-8601 UTC with microseconds, e.g. 2025-11-22T10:15:00.123456Z. */
  ts: string;
  runtime: Runtime;
  type: EventType;
  hook_event: string | null;
  tool_name: string | null;
  tool_use_id: string | null;
  duration_ms: number | null;
  cwd: string | null;
  payload: string;
  truncated: 0 | 1;
}
