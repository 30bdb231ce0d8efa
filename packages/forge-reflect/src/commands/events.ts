import { COMMAND_LOCK_WAIT_MS, drainSpool } from '../log/drain.js';
import { UserError, usageError } from '../errors.js';
import { isBusyError, type EventFilter, type EventLog } from '../log/event-log.js';
import { openLogForReading } from '../log/reading-log.js';
import { formatTable, painter, useColour } from '../output.js';
import { EVENT_TYPES, RUNTIMES, type EventRow, type EventType } from '../events.js';
import { LOOP_EVENT_TYPES } from '../loops/loop-events.js';

/** Every type a log row can have: the hooks' and the feedback loops'. */
const LOG_TYPES: readonly string[] = [...EVENT_TYPES, ...LOOP_EVENT_TYPES];
import { safeStringify } from '../safe-json.js';
import { parseSince, SINCE_EXAMPLE } from '../since.js';
import { resolveStateDir } from '../state-dir.js';
import { warnAboutRejected } from './ingest.js';

export const DEFAULT_LIMIT = 50;

/** The filter the options describe; usage errors (exit 2) for bad values. */
export function filterFromArgs(args: Record<string, unknown>, now: number): EventFilter {
  const filter: EventFilter = {};
  const text = (name: string): string | undefined => {
    const value = args[name];
    if (value === undefined) return undefined;
    if (Array.isArray(value)) throw usageError(`--${name} was given more than once; give it once`);
    const s = String(value);
    if (s.trim() === '') throw usageError(`--${name} needs a value`);
    return s;
  };
  const session = text('session');
  if (session !== undefined) filter.session = session;
  const type = text('type');
  if (type !== undefined) {
    if (!LOG_TYPES.includes(type)) throw usageError(`--type ${JSON.stringify(type)} is not an event type; use one of ${LOG_TYPES.join(', ')}`);
    filter.type = type as EventType;
  }
  const tool = text('tool');
  if (tool !== undefined) filter.tool = tool;
  const runtime = text('runtime');
  if (runtime !== undefined) {
    if (!(RUNTIMES as readonly string[]).includes(runtime))
      throw usageError(`--runtime ${JSON.stringify(runtime)} is not a runtime; use one of ${RUNTIMES.join(', ')}`);
    filter.runtime = runtime;
  }
  const since = text('since');
  if (since !== undefined) {
    const iso = parseSince(since, now);
    if (iso === undefined) throw usageError(`--since ${JSON.stringify(since)} is neither ISO-8601 nor an age; use e.g. ${SINCE_EXAMPLE}`);
    filter.since = iso;
  }
  const limit = text('limit');
  if (limit === undefined) filter.limit = DEFAULT_LIMIT;
  else {
    if (!/^\d{1,9}$/.test(limit.trim()) || Number(limit) < 1)
      throw usageError(`--limit ${JSON.stringify(limit)} is not a whole number of at least 1, e.g. --limit 200`);
    filter.limit = Number(limit);
  }
  return filter;
}

function formatDuration(ms: number | null): string {
  if (ms === null) return '';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes}m ${String(Math.round((ms % 60_000) / 1000)).padStart(2, '0')}s`;
}

/** The table row of an event: time (UTC, to the second), type, runtime, tool, short session, duration. */
export function tableRow(row: EventRow): string[] {
  return [
    `${row.ts.slice(0, 10)} ${row.ts.slice(11, 19)}`,
    row.type,
    row.runtime,
    row.tool_name ?? '',
    row.session_id === null ? '' : row.session_id.slice(0, 8),
    formatDuration(row.duration_ms),
  ];
}

/** A row for --json: every column, the payload parsed, truncated as a boolean. */
export function jsonRow(row: EventRow): Record<string, unknown> {
  let payload: unknown;
  try {
    payload = JSON.parse(row.payload);
  } catch {
    payload = row.payload;
  }
  return { ...row, payload, truncated: row.truncated === 1 };
}

export async function run(args: Record<string, unknown>): Promise<number> {
  const filter = filterFromArgs(args, Date.now());
  const stateDir = resolveStateDir();
  const busy = () => new UserError(`the event log in ${stateDir} stayed busy for more than 5 s; run the command again`);
  let log: EventLog;
  try {
    log = openLogForReading(stateDir);
  } catch (error) {
    throw isBusyError(error) ? busy() : error;
  }
  let rows: EventRow[];
  try {
    const counts = drainSpool(stateDir, { log, lock: { waitMs: COMMAND_LOCK_WAIT_MS } });
    warnAboutRejected(counts, stateDir);
    rows = log.query(filter);
  } catch (error) {
    throw isBusyError(error) ? busy() : error;
  } finally {
    log.close();
  }
  if (args.json) {
    process.stdout.write(`${safeStringify(rows.map(jsonRow), 2)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    process.stdout.write('no events match\n');
    return 0;
  }
  const paint = painter(useColour());
  process.stdout.write(`${formatTable(['TIME (UTC)', 'TYPE', 'RUNTIME', 'TOOL', 'SESSION', 'DURATION'], rows.map(tableRow))}\n`);
  if (rows.length === filter.limit) process.stdout.write(`${paint.dim(`the latest ${rows.length}; --limit N for more`)}\n`);
  return 0;
}
