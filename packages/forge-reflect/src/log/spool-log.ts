/**
 * The spool log (docs/spool-format.md): the event hook appends a small event to
 * `spool/events.log` as one record instead of creating a file for it, and a drain seals that log
 * (renames it to a segment, `<sealed_us>-<pid>.seg`) before reading it. Pure: bytes in, records
 * out.
 *
 * A record is `\x1e` + envelope (JSON with the event's `id` and the payload's length in `bytes`) +
 * `\x1f` + exactly `bytes` payload bytes + `\n`, the last left out when the payload ends in one. The hook writes a record with one
 * append of at most 4 KiB, which the kernel never interleaves with another; a record that was cut
 * short (a full disk, a kill in the middle of the write) is found by its framing, and the scan goes
 * on from the next `\x1e`. Zeros are what a drain left of records it committed (scrub.ts);
 * a record never holds one (the hook drops NUL bytes), and a scan steps over them.
 */
import { type Envelope, parseEnvelope } from './spool-event.js';

export const LIVE_LOG_NAME = 'events.log';
export const SEGMENT_SUFFIX = '.seg';
export const RECORD_START = 0x1e;
export const PAYLOAD_START = 0x1f;
export const RECORD_END = 0x0a;
/** The hook appends records of at most 4 KiB; one this long did not come from it. */
export const MAX_RECORD_BYTES = 64 * 1024;

const SEGMENT_PATTERN = /^(\d{16})-(\d{1,10})\.seg$/;

export function isSegmentName(name: string): boolean {
  return SEGMENT_PATTERN.test(name);
}

/** The time (ms since the epoch) a segment was sealed, from its name. */
export function sealedMsOf(name: string): number {
  const m = SEGMENT_PATTERN.exec(name);
  return m ? Math.floor(Number(m[1]) / 1000) : 0;
}

export function segmentName(nowUs: number, pid: number): string {
  return `${String(Math.trunc(nowUs)).padStart(16, '0')}-${pid}${SEGMENT_SUFFIX}`;
}

/** What starts at a position of a segment's bytes. */
export type Scan =
  /** A whole record: its event's id and envelope, its payload is `[payloadStart, payloadEnd)`, it ends at `end`. */
  | { kind: 'record'; id: string; env: Envelope; payloadStart: number; payloadEnd: number; end: number }
  /** Bytes that are no record, up to `end` (the next record start, or the end of what was read). */
  | { kind: 'garbage'; reason: string; end: number; open: boolean }
  /** The bytes end inside what may still become a whole record (its writer may be at it). */
  | { kind: 'partial' }
  /** Zeros up to `end`: bytes a drain committed and overwrote (scrub.ts), no event and no garbage. */
  | { kind: 'scrubbed'; end: number };

/** The next record start at or after `from`, or -1. */
function nextStart(bytes: Buffer, from: number, limit: number): number {
  const at = bytes.indexOf(RECORD_START, from);
  return at < 0 || at >= limit ? -1 : at;
}

/**
 * Reads what starts at `pos` of `bytes[0, limit)`. Garbage runs to the next `\x1e`; `open` says no
 * record start followed it within the bytes read, so more bytes could still belong to it.
 */
export function scanAt(bytes: Buffer, pos: number, limit: number): Scan {
  if (bytes[pos] === 0) {
    let end = pos + 1;
    while (end < limit && bytes[end] === 0) end++;
    return { kind: 'scrubbed', end };
  }
  const garbage = (reason: string, from: number): Scan => {
    const next = nextStart(bytes, from, limit);
    return next < 0 ? { kind: 'garbage', reason, end: limit, open: true } : { kind: 'garbage', reason, end: next, open: false };
  };
  if (bytes[pos] !== RECORD_START) return garbage('bytes outside a record (no \\x1e record start)', pos);
  const searchEnd = Math.min(limit, pos + MAX_RECORD_BYTES);
  const sep = bytes.indexOf(PAYLOAD_START, pos + 1);
  const start = nextStart(bytes, pos + 1, limit);
  if (sep < 0 || sep >= searchEnd || (start >= 0 && start < sep)) {
    if (start >= 0 && (sep < 0 || start < sep)) return garbage('a record cut short in its envelope', pos + 1);
    if (searchEnd < pos + MAX_RECORD_BYTES) return { kind: 'partial' };
    return garbage(`no \\x1f after the envelope within ${MAX_RECORD_BYTES} bytes`, pos + 1);
  }
  const parsed = parseEnvelope(bytes.toString('utf8', pos + 1, sep));
  if (!parsed.ok) return garbage(parsed.reason, pos + 1);
  const env = parsed.value;
  const id = env.id as string; // parseEnvelope without a file name's time requires one
  if (env.bytes === null) return garbage('envelope has no "bytes"', pos + 1);
  if (env.bytes > MAX_RECORD_BYTES) return garbage(`envelope names ${env.bytes} payload bytes, more than a record holds`, pos + 1);
  const payloadEnd = sep + 1 + env.bytes;
  // A payload never holds a record start (the hook spools such a payload as a file of its own):
  // one inside means this record was cut short and another began.
  // `start`, the first record start after this one's, is it (none lies before `sep`).
  const inside = start >= 0 && start < payloadEnd ? start : -1;
  if (inside >= 0) return garbage(`a record cut short: its payload holds ${inside - sep - 1} of the ${env.bytes} bytes its envelope names`, inside);
  const endsInNewline = env.bytes > 0 && payloadEnd <= limit && bytes[payloadEnd - 1] === RECORD_END;
  if (payloadEnd > limit || (payloadEnd === limit && !endsInNewline)) return { kind: 'partial' }; // not all there yet
  // A newline ends the record: the payload's own last byte, or one after the payload.
  if (endsInNewline) return { kind: 'record', id, env, payloadStart: sep + 1, payloadEnd, end: payloadEnd };
  if (bytes[payloadEnd] !== RECORD_END) return garbage(`a record whose payload is not ${env.bytes} bytes followed by a newline`, payloadEnd);
  return { kind: 'record', id, env, payloadStart: sep + 1, payloadEnd, end: payloadEnd + 1 };
}
