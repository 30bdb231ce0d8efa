/**
 * Stagnation: per session, the streak of the same failing tool call (same tool, same input), and
 * a run once a streak reaches STAGNATION_THRESHOLD. The rollups keep both at insert time.
 */
import { nodeCrypto } from '../lazy-builtins.js';

/** A run of at least STAGNATION_THRESHOLD consecutive failures of the same tool call (same tool and input) in a session. */
export const STAGNATION_THRESHOLD = 3;

const SEP = '\u0000';

/**
 * The signature of a failed call for stagnation: its tool name and its `tool_input` as stored
 * (a string input as itself, any other value as JSON), hashed. `undefined` when the payload is
 * not JSON (the log stores every payload as JSON, a truncated one as a JSON string).
 */
export function callSignature(tool: string | null, payload: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return undefined;
  }
  const input = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as { tool_input?: unknown }).tool_input : undefined;
  const text = input === undefined || input === null ? '' : typeof input === 'string' ? input : JSON.stringify(input);
  return nodeCrypto()
    .createHash('sha1')
    .update(`${tool ?? ''}${SEP}${text}`)
    .digest('base64');
}

/** Where a session's failing-call streak stands after its latest call (by `ts`, then `id`). */
export interface Streak {
  ts: string;
  id: string;
  sig: string | null;
  len: number;
}

export interface Call {
  ts: string;
  id: string;
  type: string;
  tool_name: string | null;
  payload: string | null;
}

export interface Run {
  ts: string;
  id: string;
  session: string;
}

/** Sessions of stagnation: a null session id and '' are one, as they were in the SQL definition. */
export const stagnationKey = (session: string | null): string => session ?? '';

export const before = (a: { ts: string; id: string }, b: { ts: string; id: string }): boolean => a.ts < b.ts || (a.ts === b.ts && a.id < b.id);

export function step(streak: Streak, call: Call, session: string, runs: Run[]): void {
  streak.ts = call.ts;
  streak.id = call.id;
  if (call.type !== 'tool.failed') {
    streak.sig = null;
    streak.len = 0;
    return;
  }
  const sig = callSignature(call.tool_name, call.payload ?? '');
  if (sig === undefined) return; // not JSON: not a call (the SQL definition required json_valid)
  if (streak.len > 0 && streak.sig === sig) streak.len += 1;
  else {
    streak.sig = sig;
    streak.len = 1;
  }
  if (streak.len === STAGNATION_THRESHOLD) runs.push({ ts: call.ts, id: call.id, session });
}
