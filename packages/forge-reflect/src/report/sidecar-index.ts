/**
 * The sidecar index: a `sidecars` table in the event log's SQLite file, refreshed incrementally.
 * A row is keyed by its folder's id in `sidecar_dirs` and its file name (the folder's path is stored
 * once, not in every row and both indexes); readers use the view `sidecar_files`, which adds `path`
 * and `dir`.
 * A file is read and parsed only when it is new or its size or modification time changed, and rows
 * of vanished files are dropped, so a second report over 10,000 sidecars reads only what changed.
 *
 * A warm index does not touch the files at all: a folder whose own modification time is the one
 * recorded when it was last listed has had no file added, removed or renamed into it (the Stop hook
 * writes each sidecar by a rename into the folder), so it is skipped after one `stat`. The recorded
 * time is trusted only when the listing started at least RACY_MS after it (a file system's clock
 * ticks coarsely: a file added in the same tick as the listing could leave the time unchanged). A
 * sidecar edited in place, without a rename, is re-read the next time its folder changes.
 */
import { readdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Database } from '../log/event-log.js';
import type { SidecarRecord } from './sidecar-record.js';
import { isSidecarName } from '../sidecar/files.js';
import { mtimeKey, normalizeTimestamp, SIDECAR_ROW_COLUMNS } from './sidecar-read.js';
import { readSidecarRows, startSidecarReader, WORKER_FROM, type StartedReader } from './sidecar-reader.js';

export { normalizeTimestamp };

/** How far a folder's modification time must lie before its listing to be trusted next time. */
export const RACY_MS = 2_000;

export interface IndexCounts {
  files: number;
  /** Folders skipped because they had not changed since they were last listed. */
  unchanged_dirs: number;
  /** Files read and parsed because they were new or changed. */
  read: number;
  removed: number;
}

/**
 * The sidecars of a folder: the paths present, and those to read (new, or changed in size or time).
 * A file the index already knows is stat'ed, to tell whether it changed; a new one is not: reading
 * it gives its size and time (readSidecarRow), so a cold index costs one open per file, no extra stat.
 */
function listSidecars(
  dir: string,
  known: ReadonlyMap<string, { size: number; mtime_ns: string }>,
): { present: Set<string>; changed: string[]; unchanged: number; reader: StartedReader | undefined } {
  const present = new Set<string>();
  const changed: string[] = [];
  let unchanged = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return { present, changed, unchanged, reader: undefined };
  }
  // Many files the index does not know yet (a cold index): the reader's worker starts now and boots
  // while the rest of the listing runs.
  const reader = names.length - known.size >= WORKER_FROM ? startSidecarReader() : undefined;
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  for (const name of names) {
    if (!isSidecarName(name)) continue;
    const path = prefix + name;
    const old = known.get(path);
    if (old === undefined) {
      // (`present` serves to find what vanished, and nothing can when nothing was known)
      if (known.size > 0) present.add(path);
      changed.push(path);
      continue;
    }
    try {
      const stats = statSync(path);
      if (!stats.isFile()) continue;
      present.add(path);
      if (old.size === stats.size && old.mtime_ns === mtimeKey(stats)) unchanged++;
      else changed.push(path);
    } catch {
      // vanished between readdir and stat: it is simply not listed
    }
  }
  return { present, changed, unchanged, reader };
}

/** The folder's modification time in ms (sub-millisecond digits kept), or undefined when it cannot be read. */
function folderMtime(dir: string): number | undefined {
  try {
    const stats = statSync(dir);
    return stats.isDirectory() ? stats.mtimeMs : undefined;
  } catch {
    return undefined;
  }
}

export interface IndexOptions {
  /** Called every few hundred files read (for a progress line). */
  onProgress?: (done: number, total: number) => void;
}

/** Brings the index of each folder up to date; folders are compared by their absolute path. */
export function indexSidecars(db: Database, dirs: readonly string[], options: IndexOptions = {}): IndexCounts {
  const known = db.prepare('SELECT s.name, s.size, s.mtime_ns FROM sidecar_dirs d JOIN sidecars s ON s.dir_id = d.id WHERE d.dir = ?');
  // The row binds as it comes (sidecar-read.ts): no copy of its 17 values per sidecar.
  const columns = `dir_id, name, ${SIDECAR_ROW_COLUMNS}`;
  const upsert = db.prepare(
    `INSERT OR REPLACE INTO sidecars (${columns}) VALUES (${columns
      .split(',')
      .map(() => '?')
      .join(', ')})`,
  );
  const remove = db.prepare('DELETE FROM sidecars WHERE dir_id = ? AND name = ?');
  const counts: IndexCounts = { files: 0, unchanged_dirs: 0, read: 0, removed: 0 };
  const mark = db.prepare('SELECT mtime_ns, listed_at_ms, files FROM sidecar_dirs WHERE dir = ?');
  // A folder's row is updated in place, never replaced: its id names its sidecars' rows.
  const addDir = db.prepare('INSERT INTO sidecar_dirs (dir) VALUES (?) ON CONFLICT (dir) DO NOTHING');
  const dirId = db.prepare('SELECT id FROM sidecar_dirs WHERE dir = ?').pluck();
  const setMark = db.prepare('UPDATE sidecar_dirs SET mtime_ns = ?, listed_at_ms = ?, files = ? WHERE id = ?');
  const indexed = db.prepare('SELECT count(*) FROM sidecar_dirs d JOIN sidecars s ON s.dir_id = d.id WHERE d.dir = ?').pluck();

  for (const dir of dirs.map((d) => resolve(d))) {
    // Stat the folder before listing it: a file added during the listing changes the time after this.
    const dirMtime = folderMtime(dir);
    const listedAt = Date.now();
    const last = mark.get(dir) as { mtime_ns: string | null; listed_at_ms: number | null; files: number | null } | undefined;
    if (dirMtime !== undefined && last?.mtime_ns === String(dirMtime) && last.listed_at_ms !== null && last.listed_at_ms - dirMtime >= RACY_MS) {
      counts.unchanged_dirs++;
      // Counted when the folder was listed (a mark from before that count existed: counted now).
      counts.files += last.files ?? Number(indexed.get(dir));
      continue;
    }
    const prefix = dir.endsWith('/') ? dir : `${dir}/`;
    const before = new Map<string, { size: number; mtime_ns: string }>();
    for (const row of known.all(dir) as Array<{ name: string; size: number; mtime_ns: string }>) before.set(prefix + row.name, row);
    const { present, changed, unchanged, reader } = listSidecars(dir, before);
    // The worker only for many files to read (waiting for it to boot costs more than a few reads).
    const worker = reader !== undefined && changed.length >= WORKER_FROM ? reader : false;
    if (reader !== undefined && worker === false) reader.stop();
    const vanished = [...before.keys()].filter((p) => !present.has(p));
    let read = 0;
    // (what goes between the listing and its read joins `vanished` below)
    db.transaction(() => {
      addDir.run(dir);
      const id = dirId.get(dir) as number;
      let i = 0;
      for (const { path, row } of readSidecarRows(changed, { worker })) {
        if (options.onProgress && ++i % 500 === 0) options.onProgress(i, changed.length);
        if (row === undefined) {
          // gone (or no longer a file) since the listing
          if (before.has(path)) vanished.push(path);
          continue;
        }
        read++;
        upsert.run(id, path.slice(prefix.length), row);
      }
      for (const path of vanished) remove.run(id, path.slice(prefix.length));
      // A folder that cannot be read is listed again next time (its rows went with its files).
      setMark.run(dirMtime === undefined ? null : String(dirMtime), listedAt, unchanged + read, id);
    })();
    counts.files += unchanged + read;
    counts.read += read;
    counts.removed += vanished.length;
  }
  return counts;
}

/** Sums over the matching sidecars; see summary.ts for the summary built from them. */
export interface SidecarTotals {
  sidecars: number;
  needs_review: number;
  degraded: number;
  confidence_reported: number;
  confidence_sum: number;
  by_surface: Record<string, number>;
}

export interface SidecarFilter {
  since?: string;
  until?: string;
  surface?: string;
  needsReview?: boolean;
  agent?: string;
  task?: string;
  /** A session id or a prefix of one. */
  session?: string;
  degraded?: boolean;
  /**
   * A runtime (claude-code, codex, gemini): sidecars whose session the event log has from that
   * runtime, or (no events for the session) whose agent names it.
   */
  runtime?: string;
}

interface Row {
  path: string;
  valid: number;
  error: string | null;
  ts: string | null;
  task_ref: string | null;
  agent: string | null;
  session_id: string | null;
  repo: string | null;
  surface: SidecarRecord['surface'];
  score: number | null;
  needs_review: number | null;
  confidence: number | null;
  degraded: number | null;
  mode: string | null;
  attempt: number | null;
  files: string;
}

function toRecord(row: Row): SidecarRecord {
  const flag = (n: number | null) => (n === null ? null : n === 1);
  return {
    path: row.path,
    valid: row.valid === 1,
    error: row.error,
    timestamp: row.ts,
    task_ref: row.task_ref,
    agent: row.agent,
    session_id: row.session_id,
    repo: row.repo,
    surface: row.surface,
    score: row.score,
    needs_review: flag(row.needs_review),
    confidence: row.confidence,
    degraded: flag(row.degraded),
    mode: row.mode,
    attempt: row.attempt,
    files: JSON.parse(row.files) as string[],
  };
}

function whereClause(dirs: readonly string[], filter: SidecarFilter): { sql: string; params: unknown[] } {
  const where = [`dir IN (${dirs.map(() => '?').join(', ')})`, 'valid = 1'];
  const params: unknown[] = dirs.map((d) => resolve(d));
  const add = (clause: string, ...values: unknown[]) => {
    where.push(clause);
    params.push(...values);
  };
  if (filter.since !== undefined) add('ts >= ?', normalizeTimestamp(filter.since));
  if (filter.until !== undefined) add('ts <= ?', normalizeTimestamp(filter.until));
  if (filter.surface !== undefined) add('surface = ?', filter.surface);
  if (filter.needsReview !== undefined) add('needs_review = ?', filter.needsReview ? 1 : 0);
  if (filter.degraded !== undefined) add('degraded = ?', filter.degraded ? 1 : 0);
  if (filter.agent !== undefined) add('agent = ?', filter.agent);
  if (filter.task !== undefined) add('task_ref = ?', filter.task);
  if (filter.session !== undefined) add('substr(session_id, 1, length(?)) = ?', filter.session, filter.session);
  if (filter.runtime !== undefined) {
    add(
      `(session_id IN (SELECT session_id FROM events WHERE runtime = ? AND session_id IS NOT NULL)
        OR (agent = ? AND NOT EXISTS (SELECT 1 FROM events e WHERE e.session_id = sidecar_files.session_id AND e.runtime <> 'unknown')))`,
      filter.runtime,
      filter.runtime,
    );
  }
  return { sql: where.join(' AND '), params };
}

/** The newest `limit` valid sidecars of the folders that match the filter, newest first. */
export function queryValid(db: Database, dirs: readonly string[], filter: SidecarFilter, limit = -1): SidecarRecord[] {
  const { sql, params } = whereClause(dirs, filter);
  const rows = db.prepare(`SELECT * FROM sidecar_files WHERE ${sql} ORDER BY ts DESC, path DESC LIMIT ?`).all(...params, limit) as Row[];
  return rows.map(toRecord);
}

/**
 * The report's totals over every matching valid sidecar, computed by SQLite in one pass over the
 * sidecars_totals index alone, in its order (one row per surface, summed here).
 */
export function queryTotals(db: Database, dirs: readonly string[], filter: SidecarFilter): SidecarTotals {
  const { sql, params } = totalsQuery(dirs, filter);
  const groups = db.prepare(sql).all(...params) as Array<Omit<SidecarTotals, 'by_surface'> & { surface: string }>;
  const totals: SidecarTotals = { sidecars: 0, needs_review: 0, degraded: 0, confidence_reported: 0, confidence_sum: 0, by_surface: {} };
  for (const g of groups) {
    totals.sidecars += g.sidecars;
    totals.needs_review += g.needs_review;
    totals.degraded += g.degraded;
    totals.confidence_reported += g.confidence_reported;
    totals.confidence_sum += g.confidence_sum;
    totals.by_surface[g.surface] = g.sidecars;
  }
  return totals;
}

/** The statement queryTotals runs (exported for the query-plan test). */
export function totalsQuery(dirs: readonly string[], filter: SidecarFilter): { sql: string; params: unknown[] } {
  const { sql, params } = whereClause(dirs, filter);
  return {
    sql: `SELECT surface, COUNT(*) AS sidecars, COALESCE(SUM(needs_review), 0) AS needs_review, COALESCE(SUM(degraded), 0) AS degraded,
                 COUNT(confidence) AS confidence_reported, COALESCE(SUM(confidence), 0) AS confidence_sum
          FROM sidecar_files WHERE ${sql} GROUP BY surface`,
    params,
  };
}

/** The statement queryInvalid runs (exported for the query-plan test). */
export function invalidQuery(dirs: readonly string[]): { sql: string; params: unknown[] } {
  return {
    sql: `SELECT path, error FROM sidecar_files WHERE dir IN (${dirs.map(() => '?').join(', ')}) AND valid = 0 ORDER BY path`,
    params: dirs.map((d) => resolve(d)),
  };
}

export function queryInvalid(db: Database, dirs: readonly string[]): Array<Pick<SidecarRecord, 'path' | 'error'>> {
  const { sql, params } = invalidQuery(dirs);
  return db.prepare(sql).all(...params) as Array<Pick<SidecarRecord, 'path' | 'error'>>;
}
