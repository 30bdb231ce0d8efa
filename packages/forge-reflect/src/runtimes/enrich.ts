/**
 * What the drain learns about an event beyond its own payload, per runtime:
 *
 * - Codex PostToolUse: the outcome of the call from the session's rollout file (codex-rollout.ts):
 *   a failed call becomes `tool.failed`, and the call's duration is taken. One bounded read per
 *   rollout per batch.
 * - Gemini SessionEnd: Gemini fires it up to three times on an interactive /quit. A repeat (same
 *   session, same reason, within REPEAT_WINDOW_MS of one already logged or earlier in the batch)
 *   is not stored again; the drain counts it as already present.
 */
import type { EventRow } from '../events.js';
import { salvageTopLevel } from './shapes.js';
import { outcomeFailed, outcomeKey, readRolloutOutcomes, type ToolOutcome, type WantedCall } from './codex-rollout.js';
import { obj, str } from './payload.js';

export const REPEAT_WINDOW_MS = 10_000;

type ReadOutcomes = (path: string, wanted: readonly WantedCall[]) => Map<string, ToolOutcome>;

/** The row's payload; for a truncated one (stored as its text), the top-level fields still readable. */
function payloadOf(row: EventRow): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(row.payload);
    return typeof value === 'string' ? salvageTopLevel(value) : obj(value);
  } catch {
    return undefined;
  }
}

/** Sets type and duration of Codex tool events from their rollouts. Rows are changed in place. */
export function enrichCodexToolCalls(rows: EventRow[], read: ReadOutcomes = readRolloutOutcomes): void {
  const byPath = new Map<string, Array<{ row: EventRow; call: WantedCall }>>();
  for (const row of rows) {
    if (row.runtime !== 'codex' || row.hook_event !== 'PostToolUse' || row.tool_use_id === null) continue;
    const p = payloadOf(row);
    const path = str(p?.transcript_path);
    if (path === null) continue;
    const list = byPath.get(path) ?? [];
    list.push({ row, call: { id: row.tool_use_id, turnId: str(p?.turn_id) } });
    byPath.set(path, list);
  }
  for (const [path, list] of byPath) {
    const wanted = [...new Map(list.map((e) => [outcomeKey(e.call), e.call])).values()];
    const found = read(path, wanted);
    for (const { row, call } of list) {
      const outcome = found.get(outcomeKey(call));
      if (!outcome) continue;
      if (outcomeFailed(outcome) === true) row.type = 'tool.failed';
      if (row.duration_ms === null && outcome.durationMs !== null) row.duration_ms = outcome.durationMs;
    }
  }
}

function reasonOf(row: EventRow): string {
  return str(payloadOf(row)?.reason) ?? '';
}

/**
 * The Gemini SessionEnd rows of a batch that repeat one already seen. `latestLogged(session)` gives
 * the time (ISO) and payload of the newest such row in the log, if any.
 */
export function repeatedSessionEnds(rows: readonly EventRow[], latestLogged: (session: string) => { ts: string; payload: string } | undefined): Set<EventRow> {
  const repeats = new Set<EventRow>();
  const seen = new Map<string, { ms: number; reason: string }>();
  for (const row of rows) {
    if (row.runtime !== 'gemini' || row.type !== 'session.ended' || row.session_id === null) continue;
    const at = Date.parse(row.ts);
    const reason = reasonOf(row);
    let last = seen.get(row.session_id);
    if (last === undefined) {
      const logged = latestLogged(row.session_id);
      if (logged) last = { ms: Date.parse(logged.ts), reason: reasonOf({ ...row, payload: logged.payload }) };
    }
    if (last !== undefined && last.reason === reason && at >= last.ms && at - last.ms <= REPEAT_WINDOW_MS) {
      repeats.add(row);
      continue;
    }
    seen.set(row.session_id, { ms: at, reason });
  }
  return repeats;
}
