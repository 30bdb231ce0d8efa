/**
 * The export cursor: an `export_marks` table in the event log holding one row per record the
 * endpoint acknowledged (a 2xx). A record is pending while it has no mark. Marks are written only
 * after the acknowledgement, in one transaction per request, so a failed or killed export leaves
 * its records pending and the next export sends them again.
 *
 * The table is created on first use (`CREATE TABLE IF NOT EXISTS`), so commands that never
 * export never see it.
 */
import { resolve } from 'node:path';
import type { Database } from '../log/event-log.js';
import type { EventRow } from '../events.js';

export function ensureMarksTable(db: Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS export_marks (
     record_id   TEXT PRIMARY KEY NOT NULL,
     endpoint    TEXT NOT NULL,
     exported_at TEXT NOT NULL
   )`);
}

/** Marks records as acknowledged; returns how many were newly marked. */
export function markExported(db: Database, recordIds: readonly string[], endpoint: string, at: string): number {
  const insert = db.prepare('INSERT OR IGNORE INTO export_marks (record_id, endpoint, exported_at) VALUES (?, ?, ?)');
  return db
    .transaction(() => {
      let n = 0;
      for (const id of recordIds) n += insert.run(id, endpoint, at).changes;
      return n;
    })
    .immediate();
}

export function countMarks(db: Database): number {
  return Number(db.prepare('SELECT count(*) FROM export_marks').pluck().get());
}

const EVENT_COLUMNS =
  'e.id, e.session_id, e.agent_id, e.ts, e.runtime, e.type, e.hook_event, e.tool_name, e.tool_use_id, e.duration_ms, e.cwd, e.payload, e.truncated';

export interface Page {
  limit: number;
  /** Only rows after this (ts, id): keyset paging, so a page never repeats. */
  after?: { ts: string; id: string };
}

function pending(db: Database, prefix: string, typeClause: string, since: string | undefined, page: Page): EventRow[] {
  const where = [`m.record_id IS NULL`, typeClause];
  const params: Record<string, unknown> = { limit: page.limit };
  if (since !== undefined) {
    where.push('e.ts >= @since');
    params.since = since;
  }
  if (page.after !== undefined) {
    where.push('(e.ts > @ats OR (e.ts = @ats AND e.id > @aid))');
    params.ats = page.after.ts;
    params.aid = page.after.id;
  }
  return db
    .prepare(`SELECT ${EVENT_COLUMNS} FROM events e LEFT JOIN export_marks m ON m.record_id = '${prefix}' || e.id
              WHERE ${where.filter(Boolean).join(' AND ')} ORDER BY e.ts, e.id LIMIT @limit`)
    .all(params) as EventRow[];
}

/** Events without a mark, oldest first, one page. */
export function pendingEvents(db: Database, since: string | undefined, page: Page): EventRow[] {
  return pending(db, 'event:', '', since, page);
}

/** Stop events (finished turns) whose turn span has no mark, oldest first, one page. */
export function pendingStops(db: Database, since: string | undefined, page: Page): EventRow[] {
  return pending(db, 'turn:', "e.type = 'turn.stopped'", since, page);
}

export function countPending(db: Database, since: string | undefined): { events: number; turns: number } {
  const count = (prefix: string, typeClause: string) =>
    Number(
      db
        .prepare(`SELECT count(*) FROM events e LEFT JOIN export_marks m ON m.record_id = '${prefix}' || e.id
                  WHERE m.record_id IS NULL ${typeClause} ${since === undefined ? '' : 'AND e.ts >= ?'}`)
        .pluck()
        .get(...(since === undefined ? [] : [since])),
    );
  return { events: count('event:', ''), turns: count('turn:', "AND e.type = 'turn.stopped'") };
}

/** The events of a turn: the session's events after its previous stop and before this one. */
export function turnEvents(db: Database, stop: EventRow): EventRow[] {
  if (stop.session_id === null) return [];
  const previous = db
    .prepare(`SELECT ts, id FROM events WHERE session_id = ? AND type = 'turn.stopped' AND (ts < ? OR (ts = ? AND id < ?))
              ORDER BY ts DESC, id DESC LIMIT 1`)
    .get(stop.session_id, stop.ts, stop.ts, stop.id) as { ts: string; id: string } | undefined;
  const after = previous === undefined ? '' : 'AND (e.ts > @pts OR (e.ts = @pts AND e.id > @pid))';
  return db
    .prepare(`SELECT ${EVENT_COLUMNS} FROM events e WHERE e.session_id = @session AND e.type != 'turn.stopped'
              AND (e.ts < @ts OR (e.ts = @ts AND e.id < @id)) ${after} ORDER BY e.ts, e.id`)
    .all({ session: stop.session_id, ts: stop.ts, id: stop.id, ...(previous === undefined ? {} : { pts: previous.ts, pid: previous.id }) }) as EventRow[];
}

/** Valid indexed sidecars of the folders without a mark, oldest first. */
export function pendingSidecars(db: Database, dirs: readonly string[], since: string | undefined): Array<{ path: string; stem: string }> {
  const rows = db
    .prepare(
      `SELECT path FROM sidecar_files WHERE dir IN (${dirs.map(() => '?').join(', ')}) AND valid = 1 ${since === undefined ? '' : 'AND ts >= ?'} ORDER BY ts, path`,
    )
    .all(...dirs.map((d) => resolve(d)), ...(since === undefined ? [] : [since])) as Array<{ path: string }>;
  const marked = db.prepare('SELECT 1 FROM export_marks WHERE record_id = ?').pluck();
  const out: Array<{ path: string; stem: string }> = [];
  for (const { path } of rows) {
    const name = path.slice(path.lastIndexOf('/') + 1);
    const stem = name.endsWith('.reflection.json') ? name.slice(0, -'.reflection.json'.length) : name;
    if (marked.get(`sidecar:${stem}`) === undefined) out.push({ path, stem });
  }
  return out;
}
