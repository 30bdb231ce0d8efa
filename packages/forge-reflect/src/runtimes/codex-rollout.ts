/**
 * The outcome of a Codex tool call, read from the session's rollout file. Codex's PostToolUse
 * payload carries the output text only (no exit code, no duration), but when the hook runs, the
 * rollout (`transcript_path`, JSONL) already holds an `item_completed` line for the call:
 *
 *   {"type":"event_msg","payload":{"type":"item_completed","turn_id":"…","item":
 *     {"type":"CommandExecution","id":"call_2","status":"failed","exit_code":1,"duration":{"secs":0,"nanos":…}}}}
 *
 * The drain reads it (Node, after the fact), never the per-call hook: bounded, from the end of the
 * file backwards, at most ROLLOUT_WINDOW_BYTES, stopping once every wanted call is found. What is
 * not found there (a rollout that grew by more than the window since the call, moved, deleted,
 * unreadable, or on another machine) stays unknown: the event keeps `tool.executed` and a null
 * duration. Nothing is invented.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { basename, isAbsolute } from 'node:path';
import { READ_NO_LINK_NO_WAIT } from '../regular-file.js';
import { obj, str } from './payload.js';

export const ROLLOUT_WINDOW_BYTES = 32 * 1024 * 1024;
const CHUNK_BYTES = 1024 * 1024;
const MARKER = Buffer.from('"item_completed"');

export interface ToolOutcome {
  status: string | null;
  exitCode: number | null;
  durationMs: number | null;
}

export interface WantedCall {
  id: string;
  /** The payload's turn_id; null matches any turn. */
  turnId: string | null;
}

/** A rollout file's path as Codex writes it: absolute, `rollout-*.jsonl`. Anything else is not read. */
export function isRolloutPath(path: unknown): path is string {
  return typeof path === 'string' && isAbsolute(path) && /^rollout-[^/]*\.jsonl$/.test(basename(path)) && !path.includes('\0');
}

/** `{"secs":1,"nanos":5e8}` → 1500; "1.5s" / "350ms" → ms; a bare number has no unit: null. */
export function durationToMs(value: unknown): number | null {
  const o = obj(value);
  if (o && typeof o.secs === 'number' && Number.isFinite(o.secs) && o.secs >= 0) {
    const nanos = typeof o.nanos === 'number' && Number.isFinite(o.nanos) && o.nanos >= 0 ? o.nanos : 0;
    return Math.round(o.secs * 1000 + nanos / 1e6);
  }
  if (typeof value === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s)\s*$/.exec(value);
    if (m) return Math.round(Number(m[1]) * (m[2] === 's' ? 1000 : 1));
  }
  return null;
}

function exitCodeOf(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) ? value : null;
}

/** One rollout line → the completed item's id, turn and outcome; null when it is not one. */
export function parseItemCompleted(line: string): { id: string; turnId: string | null; outcome: ToolOutcome } | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  const top = obj(value);
  const payload = obj(top?.payload) ?? top;
  if (!payload || payload.type !== 'item_completed') return null;
  const item = obj(payload.item);
  const id = str(item?.id) ?? str(item?.call_id);
  if (!item || id === null) return null;
  const ms = durationToMs(item.duration) ?? (typeof item.duration_ms === 'number' && item.duration_ms >= 0 ? Math.round(item.duration_ms) : null);
  return {
    id,
    turnId: str(payload.turn_id) ?? str(payload.turnId),
    outcome: { status: str(item.status), exitCode: exitCodeOf(item.exit_code ?? item.exitCode), durationMs: ms },
  };
}

/** Failed: status failed or declined, or a non-zero exit code. Null when neither is known. */
export function outcomeFailed(outcome: ToolOutcome): boolean | null {
  const status = outcome.status?.toLowerCase() ?? null;
  if (status === 'failed' || status === 'declined') return true;
  if (outcome.exitCode !== null) return outcome.exitCode !== 0;
  if (status === 'completed') return false;
  return null;
}

function keyOf(id: string, turnId: string | null): string {
  return `${turnId ?? ''}\u0000${id}`;
}

/**
 * Reads the rollout backwards (at most `windowBytes`) and returns the latest outcome of each wanted
 * call, keyed `<turnId>\0<id>` as given. A file that cannot be opened as a regular file gives an
 * empty map.
 */
export function readRolloutOutcomes(path: string, wanted: readonly WantedCall[], windowBytes = ROLLOUT_WINDOW_BYTES): Map<string, ToolOutcome> {
  const found = new Map<string, ToolOutcome>();
  if (wanted.length === 0 || !isRolloutPath(path)) return found;
  let fd: number;
  try {
    fd = openSync(path, READ_NO_LINK_NO_WAIT);
  } catch {
    return found;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return found;
    const floor = Math.max(0, stats.size - windowBytes);
    let pos = stats.size;
    let carry: Buffer = Buffer.alloc(0);
    const take = (line: Buffer) => {
      if (line.indexOf(MARKER) < 0) return;
      const parsed = parseItemCompleted(line.toString('utf8'));
      if (!parsed) return;
      for (const w of wanted) {
        const key = keyOf(w.id, w.turnId);
        if (found.has(key) || w.id !== parsed.id) continue;
        if (w.turnId !== null && parsed.turnId !== null && w.turnId !== parsed.turnId) continue;
        found.set(key, parsed.outcome);
      }
    };
    while (pos > floor && found.size < wanted.length) {
      const start = Math.max(floor, pos - CHUNK_BYTES);
      const chunk = Buffer.allocUnsafe(pos - start);
      let filled = 0;
      while (filled < chunk.length) {
        const n = readSync(fd, chunk, filled, chunk.length - filled, start + filled);
        if (n === 0) break;
        filled += n;
      }
      const buf = Buffer.concat([chunk.subarray(0, filled), carry]);
      pos = start;
      // Lines after the first newline are whole; the part before it waits for the next chunk
      // (or, at the start of the file, is whole too). A line cut by the window's floor is skipped.
      let end = buf.length;
      let nl = buf.lastIndexOf(0x0a, end - 1);
      while (nl >= 0) {
        take(buf.subarray(nl + 1, end));
        end = nl;
        nl = end > 0 ? buf.lastIndexOf(0x0a, end - 1) : -1;
      }
      carry = buf.subarray(0, end);
      if (pos === 0) take(carry);
    }
  } catch {
    // unreadable part: what was found so far stands
  } finally {
    closeSync(fd);
  }
  return found;
}

export function outcomeKey(call: WantedCall): string {
  return keyOf(call.id, call.turnId);
}
