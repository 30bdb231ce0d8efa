/**
 * One sidecar file read into the row the index stores: its size and time as read, and its fields
 * (or why it is not a valid sidecar). Used on the main thread and by the reader worker
 * (sidecar-reader-worker.ts), so it imports nothing that opens the log.
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { recordFromText, type SidecarRecord } from './sidecar-record.js';

/**
 * `2026-11-22T10:00:00.5Z` → `2026-11-22T10:00:00.500000Z`: one width, so text order is time order
 * (the same form as the event log's `ts`).
 */
export function normalizeTimestamp(ts: string): string {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?Z$/.exec(ts);
  if (!m) return ts;
  return `${m[1]}.${(m[2] ?? '').padEnd(6, '0').slice(0, 6)}Z`;
}

/** The size and time a listing keeps for a file (mtimeMs keeps sub-millisecond digits: an exact key as text). */
export function mtimeKey(stats: { mtimeMs: number }): string {
  return String(stats.mtimeMs);
}

/**
 * The values of one `sidecars` row after its folder and its name, in the order of
 * SIDECAR_ROW_COLUMNS. A flat array without the path (the caller has it): it crosses from the worker
 * to the main thread cheaply, and binds as it is.
 */
export type SidecarRow = [
  size: number,
  mtimeNs: string,
  valid: 0 | 1,
  error: string | null,
  ts: string | null,
  taskRef: string | null,
  agent: string | null,
  sessionId: string | null,
  repo: string | null,
  surface: string | null,
  score: number | null,
  needsReview: 0 | 1 | null,
  confidence: number | null,
  degraded: 0 | 1 | null,
  mode: string | null,
  attempt: number | null,
  files: string,
];

/** The table's columns a row fills, in its order: `sidecars (dir_id, name, <these>)`. */
export const SIDECAR_ROW_COLUMNS =
  'size, mtime_ns, valid, error, ts, task_ref, agent, session_id, repo, surface, score, needs_review, confidence, degraded, mode, attempt, files';

function flag(b: boolean | null): 0 | 1 | null {
  return b === null ? null : b ? 1 : 0;
}

export function sidecarRow(size: number, mtimeNs: string, r: SidecarRecord): SidecarRow {
  return [
    size,
    mtimeNs,
    r.valid ? 1 : 0,
    r.error,
    r.timestamp === null ? null : normalizeTimestamp(r.timestamp),
    r.task_ref,
    r.agent,
    r.session_id,
    r.repo,
    r.surface,
    r.score,
    flag(r.needs_review),
    r.confidence,
    flag(r.degraded),
    r.mode,
    r.attempt,
    JSON.stringify(r.files),
  ];
}

/** The row of a sidecar that is there but cannot be read: indexed with the error, as a listing that sees it would. */
function unreadable(path: string, size: number, mtimeNs: string, error: unknown): SidecarRow {
  const code = (error as NodeJS.ErrnoException).code;
  return sidecarRow(size, mtimeNs, { ...recordFromText(path, ''), error: `cannot read: ${code ?? String(error)}` });
}

/** One buffer for every sidecar read (grown to the largest): the text is decoded before the next read. */
let readBuffer = Buffer.allocUnsafe(64 * 1024);

/**
 * A sidecar's row with the size and time of exactly the file that was read (one open, one fstat),
 * or undefined when it is gone or not a regular file. Opened non-blocking: a FIFO or a device with a
 * sidecar's name must not hang the report (for a regular file the flag does nothing).
 */
export function readSidecarRow(path: string): SidecarRow | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    // A regular file that cannot be opened (no permission) is indexed with the error; anything
    // that cannot even be stat'ed is not listed.
    try {
      const stats = statSync(path);
      return stats.isFile() ? unreadable(path, stats.size, mtimeKey(stats), error) : undefined;
    } catch {
      return undefined;
    }
  }
  let size = 0;
  let mtimeNs = '0';
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return undefined;
    size = stats.size;
    mtimeNs = mtimeKey(stats);
    if (readBuffer.length < stats.size) readBuffer = Buffer.allocUnsafe(stats.size);
    // Up to the size fstat gave, so the text and the listed size describe the same file, in one
    // read for most files (no second read just to meet the end). A file that grows after the
    // fstat is read again by the next index, whose stat sees the new size; one that shrinks stops
    // where it ends.
    let filled = 0;
    while (filled < stats.size) {
      const n = readSync(fd, readBuffer, filled, stats.size - filled, null);
      if (n === 0) break;
      filled += n;
    }
    return sidecarRow(size, mtimeNs, recordFromText(path, readBuffer.toString('utf8', 0, filled)));
  } catch (error) {
    return unreadable(path, size, mtimeNs, error);
  } finally {
    closeSync(fd);
  }
}
