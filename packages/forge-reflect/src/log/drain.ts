/**
 * The drain: moves the hook spool into the event log: the spool files (`<state dir>/spool/*.event`)
 * here, then the spool log the event hook appends small events to (drain-segments.ts).
 *
 * Files go in name order (= receive order), in batches: each batch is read, parsed, redacted and
 * inserted with INSERT OR IGNORE in one transaction, and its files are removed only after the
 * commit: unlinked, or, in a drain of many files, listed for a detached remover that unlinks them
 * after the drain (drained-lists.ts); a listed file is never read again. A drain killed between
 * commit and removal (or listing) leaves files whose ids are already in the log; the next drain
 * counts them as already present and removes or lists them. Files that cannot be understood move
 * to `spool/rejected/` with a `.reason` beside them.
 * `.tmp-*` files older than 60 s (a killed hook's half-write) are removed. A `.event` file that is
 * still short of what its envelope names is left while it was written in the last 60 s (its hook
 * may be writing it) and rejected after that.
 *
 * One drain at a time (see drain-lock.ts); a drain that finds the lock held returns at once. A
 * busy database never surfaces: the drain stops and leaves the rest for the next one.
 */
import { closeSync, existsSync, fstatSync, lstatSync, openSync, readdirSync, readSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { acquireDrainLock, type DrainLock, type LockOptions } from './drain-lock.js';
import { UserError } from '../errors.js';
import { READ_NO_LINK_NO_WAIT, readFoundQuietly } from '../regular-file.js';
import { isBusyError, openEventLog, type EventLog, type SegmentMark } from './event-log.js';
import type { EventRow } from '../events.js';
import { drainSegments, sealLiveLog, segmentsIn, segmentsSettled } from './segments.js';
import { LIVE_LOG_NAME } from './spool-log.js';
import { loadRedactionRules, warnOnStderr, type Warn } from './redact-config.js';
import type { RedactionRules } from './redact.js';
import { isSpoolFileName, parseSpoolFile, SPOOL_SUFFIX } from './spool-event.js';
import { DEFAULT_LIST_FROM, readDrainedLists, removeListedInBackground, startDrainedList, type DrainedList } from './drained-lists.js';
import { ensurePrivateDir, rejectedDirOf, spoolDirOf } from '../state-dir.js';
import { enrichCodexToolCalls, repeatedSessionEnds } from '../runtimes/enrich.js';

/**
 * Events per transaction: each commit is one fsync of the log (synchronous = FULL). 500, not 1,000:
 * a batch's rows live until its commit, and at 1,000 enough of them outlived two scavenges to move
 * to V8's old space that some large drains peaked well above the rest; 500 does not, and is no slower.
 */
export const DEFAULT_BATCH_SIZE = 500;
/**
 * Spool-file bytes per transaction, whatever the count: the same rows-live-until-commit reason.
 * Spool files can be as large as the hook's 1 MiB cap, and a drain of 600 such files (a backlog of
 * large tool outputs) held 500 of them before its first commit, over a gigabyte at its peak. With
 * this cap it commits every ~8 MiB.
 */
export const DEFAULT_BATCH_BYTES = 8 * 1024 * 1024;
export const STALE_TEMP_MS = 60_000;
/** The hook caps payloads at 1 MiB; anything much larger did not come from it. */
export const MAX_SPOOL_FILE_BYTES = 1024 * 1024 + 64 * 1024;
const TEMP_PREFIX = '.tmp-';

export interface DrainCounts {
  /** New rows written to the log. */
  drained: number;
  /** Files moved to spool/rejected/. */
  rejected: number;
  /** Files whose id was already in the log (a drain killed before removing or listing them); removed or listed. */
  alreadyPresent: number;
  /** Stale `.tmp-*` leftovers removed. */
  removedTemp: number;
  /** Files still being written (incomplete, touched in the last 60 s): left for the next drain. */
  inFlight: number;
  /** Another drain held the lock; this one did nothing. */
  locked: boolean;
  /** The database stayed busy; the drain stopped early and left files for the next one. */
  busy: boolean;
}

export interface DrainOptions {
  /** Files per transaction (default DEFAULT_BATCH_SIZE). */
  batchSize?: number;
  /** Spool-file bytes per transaction: a batch ends once its files reach this (default DEFAULT_BATCH_BYTES). */
  batchBytes?: number;
  /** An already open log to write to (left open); default: opened and closed here. */
  log?: EventLog;
  /** Redaction rules; default: read from `<state dir>/config.json`. */
  rules?: RedactionRules;
  /** Where warnings go (default: stderr). */
  warn?: Warn;
  now?: () => number;
  lock?: LockOptions;
  /** A drain of at least this many files lists them for a remover instead of unlinking each (default DEFAULT_LIST_FROM). */
  listFrom?: number;
  /**
   * Removes what lists name, then the lists (and legacy trash folders), after the drain has let its
   * lock go (default: a detached `sh`, removeListedInBackground).
   */
  removeListed?: (paths: readonly string[]) => void;
}

function emptyCounts(): DrainCounts {
  return { drained: 0, rejected: 0, alreadyPresent: 0, removedTemp: 0, inFlight: 0, locked: false, busy: false };
}

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

type ReadOutcome = { kind: 'bytes'; bytes: Buffer; mtimeMs: number } | { kind: 'gone' } | { kind: 'bad'; reason: string };

/**
 * How long a command that reads or writes the log waits for a drain already running (the one a Stop
 * hook starts, say) before it goes on without it: what that drain is taking in is then in the log.
 * `ingest` itself does not wait: a second drain has nothing to add.
 */
export const COMMAND_LOCK_WAIT_MS = 5_000;

/**
 * One buffer for every file a drain reads: a file is parsed to strings before the next is read, so
 * nothing keeps a view of it, and 10,000 files make no 10,000 allocations for the collector. One
 * byte over the cap, so that a single read can tell a file over it (readWholeQuickly).
 */
let readBuffer: Buffer | undefined;

function sharedReadBuffer(): Buffer {
  readBuffer ??= Buffer.allocUnsafe(MAX_SPOOL_FILE_BYTES + 1);
  return readBuffer;
}

/**
 * Reads a spool file without following symlinks and without trusting its size. The bytes returned
 * are a view of the shared read buffer, valid until the next call.
 */
function readSpoolFile(path: string): ReadOutcome {
  let fd: number;
  try {
    // Non-blocking: a FIFO with a spool file's name is refused below, not waited on at its open.
    fd = openSync(path, READ_NO_LINK_NO_WAIT);
  } catch (error) {
    const code = errno(error);
    if (code === 'ENOENT') return { kind: 'gone' };
    if (code === 'ELOOP') return { kind: 'bad', reason: 'is a symbolic link' };
    return { kind: 'bad', reason: `cannot be opened (${code ?? String(error)})` };
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return { kind: 'bad', reason: 'is not a regular file' };
    if (stats.size > MAX_SPOOL_FILE_BYTES) return { kind: 'bad', reason: `is ${stats.size} bytes, more than the ${MAX_SPOOL_FILE_BYTES} a hook writes` };
    const bytes = sharedReadBuffer().subarray(0, stats.size);
    let filled = 0;
    while (filled < bytes.length) {
      const n = readSync(fd, bytes, filled, bytes.length - filled, filled);
      if (n === 0) break;
      filled += n;
    }
    return { kind: 'bytes', bytes: filled === bytes.length ? bytes : bytes.subarray(0, filled), mtimeMs: stats.mtimeMs };
  } catch (error) {
    return { kind: 'bad', reason: `cannot be read (${errno(error) ?? String(error)})` };
  } finally {
    closeSync(fd);
  }
}

/**
 * A spool file's bytes from one read, without the `fstat` readSpoolFile starts with; undefined when
 * that read cannot hold all of one (it failed, as on a folder or a FIFO that would block, or it gave
 * more than MAX_SPOOL_FILE_BYTES). The drain takes these bytes only when they parse as a whole
 * event (the envelope names their length, or the file was renamed into place whole) and reads
 * anything else again with readSpoolFile's checks, so a file is judged as before, but for one case:
 * a FIFO a writer has filled with one whole event is taken as that event, not rejected. A view of
 * the shared read buffer, valid until the next read.
 */
function readWholeQuickly(path: string): Buffer | undefined {
  return readFoundQuietly(path, readOnce);
}

function readOnce(fd: number): Buffer | undefined {
  const buffer = sharedReadBuffer();
  const n = readSync(fd, buffer, 0, buffer.length, 0);
  return n <= MAX_SPOOL_FILE_BYTES ? buffer.subarray(0, n) : undefined;
}

/** A whole number of at least 1, else the default (NaN or Infinity would never end a batch). */
function atLeastOne(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value >= 1 ? Math.trunc(value) : fallback;
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // another drain removed it, or it vanished: either way it is not ours to keep
  }
}

/** Writes `<stem>.reason` in rejected/: when, and why. */
function writeReason(dir: string, stem: string, reason: string, now: number): void {
  writeFileSync(join(dir, `${stem}.reason`), `${new Date(now).toISOString()} ${reason}\n`, { mode: 0o600 });
}

/** Moves a spool file to rejected/ with its reason beside it. False when the file vanished. */
function reject(stateDir: string, name: string, reason: string, now: number): boolean {
  const dir = rejectedDirOf(stateDir);
  const stem = name.endsWith(SPOOL_SUFFIX) ? name.slice(0, -SPOOL_SUFFIX.length) : name;
  try {
    ensurePrivateDir(dir);
    writeReason(dir, stem, reason, now);
    renameSync(join(spoolDirOf(stateDir), name), join(dir, `${stem}${SPOOL_SUFFIX}`));
    return true;
  } catch (error) {
    if (errno(error) === 'ENOENT' && existsSync(dir)) {
      unlinkQuietly(join(dir, `${stem}.reason`)); // another drain moved or removed the file first
      return false;
    }
    throw new UserError(`cannot move the unreadable spool file ${name} to ${dir} (${errno(error) ?? String(error)}); fix the folder's permissions`);
  }
}

/** Keeps bytes of the spool log that are no event in rejected/ as `<name>.event`, with the reason beside. */
function keepRejected(stateDir: string, name: string, bytes: Uint8Array, reason: string, now: number): void {
  const dir = rejectedDirOf(stateDir);
  try {
    ensurePrivateDir(dir);
    writeReason(dir, name, reason, now);
    writeFileSync(join(dir, `${name}${SPOOL_SUFFIX}`), bytes, { mode: 0o600 });
  } catch (error) {
    throw new UserError(
      `cannot keep unreadable bytes of the spool log in ${dir} (${errno(error) ?? String(error)}); fix the folder's permissions or free space`,
    );
  }
}

function removeStaleTemps(spool: string, names: readonly string[], now: number): number {
  let removed = 0;
  for (const name of names) {
    const path = join(spool, name);
    try {
      const stats = lstatSync(path);
      if (stats.isDirectory() || now - stats.mtimeMs <= STALE_TEMP_MS) continue;
      unlinkSync(path);
      removed++;
    } catch {
      // vanished (renamed into place by its writer) or not removable: leave it
    }
  }
  return removed;
}

/** The newest Gemini session.ended of a session in the log (to tell a repeated SessionEnd). */
function latestSessionEnd(log: EventLog, session: string): { ts: string; payload: string } | undefined {
  return log.db
    .prepare("SELECT ts, payload FROM events WHERE session_id = ? AND runtime = 'gemini' AND type = 'session.ended' ORDER BY ts DESC LIMIT 1")
    .get(session) as { ts: string; payload: string } | undefined;
}

/** What the steps of one drain share once its log is open. */
interface Drain {
  stateDir: string;
  spool: string;
  now: () => number;
  rules: RedactionRules;
  log: EventLog;
  counts: DrainCounts;
  /** Where committed names go; undefined: each committed file is unlinked. */
  list: DrainedList | undefined;
}

/** The spool's names, sorted by what the drain does with them. */
interface SpoolListing {
  names: string[];
  candidates: string[];
  temps: string[];
  liveLog: boolean;
  segments: string[];
}

/** Throws when the state dir or the spool is a symbolic link: a planted link would make the drain read, move and delete files outside the state dir. */
function refuseLinkedDirs(stateDir: string, spool: string): void {
  for (const dir of [stateDir, spool]) {
    let link = false;
    try {
      link = lstatSync(dir).isSymbolicLink();
    } catch {
      // missing: listSpool handles it
    }
    if (link) throw new UserError(`${dir} is a symbolic link; refusing to drain through it (remove the link)`);
  }
}

/** The spool's names; undefined when there is no spool. */
function listSpool(spool: string): SpoolListing | undefined {
  let names: string[];
  try {
    names = readdirSync(spool);
  } catch (error) {
    if (errno(error) === 'ENOENT' || errno(error) === 'ENOTDIR') return undefined;
    throw new UserError(`cannot read the spool ${spool} (${errno(error) ?? String(error)}); fix its permissions`);
  }
  return {
    names,
    candidates: names.filter(isSpoolFileName),
    temps: names.filter((n) => n.startsWith(TEMP_PREFIX)),
    liveLog: names.includes(LIVE_LOG_NAME),
    segments: segmentsIn(names),
  };
}

/** True when the spool holds nothing to drain, so the drain takes no lock. */
function nothingToDrain(spool: string, listing: SpoolListing, log: EventLog | undefined, now: () => number): boolean {
  const { candidates, temps, liveLog, segments } = listing;
  return (
    candidates.length === 0 &&
    temps.length === 0 &&
    !liveLog &&
    (segments.length === 0 || (log !== undefined && segmentsSettled(spool, segments, log.segmentMarks(), now(), STALE_TEMP_MS)))
  );
}

/** The drain lock; undefined when another drain holds it. */
function takeDrainLock(spool: string, options: LockOptions | undefined): DrainLock | undefined {
  try {
    return acquireDrainLock(spool, options);
  } catch (error) {
    throw new UserError(
      `cannot create the drain lock in ${spool} (${errno(error) ?? String(error)}); the spool is kept, fix the cause (disk space, permissions) and run \`forge-reflect ingest\``,
    );
  }
}

/**
 * The spool files to drain, in name order, and the stale lists for the remover. What earlier drains
 * committed and listed for their removers is never read again (drained-lists.ts).
 */
function pickEvents(spool: string, listing: SpoolListing, now: number): { events: string[]; cleanup: string[] } {
  const drained = readDrainedLists(spool, listing.names, now);
  const { candidates } = listing;
  const events = (drained.names.size === 0 ? candidates : candidates.filter((name) => !drained.names.has(name))).sort();
  return { events, cleanup: drained.stale };
}

/** The segments to drain: the listed ones and the live log, sealed into one. */
function segmentsToDrain(spool: string, listing: SpoolListing, now: () => number): string[] {
  const sealed = listing.liveLog ? sealLiveLog(spool, now()) : undefined;
  return sealed === undefined ? listing.segments : [...listing.segments, sealed];
}

/** The log to write to: the caller's, or opened here; undefined when the database is busy (counted). */
function openLog(stateDir: string, given: EventLog | undefined, counts: DrainCounts): EventLog | undefined {
  try {
    return given ?? openEventLog(stateDir);
  } catch (error) {
    if (!isBusyError(error)) throw error;
    counts.busy = true;
    return undefined;
  }
}

/**
 * The list for the drain's committed files, or undefined: committed files leave the spool unlinked
 * one by one when few; when many, listed for a remover that unlinks them once the drain is done
 * (drained-lists.ts).
 */
function startListFor(spool: string, events: readonly string[], listFrom: number | undefined, now: () => number): DrainedList | undefined {
  if (events.length >= (listFrom ?? DEFAULT_LIST_FROM)) {
    try {
      return startDrainedList(spool, now());
    } catch {
      // no list: unlink each
    }
  }
  return undefined;
}

function removeCommitted(d: Drain, names: readonly string[]): void {
  if (d.list?.add(names) === true) return;
  for (const name of names) unlinkQuietly(`${d.spool}/${name}`);
}

/** Logs a batch (and a segment's new offset) in one transaction; false when the log stayed busy. */
function commit(d: Drain, rows: EventRow[], mark?: SegmentMark): boolean {
  const { log, counts } = d;
  // What the runtimes' payloads alone do not say (runtimes/enrich.ts).
  enrichCodexToolCalls(rows);
  const repeats = repeatedSessionEnds(rows, (session) => latestSessionEnd(log, session));
  try {
    const result = log.insertBatch(repeats.size === 0 ? rows : rows.filter((r) => !repeats.has(r)), mark);
    counts.drained += result.inserted;
    counts.alreadyPresent += result.ignored + repeats.size;
    return true;
  } catch (error) {
    if (!isBusyError(error))
      throw new UserError(
        `cannot write to the event log ${log.path} (${errno(error) ?? String(error)}); the spool is kept, fix the cause (disk space, permissions) and run \`forge-reflect ingest\``,
      );
    counts.busy = true;
    return false;
  }
}

/**
 * A spool file read with readSpoolFile's checks: its row and size, or undefined when it is gone,
 * still being written (counted in flight) or rejected (counted, moved to rejected/).
 */
function takeCarefully(d: Drain, name: string, path: string): { row: EventRow; size: number } | undefined {
  const { stateDir, now, counts } = d;
  const read = readSpoolFile(path);
  if (read.kind === 'gone') return undefined;
  if (read.kind === 'bad') {
    if (reject(stateDir, name, `spool file ${read.reason}`, now())) counts.rejected++;
    return undefined;
  }
  const outcome = parseSpoolFile(name, read.bytes, d.rules, read.mtimeMs);
  if (outcome.ok) return { row: outcome.row, size: read.bytes.length };
  if (outcome.incomplete) {
    // Its writer may still be at it: left alone while it is fresh, a reject once it is not.
    const idle = now() - read.mtimeMs;
    if (idle <= STALE_TEMP_MS) {
      counts.inFlight++;
      return undefined;
    }
    if (reject(stateDir, name, `${outcome.reason}, and it was last written ${Math.round(idle / 1000)} s ago (its writer was killed)`, now())) counts.rejected++;
    return undefined;
  }
  if (reject(stateDir, name, outcome.reason, now())) counts.rejected++;
  return undefined;
}

/** Drains the spool files in batches, each committed before its files are removed; stops when the log stays busy. */
function drainFiles(d: Drain, events: readonly string[], batchSize: number, batchBytes: number): void {
  const { spool, rules } = d;
  let next = 0;
  while (next < events.length) {
    const rows: EventRow[] = [];
    const done: string[] = [];
    let bytes = 0;
    while (next < events.length && rows.length < batchSize && bytes < batchBytes) {
      const name = events[next++] as string;
      const path = `${spool}/${name}`; // spoolDirOf's path is normalised: no join per file
      // Most files are whole events: one read, no fstat. Anything else (and a file of a hook
      // whose clock had whole seconds, which needs its time of writing) is read again with every
      // check (its type, its size, how long ago it was last written).
      const whole = readWholeQuickly(path);
      const quick = whole === undefined ? undefined : parseSpoolFile(name, whole, rules);
      let row = quick?.ok === true ? quick.row : undefined;
      let size = whole?.length ?? 0;
      if (row === undefined) {
        const taken = takeCarefully(d, name, path);
        if (taken === undefined) continue;
        ({ row, size } = taken);
      }
      rows.push(row);
      done.push(name);
      bytes += size;
    }
    if (!commit(d, rows)) break;
    removeCommitted(d, done);
  }
}

/** Drains the spool log's segments (segments.ts); counts what they leave in flight or reject. */
function drainSegmentsOf(d: Drain, segments: readonly string[], batchSize: number): void {
  const { stateDir, log, now, counts } = d;
  const result = drainSegments(segments, {
    spool: d.spool,
    rules: d.rules,
    now,
    quietMs: STALE_TEMP_MS,
    batchSize,
    marks: log.segmentMarks(),
    commit: (rows, mark) => commit(d, rows, mark),
    rejectBytes: (name, bytes, reason) => keepRejected(stateDir, name, bytes, reason, now()),
    forget: (name) => log.forgetSegment(name),
    scrubbed: (name, to) => {
      try {
        log.markScrubbed(name, to);
      } catch (error) {
        if (!isBusyError(error)) throw error; // busy: the next drain writes the same zeros again
      }
    },
  });
  counts.inFlight += result.inFlight;
  counts.rejected += result.rejected;
}

/** Closes the drain's list; a list that names any file joins what the remover removes. */
function closeList(list: DrainedList | undefined, cleanup: string[]): void {
  const written = list?.close();
  if (written !== undefined) cleanup.push(written);
}

function handToRemover(spool: string, cleanup: readonly string[], removeListed: DrainOptions['removeListed']): void {
  if (cleanup.length === 0) return;
  try {
    (removeListed ?? ((paths) => removeListedInBackground(spool, paths)))(cleanup);
  } catch {
    // what is listed is removed by a later drain (drained-lists.ts): this drain's result stands
  }
}

/**
 * Drains `<state dir>/spool` into `<state dir>/events.db` and returns the counts. Safe to call
 * from several processes at once; never throws on a busy database.
 */
export function drainSpool(stateDir: string, options: DrainOptions = {}): DrainCounts {
  const counts = emptyCounts();
  const spool = spoolDirOf(stateDir);
  const now = options.now ?? Date.now;
  refuseLinkedDirs(stateDir, spool);
  const listing = listSpool(spool);
  if (listing === undefined || nothingToDrain(spool, listing, options.log, now)) return counts;
  const lock = takeDrainLock(spool, options.lock);
  if (lock === undefined) {
    counts.locked = true;
    return counts;
  }
  const { events, cleanup } = pickEvents(spool, listing, now());
  let list: DrainedList | undefined;
  try {
    counts.removedTemp = removeStaleTemps(spool, listing.temps, now());
    const segments = segmentsToDrain(spool, listing, now);
    if (events.length === 0 && segments.length === 0) return counts;
    const rules = options.rules ?? loadRedactionRules(stateDir, options.warn ?? warnOnStderr);
    const log = openLog(stateDir, options.log, counts);
    if (log === undefined) return counts;
    try {
      list = startListFor(spool, events, options.listFrom, now);
      const drain: Drain = { stateDir, spool, now, rules, log, counts, list };
      const batchSize = atLeastOne(options.batchSize, DEFAULT_BATCH_SIZE);
      drainFiles(drain, events, batchSize, atLeastOne(options.batchBytes, DEFAULT_BATCH_BYTES));
      if (!counts.busy && segments.length > 0) drainSegmentsOf(drain, segments, batchSize);
    } finally {
      if (options.log === undefined) log.close();
    }
  } finally {
    // The list complete before the lock goes: the next drain skips every file it names.
    closeList(list, cleanup);
    lock.release();
    handToRemover(spool, cleanup, options.removeListed);
  }
  return counts;
}

/**
 * The event log of a state dir, opened and brought up to date: every command that reads the log
 * drains the spool first (waiting up to COMMAND_LOCK_WAIT_MS for a drain already running), so nobody
 * ever sees a stale log. The caller closes it.
 */
export function openDrainedLog(stateDir: string, options: Omit<DrainOptions, 'log'> = {}): EventLog {
  const log = openEventLog(stateDir);
  try {
    drainSpool(stateDir, { ...options, log, lock: { waitMs: COMMAND_LOCK_WAIT_MS, ...options.lock } });
  } catch (error) {
    log.close();
    throw error;
  }
  return log;
}
