/**
 * The export: everything not yet acknowledged (sidecars, events, finished turns) encoded by the
 * official OpenTelemetry serializers (@opentelemetry/otlp-transformer) and sent in batches over
 * OTLP/HTTP. Each batch's records are marked only after the endpoint answered 2xx, so a failed or
 * killed export leaves them pending for the next one. This module (and the OpenTelemetry code it
 * pulls in) is loaded only by `export` and by the `ingest` that follows a Stop when export is on.
 */
import { join } from 'node:path';
import { JsonLogsSerializer, JsonTraceSerializer, ProtobufLogsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { acquireDrainLock } from '../log/drain-lock.js';
import { openDrainedLog } from '../log/drain.js';
import type { Database } from '../log/event-log.js';
import { UserError } from '../errors.js';
import type { EventRow } from '../events.js';
import { loadRedactionRules, warnOnStderr } from '../log/redact-config.js';
import { redactJsonInPlace, type RedactionRules } from '../log/redact.js';
import { indexSidecars } from '../report/sidecar-index.js';
import { isoMicros } from '../since.js';
import { ensurePrivateDir } from '../state-dir.js';
import { readExportConfig } from './auto.js';
import { readRegularText } from '../regular-file.js';
import { countPending, ensureMarksTable, markExported, pendingEvents, pendingSidecars, pendingStops, turnEvents, type Page } from './marks.js';
import {
  checkFlagsOnly,
  displayUrl,
  resolveResource,
  resolveTarget,
  type ExportConfig,
  type ExportFlags,
  type ExportTarget,
  type Protocol,
} from './otlp-config.js';
import { eventLog, sidecarLog, turnSpans, type HrTime, type LogItem, type Resource, type SpanItem } from './records.js';
import { sendWithRetry } from './send.js';

export const DEFAULT_BATCH_SIZE = 500;
/** A request body stops growing past this many bytes of record bodies. */
const BATCH_BYTES = 2 * 1024 * 1024;

export interface ExportOptions {
  flags: ExportFlags;
  /** Only records at or after this instant (the log's ts format). */
  since?: string;
  dryRun?: boolean;
  /** The whole export's time budget in ms, retries included. */
  budgetMs: number;
  batchSize?: number;
  /** Sidecar folders (default: the report's). */
  dirs: readonly string[];
  env?: NodeJS.ProcessEnv;
  now?: () => number;
}

export interface ExportResult {
  dry_run: boolean;
  /** Another export held the lock; nothing was done. */
  locked: boolean;
  endpoints: { logs: string; traces: string } | null;
  protocol: Protocol | null;
  pending: { sidecars: number; events: number; turns: number; spans: number };
  sent: { log_records: number; spans: number; requests: number; attempts: number };
  marked: number;
}

function hrNow(ms: number): HrTime {
  return [Math.floor(ms / 1000), (ms % 1000) * 1_000_000];
}

function readSidecar(path: string, rules: RedactionRules): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(readRegularText(path)) as unknown;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    // Self-reported text is the agent's words: redacted like the drain redacts events.
    return redactJsonInPlace(value, rules) as Record<string, unknown>;
  } catch {
    return undefined; // vanished or rewritten since it was indexed: the next export sees it
  }
}

interface Batch<T> {
  items: T[];
  recordIds: string[];
}

/** Spans of one turn always travel together, so a turn is acknowledged whole. */
function batchTurns(turns: readonly SpanItem[][], size: number): Array<Batch<SpanItem>> {
  const out: Array<Batch<SpanItem>> = [];
  let current: Batch<SpanItem> = { items: [], recordIds: [] };
  for (const spans of turns) {
    if (current.items.length > 0 && current.items.length + spans.length > size) {
      out.push(current);
      current = { items: [], recordIds: [] };
    }
    for (const s of spans) {
      current.items.push(s);
      current.recordIds.push(s.recordId);
    }
  }
  if (current.items.length > 0) out.push(current);
  return out;
}

function encode(signal: 'logs' | 'traces', protocol: Protocol, items: readonly unknown[]): Uint8Array {
  const serializer =
    signal === 'logs'
      ? protocol === 'http/json'
        ? JsonLogsSerializer
        : ProtobufLogsSerializer
      : protocol === 'http/json'
        ? JsonTraceSerializer
        : ProtobufTraceSerializer;
  const body = serializer.serializeRequest(items as never);
  if (body === undefined) throw new Error(`the OTLP ${signal} serializer returned nothing`);
  return body;
}

const CONTENT_TYPE: Record<Protocol, string> = { 'http/protobuf': 'application/x-protobuf', 'http/json': 'application/json' };

/**
 * Sends what is pending. Throws a UserError (exit 1) when the endpoint refuses or the budget runs
 * out; batches acknowledged before that stay marked.
 */
export async function runExport(stateDir: string, options: ExportOptions): Promise<ExportResult> {
  const env = options.env ?? process.env;
  const now = options.now ?? Date.now;
  const started = now();
  const target = exportTarget(options, env, readExportConfig(stateDir));
  const resource: Resource = { attributes: target?.resource ?? resolveResource(env) };
  const result = emptyResult(options, target);
  const lockDir = ensurePrivateDir(join(stateDir, 'export'));
  const lock = options.dryRun ? undefined : acquireDrainLock(lockDir);
  if (!options.dryRun && lock === undefined) return { ...result, locked: true };
  try {
    const log = openDrainedLog(stateDir);
    try {
      const run = prepareRun(stateDir, log.db, options, started, { target, resource, result, now });
      const sidecars = countPendingInto(run);
      const logs: LogBuffer = { items: [], bytes: 0 };
      await sendSidecars(run, logs, sidecars);
      await sendEvents(run, logs);
      await flushLogs(run, logs);
      await sendTurns(run);
      return result;
    } finally {
      log.close();
    }
  } finally {
    lock?.release();
  }
}

/** Where to send; a dry run needs no endpoint, only well-formed flags. */
function exportTarget(options: ExportOptions, env: NodeJS.ProcessEnv, config: ExportConfig): ExportTarget | undefined {
  if (!options.dryRun) return resolveTarget(options.flags, env, config);
  checkFlagsOnly(options.flags);
  try {
    return resolveTarget(options.flags, env, config);
  } catch {
    return undefined;
  }
}

function emptyResult(options: ExportOptions, target: ExportTarget | undefined): ExportResult {
  return {
    dry_run: Boolean(options.dryRun),
    locked: false,
    endpoints: target === undefined ? null : { logs: displayUrl(target.logs.url), traces: displayUrl(target.traces.url) },
    protocol: target?.logs.protocol ?? null,
    pending: { sidecars: 0, events: 0, turns: 0, spans: 0 },
    sent: { log_records: 0, spans: 0, requests: 0, attempts: 0 },
    marked: 0,
  };
}

/** One export in progress: the log, where it goes, and the result it fills in. */
interface Run {
  db: Database;
  options: ExportOptions;
  /** Undefined on a dry run without an endpoint. */
  target: ExportTarget | undefined;
  resource: Resource;
  result: ExportResult;
  now: () => number;
  rules: RedactionRules;
  observed: HrTime;
  size: number;
  deadline: number;
}

/** The marks table and the sidecar index brought up to date, then the run's settings. */
function prepareRun(stateDir: string, db: Database, options: ExportOptions, started: number, parts: Pick<Run, 'target' | 'resource' | 'result' | 'now'>): Run {
  ensureMarksTable(db);
  indexSidecars(db, options.dirs);
  return {
    ...parts,
    db,
    options,
    rules: loadRedactionRules(stateDir, warnOnStderr),
    observed: hrNow(started),
    size: Math.max(1, Math.trunc(options.batchSize ?? DEFAULT_BATCH_SIZE)),
    deadline: started + options.budgetMs,
  };
}

type PendingSidecar = ReturnType<typeof pendingSidecars>[number];

/** The pending sidecars, and the pending counts in the result. */
function countPendingInto(run: Run): readonly PendingSidecar[] {
  const sidecars = pendingSidecars(run.db, run.options.dirs, run.options.since);
  const counts = countPending(run.db, run.options.since);
  run.result.pending = { sidecars: sidecars.length, events: counts.events, turns: counts.turns, spans: 0 };
  return sidecars;
}

/** One request, then its records marked; a refusal or a spent budget ends the export. */
async function sendBatch(run: Run, signal: 'logs' | 'traces', batch: Batch<LogItem> | Batch<SpanItem>): Promise<void> {
  const { options, target, result } = run;
  if (options.dryRun || target === undefined) return;
  const to = signal === 'logs' ? target.logs : target.traces;
  const body = encode(signal, to.protocol, batch.items);
  const outcome = await sendWithRetry({ url: to.url, body, contentType: CONTENT_TYPE[to.protocol], headers: to.headers, deadline: run.deadline });
  result.sent.attempts += outcome.attempts;
  if (!outcome.ok) {
    const done = `${result.marked} record(s) exported before it, the rest stays pending for the next export`;
    if (outcome.refused)
      throw new UserError(
        `the OTLP endpoint ${displayUrl(to.url)} refused the export with HTTP ${outcome.status}; ${done}; check the endpoint, its path and its headers`,
      );
    throw new UserError(
      `the OTLP endpoint ${displayUrl(to.url)} did not accept the export within ${Math.round(options.budgetMs / 1000)} s (${outcome.reason}); ${done}; run forge-reflect export again when it is reachable`,
    );
  }
  result.sent.requests++;
  if (signal === 'logs') result.sent.log_records += batch.items.length;
  else result.sent.spans += batch.items.length;
  result.marked += markExported(run.db, batch.recordIds, displayUrl(to.url), isoMicros(run.now()));
}

/** Log records waiting to go: sent in batches of `size` records or BATCH_BYTES of bodies, whichever comes first. */
interface LogBuffer {
  items: LogItem[];
  bytes: number;
}

async function addLog(run: Run, logs: LogBuffer, item: LogItem): Promise<void> {
  if (logs.items.length >= run.size || (logs.items.length > 0 && logs.bytes + item.body.length > BATCH_BYTES)) await flushLogs(run, logs);
  logs.items.push(item);
  logs.bytes += item.body.length;
}

async function flushLogs(run: Run, logs: LogBuffer): Promise<void> {
  if (logs.items.length === 0) return;
  const items = logs.items;
  logs.items = [];
  logs.bytes = 0;
  await sendBatch(run, 'logs', { items, recordIds: items.map((i) => i.recordId) });
}

async function sendSidecars(run: Run, logs: LogBuffer, sidecars: readonly PendingSidecar[]): Promise<void> {
  for (const { path, stem } of sidecars) {
    const sidecar = readSidecar(path, run.rules);
    if (sidecar !== undefined) await addLog(run, logs, sidecarLog({ stem, sidecar, observed: run.observed }, run.resource));
  }
}

/** The pending events, a page at a time. */
async function sendEvents(run: Run, logs: LogBuffer): Promise<void> {
  for (let after: Page['after']; ; ) {
    const rows = pendingEvents(run.db, run.options.since, { limit: run.size, after });
    if (rows.length === 0) break;
    after = { ts: (rows.at(-1) as EventRow).ts, id: (rows.at(-1) as EventRow).id };
    for (const row of rows) await addLog(run, logs, eventLog(row, run.resource, run.observed));
  }
}

/** Spans of the finished turns, a page of stops at a time; a turn's spans go in one request. */
async function sendTurns(run: Run): Promise<void> {
  for (let after: Page['after']; ; ) {
    const stops = pendingStops(run.db, run.options.since, { limit: run.size, after });
    if (stops.length === 0) break;
    after = { ts: (stops.at(-1) as EventRow).ts, id: (stops.at(-1) as EventRow).id };
    const turns = stops.map((stop) => turnSpans({ stop, events: turnEvents(run.db, stop) }, run.resource));
    run.result.pending.spans += turns.reduce((n, t) => n + t.length, 0);
    for (const batch of batchTurns(turns, run.size)) await sendBatch(run, 'traces', batch);
  }
}
