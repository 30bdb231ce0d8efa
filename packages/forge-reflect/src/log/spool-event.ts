/**
 * One spool file → one event row (docs/spool-format.md). Pure: a name and bytes in, a redacted
 * row or a rejection reason out.
 *
 * Line 1 is the hook's envelope, every byte after the first `\n` the runtime's payload. The
 * payload is parsed, redacted (every string, keys included) and typed by its shape. A truncated
 * payload that no longer parses is kept as its redacted text, stored as a JSON string, with
 * truncated = 1: the `payload` column always holds valid JSON.
 */
import type { EventRow } from '../events.js';
import { redactJsonInPlace, redactText, type RedactionRules } from './redact.js';
import { recognise, salvageTopLevel } from '../runtimes/shapes.js';
import { safeStringify } from '../safe-json.js';

export const SPOOL_SUFFIX = '.event';
export const ENVELOPE_VERSION = 1;

/**
 * `<received_us: 16 digits>-<pid>-<rand: 4–8 hex>`, in the syntax JavaScript and POSIX extended
 * regular expressions share: the background remover of drained files (drained-lists.ts) matches
 * its lines with `grep -E` against this same text.
 */
export const ID_SOURCE = '([0-9]{16})-([0-9]{1,10})-([0-9a-fA-F]{4,8})';
const ID_PATTERN = new RegExp(`^${ID_SOURCE}$`);

/**
 * `incomplete`: the file may still be being written (the event hook writes a small payload straight
 * under its final name, its length in the envelope's `bytes`): not an event yet, not yet a reject.
 */
export type SpoolOutcome = { ok: true; row: EventRow } | { ok: false; reason: string; incomplete?: true };

export interface Envelope {
  v: number;
  /** The event's id: a record of the spool log carries it (a spool file's name is its id). */
  id: string | null;
  source: string;
  event: string;
  /** The runtime the registration named (claude-code, codex, gemini), or '' (then the payload's shape decides). */
  runtime: string;
  received_us: number;
  pid: number | null;
  cwd: string | null;
  bytes: number | null;
  /** The hook's payload cap: a stored payload longer than this was cut (docs/spool-format.md). */
  cap: number | null;
  /**
   * `"clock":"file"`: the hook had no clock (bash before 5, a Mac's 3.2) and named the file with 16
   * zeros; the event's time is the spool file's time of writing (parseSpoolFile's `writtenMs`).
   */
  fileClock: boolean;
  truncated: boolean;
}

export function isSpoolFileName(name: string): boolean {
  return name.endsWith(SPOOL_SUFFIX) && !name.startsWith('.');
}

/** `1763806500123456` → `2025-11-22T10:15:00.123456Z`. */
let cachedSecond = Number.NaN;
let cachedPrefix = '';

export function isoFromMicros(us: number): string {
  const seconds = Math.floor(us / 1_000_000);
  const micros = us - seconds * 1_000_000;
  if (seconds !== cachedSecond) {
    // a drain's files come in time order, so most share the second of the one before
    cachedPrefix = new Date(seconds * 1000).toISOString().slice(0, 19);
    cachedSecond = seconds;
  }
  return `${cachedPrefix}.${String(micros).padStart(6, '0')}Z`;
}

/** Microsecond times a spool file can carry: after 2000-01-01, before 2200-01-01. */
function plausibleMicros(us: unknown): us is number {
  return typeof us === 'number' && Number.isSafeInteger(us) && us >= 946_684_800_000_000 && us < 7_258_118_400_000_000;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

/**
 * Parses an envelope. `idMicros`: the receive time the file name carries; without it (a record of the
 * spool log) the envelope's own `id` must name one.
 */
export function parseEnvelope(line: string, idMicros?: number): Parsed<Envelope> {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return { ok: false, reason: 'envelope (line 1) is not JSON' };
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, reason: 'envelope (line 1) is not a JSON object' };
  const e = raw as Record<string, unknown>;
  if (e.v !== ENVELOPE_VERSION) return { ok: false, reason: `envelope version ${JSON.stringify(e.v ?? null)} is not ${ENVELOPE_VERSION}` };
  if (e.event !== undefined && typeof e.event !== 'string') return { ok: false, reason: 'envelope "event" is not a string' };
  const id = typeof e.id === 'string' ? e.id : null;
  if (idMicros === undefined) {
    const fromId = id === null ? undefined : idMicrosOf(id);
    if (fromId === undefined || !fromId.ok) return { ok: false, reason: 'envelope "id" is missing or not <received_us:16 digits>-<pid>-<4-8 hex>' };
    idMicros = fromId.value;
  }
  const receivedUs = plausibleMicros(e.received_us) ? e.received_us : idMicros;
  return {
    ok: true,
    value: {
      v: ENVELOPE_VERSION,
      id,
      source: typeof e.source === 'string' ? e.source : '',
      event: typeof e.event === 'string' ? e.event : '',
      runtime: typeof e.runtime === 'string' ? e.runtime : '',
      received_us: receivedUs,
      pid: typeof e.pid === 'number' && Number.isSafeInteger(e.pid) ? e.pid : null,
      cwd: typeof e.cwd === 'string' && e.cwd !== '' ? e.cwd : null,
      bytes: typeof e.bytes === 'number' && Number.isSafeInteger(e.bytes) && e.bytes >= 0 ? e.bytes : null,
      cap: typeof e.cap === 'number' && Number.isSafeInteger(e.cap) && e.cap > 0 ? e.cap : null,
      truncated: e.truncated === true,
      fileClock: e.clock === 'file',
    },
  };
}

/** Why a file of a hook without a clock was not taken from its bytes alone. */
export const NEEDS_WRITE_TIME = 'the hook had no clock: the time of writing of its file is needed';

/**
 * Maps one spool file to its row. `name` is the file name (`<id>.event`), `bytes` its content,
 * `writtenMs` its time of writing (fstat's mtimeMs), needed for a file of a coarse clock: without
 * it such a file is refused with NEEDS_WRITE_TIME, as incomplete, so the caller reads it again.
 */
export function parseSpoolFile(name: string, bytes: Uint8Array, rules: RedactionRules, writtenMs?: number): SpoolOutcome {
  if (!name.endsWith(SPOOL_SUFFIX)) return { ok: false, reason: `file name does not end in ${SPOOL_SUFFIX}` };
  const id = name.slice(0, -SPOOL_SUFFIX.length);
  const idMatch = ID_PATTERN.exec(id);
  if (!idMatch) return { ok: false, reason: 'file name is not <received_us:16 digits>-<pid>-<4-8 hex>.event' };
  const idMicros = Number(idMatch[1]);
  // 16 zeros: a hook without a clock, whose envelope must say so (below).
  if (idMicros !== 0 && !plausibleMicros(idMicros)) return { ok: false, reason: 'received_us in the file name is not a plausible time' };

  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const newline = buffer.indexOf(0x0a);
  if (newline < 0) return { ok: false, incomplete: true, reason: 'no newline after the envelope (line 1); the payload is missing' };
  const envelope = parseEnvelope(buffer.toString('utf8', 0, newline), idMicros);
  if (!envelope.ok) return envelope;
  const env = envelope.value;
  if (idMicros === 0 && !env.fileClock) return { ok: false, reason: 'received_us in the file name is not a plausible time' };
  // A file written straight under its final name is whole only with exactly `bytes` payload bytes.
  if (env.bytes !== null) {
    const held = buffer.length - (newline + 1);
    if (held < env.bytes) return { ok: false, incomplete: true, reason: `the payload holds ${held} of the ${env.bytes} bytes its envelope names` };
    if (held > env.bytes) return { ok: false, reason: `the payload holds ${held} bytes, more than the ${env.bytes} its envelope names` };
  }
  let rowId = id;
  if (env.fileClock && idMicros === 0) {
    // The time is when the file was written; the row's id carries it in place of the zeros, the
    // same at every read of the same file (a drain killed before it removed the file reads it again).
    if (writtenMs === undefined) return { ok: false, incomplete: true, reason: NEEDS_WRITE_TIME };
    const writtenUs = Math.round(writtenMs * 1000);
    if (!plausibleMicros(writtenUs)) return { ok: false, reason: 'the file of a hook without a clock has no plausible time of writing' };
    env.received_us = writtenUs;
    rowId = `${String(writtenUs).padStart(16, '0')}${id.slice(16)}`;
  }
  return eventRow(rowId, env, buffer, newline + 1, buffer.length, rules);
}

/** The id's receive time in microseconds, or why the id is not one (`<received_us:16>-<pid>-<4-8 hex>`). */
export function idMicrosOf(id: string): Parsed<number> {
  const idMatch = ID_PATTERN.exec(id);
  if (!idMatch) return { ok: false, reason: 'id is not <received_us:16 digits>-<pid>-<4-8 hex>' };
  const micros = Number(idMatch[1]);
  if (!plausibleMicros(micros)) return { ok: false, reason: 'received_us in the id is not a plausible time' };
  return { ok: true, value: micros };
}

/**
 * The row of one event whose envelope is parsed and whose payload is `buffer[start, end)` (a spool
 * file's bytes after line 1, or a record of the spool log: spool-log.ts).
 */
export function eventRow(id: string, env: Envelope, buffer: Buffer, start: number, end: number, rules: RedactionRules): SpoolOutcome {
  // The hook keeps cap + 1 bytes of a longer stdin: cut to the cap and mark the event truncated.
  if (env.cap !== null && end - start > env.cap) {
    end = start + env.cap;
    env.truncated = true;
  }
  const text = buffer.toString('utf8', start, end);
  let value: unknown;
  let parsed = true;
  try {
    value = JSON.parse(text);
  } catch {
    parsed = false;
  }
  if (!parsed && !env.truncated) {
    return { ok: false, reason: text.trim() === '' ? 'payload is empty and not marked truncated' : 'payload is not JSON and not marked truncated' };
  }

  let payload: string;
  let shapeSource: unknown;
  if (parsed) {
    // Stored as re-serialised, never as the text itself, even when nothing was redacted: a key given
    // twice keeps only its last value once parsed, and the text would still hold the first.
    shapeSource = redactJsonInPlace(value, rules);
    payload = safeStringify(shapeSource);
  } else {
    const redacted = redactText(text, rules);
    shapeSource = salvageTopLevel(redacted);
    payload = JSON.stringify(redacted);
  }
  const shape = recognise(shapeSource, redactText(env.event, rules), env.runtime);
  const envelopeCwd = env.cwd === null ? null : redactText(env.cwd, rules);
  return {
    ok: true,
    row: {
      id,
      session_id: shape.sessionId,
      agent_id: shape.agentId,
      ts: isoFromMicros(env.received_us),
      runtime: shape.runtime,
      type: shape.type,
      hook_event: shape.hookEvent,
      tool_name: shape.toolName,
      tool_use_id: shape.toolUseId,
      duration_ms: shape.durationMs,
      cwd: shape.cwd ?? envelopeCwd,
      payload,
      truncated: env.truncated ? 1 : 0,
    },
  };
}
