/**
 * Reads a segment of the spool log (spool-log.ts) from an offset to its end, in batches of rows:
 * each batch says how far the segment is drained once its rows are committed, and which bytes are
 * no event (to keep in spool/rejected/ before that commit). IO on one file; no SQLite.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import type { EventRow } from '../events.js';
import type { RedactionRules } from './redact.js';
import { READ_NO_LINK_NO_WAIT } from '../regular-file.js';
import { eventRow } from './spool-event.js';
import { scanAt } from './spool-log.js';

/** Bytes read at a time (a record is at most 64 KiB, so one always fits). */
const CHUNK_BYTES = 4 * 1024 * 1024;

export interface RejectedBytes {
  /** The name to keep them under in rejected/ (`<segment>-at-<offset>`). */
  name: string;
  bytes: Uint8Array;
  reason: string;
}

export interface SegmentBatch {
  segment: string;
  rows: EventRow[];
  /** The segment's offset once these rows are committed. */
  done: number;
  rejects: RejectedBytes[];
  /** Set on a segment's last batch: read to its end, or stopped at a record still being written. */
  last?: 'end' | 'in-flight';
}

export interface SegmentJob {
  segment: string;
  path: string;
  /** Where the last drain stopped. */
  base: number;
  /** No hook can still append to it: a short tail is a killed writer's, and is rejected. */
  quiet: boolean;
}

let chunk: Buffer | undefined;

/**
 * Reads `job` batch by batch, calling `emit` for each (the last one has `last` set); stops early
 * when `emit` returns false. A segment that cannot be opened gives one empty last batch.
 */
export function readSegment(job: SegmentJob, rules: RedactionRules, batchSize: number, emit: (batch: SegmentBatch) => boolean): void {
  let fd: number;
  try {
    fd = openSync(job.path, READ_NO_LINK_NO_WAIT);
  } catch {
    emit({ segment: job.segment, rows: [], done: job.base, rejects: [], last: 'end' });
    return;
  }
  try {
    chunk ??= Buffer.allocUnsafe(CHUNK_BYTES);
    const buf = chunk;
    let base = job.base;
    let filled = 0;
    let pos = 0;
    let rows: EventRow[] = [];
    let rejects: RejectedBytes[] = [];
    const send = (last?: 'end' | 'in-flight'): boolean => {
      const batch: SegmentBatch = { segment: job.segment, rows, done: base + pos, rejects };
      if (last !== undefined) batch.last = last;
      rows = [];
      rejects = [];
      return emit(batch);
    };
    const reject = (from: number, to: number, reason: string): void => {
      // a copy: the chunk is reused
      rejects.push({ name: `${job.segment}-at-${base + from}`, bytes: Uint8Array.prototype.slice.call(buf, from, to), reason });
    };
    for (;;) {
      if (pos > 0) {
        buf.copy(buf, 0, pos, filled);
        base += pos;
        filled -= pos;
        pos = 0;
      }
      const n = filled < buf.length ? readSync(fd, buf, filled, buf.length - filled, base + filled) : 0;
      filled += n;
      const full = filled === buf.length;
      const atEnd = n === 0 && !full;
      // Scans see only the bytes read: a search past them would touch (and fault in) every
      // untouched page of the chunk, however small the log.
      const bytes = buf.subarray(0, filled);
      while (pos < filled) {
        const scan = scanAt(bytes, pos, filled);
        if (scan.kind === 'scrubbed') {
          pos = scan.end;
          continue;
        }
        if (scan.kind === 'partial' || (scan.kind === 'garbage' && scan.open)) {
          if (full && pos === 0) {
            // A whole chunk with no record start in it: garbage, however much follows.
            reject(0, filled, scan.kind === 'garbage' ? scan.reason : 'no record in a whole chunk of the log');
            pos = filled;
            break;
          }
          if (!atEnd) break; // read more
          if (!job.quiet) {
            send('in-flight'); // its writer may be at it: read again next time
            return;
          }
          reject(pos, filled, scan.kind === 'partial' ? 'a record cut short at the end of the log (its writer was killed)' : scan.reason);
          pos = filled;
          break;
        }
        if (scan.kind === 'garbage') reject(pos, scan.end, scan.reason);
        else {
          const outcome = eventRow(scan.id, scan.env, buf, scan.payloadStart, scan.payloadEnd, rules);
          if (outcome.ok) rows.push(outcome.row);
          else reject(pos, scan.end, outcome.reason);
        }
        pos = scan.end;
        if (rows.length >= batchSize && !send()) return;
      }
      if (atEnd) break;
    }
    send('end');
  } finally {
    closeSync(fd);
  }
}
