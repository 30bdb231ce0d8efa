/**
 * The drain's half for the spool log (spool-log.ts): seals `spool/events.log` into a segment, then
 * reads every segment from where the log says it was drained up to (segment-reader.ts) and hands
 * each batch to the drain's commit together with the new offset, so records and offset are
 * committed in one transaction: a record is never logged twice or skipped, whatever kills the drain.
 *
 * Once a segment's records are committed (and the drain has read as far as it will), the bytes
 * committed are overwritten with zeros (scrub.ts) and the log records how far that went; a
 * drain killed between the commit and that record leaves the next drain the range to wipe again,
 * with nothing to read again. The file stays while a hook could still append to it (a hook that
 * opened the log just before it was sealed): until 60 s after both its sealing and its last write.
 * Then, read to its end, it is removed. A record cut short and bytes outside any record go to
 * `spool/rejected/` with a reason; a record still short at the end of a fresh segment is left (in
 * flight) and read again.
 */
import { existsSync, lstatSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { EventRow } from '../events.js';
import type { SegmentMark, SegmentState } from './event-log.js';
import type { RedactionRules } from './redact.js';
import { readSegment, type SegmentBatch, type SegmentJob } from './segment-reader.js';
import { isSegmentName, LIVE_LOG_NAME, sealedMsOf, segmentName } from './spool-log.js';
import { scrubRange } from './scrub.js';

export interface SegmentDrain {
  spool: string;
  rules: RedactionRules;
  now: () => number;
  /** A segment quiet this long (since sealed and since last written) gets no more records. */
  quietMs: number;
  batchSize: number;
  /** How far each segment was drained and scrubbed (from the log). */
  marks: Map<string, SegmentState>;
  /** Commits rows and the segment's new offset in one transaction; false when the log was busy (stop). */
  commit: (rows: EventRow[], mark: SegmentMark) => boolean;
  /** Keeps bytes that are no event in spool/rejected/ under `name`, with the reason. */
  rejectBytes: (name: string, bytes: Uint8Array, reason: string) => void;
  /** Forgets the offset of a segment that is gone. */
  forget: (name: string) => void;
  /** Records that a segment's bytes before `to` are zeros on disk. */
  scrubbed: (name: string, to: number) => void;
}

export interface SegmentResult {
  inFlight: number;
  rejected: number;
  busy: boolean;
}

/** No hook can still append to a segment sealed and last written more than `quietMs` ago. */
export function isQuiet(name: string, mtimeMs: number, nowMs: number, quietMs: number): boolean {
  return nowMs - Math.max(sealedMsOf(name), mtimeMs) > quietMs;
}

/**
 * True when every segment is read to its end and scrubbed (`marks`, from the log) and none is due
 * for removal: nothing for a drain to do, so it takes no lock.
 */
export function segmentsSettled(spool: string, segments: readonly string[], marks: ReadonlyMap<string, SegmentState>, nowMs: number, quietMs: number): boolean {
  for (const name of segments) {
    try {
      const stats = lstatSync(join(spool, name));
      const mark = marks.get(name);
      if (mark?.done !== stats.size || mark.scrubbed < mark.done || isQuiet(name, stats.mtimeMs, nowMs, quietMs)) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** The segments among a spool's entry names, oldest first. */
export function segmentsIn(names: readonly string[]): string[] {
  return names.filter(isSegmentName).sort();
}

/**
 * Renames `spool/events.log` to a new segment and returns its name; undefined when there is no log
 * (or it vanished). Hooks go on appending to a new `events.log`.
 */
export function sealLiveLog(spool: string, nowMs: number): string | undefined {
  const live = join(spool, LIVE_LOG_NAME);
  try {
    if (!lstatSync(live).isFile()) return undefined;
  } catch {
    return undefined;
  }
  for (let i = 0; i < 5; i++) {
    const name = segmentName(nowMs * 1000 + i, process.pid);
    if (existsSync(join(spool, name))) continue; // taken (a clock that went back): the next microsecond
    try {
      renameSync(live, join(spool, name));
      return name;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Drains every segment named; see the module comment. */
export function drainSegments(names: readonly string[], d: SegmentDrain): SegmentResult {
  const result: SegmentResult = { inFlight: 0, rejected: 0, busy: false };
  const jobs: SegmentJob[] = [];
  const quiet = new Set<string>();
  const committed = new Map<string, number>();
  /** Where each segment's bytes stop being zeros. */
  const wiped = new Map<string, number>();
  const scrub = (name: string): void => {
    const from = wiped.get(name) ?? 0;
    const to = committed.get(name) ?? 0;
    if (to > from && scrubRange(join(d.spool, name), from, to)) d.scrubbed(name, to);
  };
  const remove = (name: string): void => {
    try {
      unlinkSync(join(d.spool, name));
      d.forget(name);
    } catch {
      // left for the next drain
    }
  };
  for (const name of names) {
    const path = join(d.spool, name);
    let stats;
    try {
      stats = lstatSync(path);
    } catch {
      continue;
    }
    if (!stats.isFile()) continue;
    const quietNow = isQuiet(name, stats.mtimeMs, d.now(), d.quietMs);
    if (quietNow) quiet.add(name);
    const mark = d.marks.get(name);
    let base = mark?.done ?? 0;
    let zeros = Math.min(mark?.scrubbed ?? 0, base);
    if (base > stats.size) base = zeros = 0; // not the file the offset was for: read it all (ids are unique)
    committed.set(name, base);
    wiped.set(name, zeros);
    if (base === stats.size) {
      scrub(name); // what a drain killed before its scrub left
      if (quietNow) remove(name);
      continue;
    }
    jobs.push({ segment: name, path, base, quiet: quietNow });
  }
  const handle = (batch: SegmentBatch): boolean => {
    for (const r of batch.rejects) d.rejectBytes(r.name, r.bytes, r.reason);
    result.rejected += batch.rejects.length;
    if (batch.rows.length > 0 || batch.done !== committed.get(batch.segment)) {
      if (!d.commit(batch.rows, { name: batch.segment, done: batch.done })) {
        result.busy = true;
        return false;
      }
      committed.set(batch.segment, batch.done);
    }
    if (batch.last === 'in-flight') result.inFlight += 1;
    return true;
  };
  for (const job of jobs) {
    let going = true;
    let ended = false;
    readSegment(job, d.rules, d.batchSize, (batch) => {
      going = handle(batch);
      ended = going && batch.last === 'end';
      return going;
    });
    // Once per segment, after its last commit: one sync of the segment for all its batches.
    scrub(job.segment);
    if (ended && quiet.has(job.segment)) remove(job.segment);
    if (!going) break;
  }
  // Offsets of segments no longer on disk (an earlier drain was killed between removal and forgetting).
  const present = new Set(names);
  for (const name of d.marks.keys()) if (!present.has(name) && sealedMsOf(name) < d.now() - d.quietMs) d.forget(name);
  return result;
}
