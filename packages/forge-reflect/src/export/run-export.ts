/**
 * The export: everything not yet acknowledged (sidecars, events, finished turns) encoded by the
 * official OpenTelemetry serializers (@opentelemetry/otlp-transformer) and sent in batches over
 * OTLP/HTTP. Each batch's records are marked only after the endpoint answered 2xx, so a failed or
 * killed export leaves them pending for the next one. This module (and the OpenTelemetry code it
 * pulls in) is loaded only by `export` and by the `ingest` that follows a Stop when export is on.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { JsonLogsSerializer, JsonTraceSerializer, ProtobufLogsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { acquireDrainLock } from '../drain-lock.js';
import { openDrainedLog } from '../drain.js';
import { UserError } from '../errors.js';
import type { EventLog } from '../event-log.js';
import { loadRedactionRules, warnOnStderr } from '../redact-config.js';
import { redactJsonInPlace, type RedactionRules } from '../redact.js';
import { indexSidecars } from '../report/sidecar-index.js';
import { isoMicros } from '../since.js';
import { ensurePrivateDir } from '../state-dir.js';
import { readExportConfig } from './auto.js';
import { ensureMarksTable, markExported, pendingEvents, pendingSidecars, pendingStops, turnEvents } from './marks.js';
import { checkFlagsOnly, resolveResource, resolveTarget, type ExportFlags, type ExportTarget, type Protocol, type SignalTarget } from './otlp-config.js';
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
    const value = JSON.parse(readFileSync(path, 'utf8')) as unknown;
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

function batchLogs(items: readonly LogItem[], size: number): Array<Batch<LogItem>> {
  const out: Array<Batch<LogItem>> = [];
  let current: Batch<LogItem> = { items: [], recordIds: [] };
  let bytes = 0;
  for (const item of items) {
    if (current.items.length >= size || (current.items.length > 0 && bytes + item.body.length > BATCH_BYTES)) {
      out.push(current);
      current = { items: [], recordIds: [] };
      bytes = 0;
    }
    current.items.push(item);
    current.recordIds.push(item.recordId);
    bytes += item.body.length;
  }
  if (current.items.length > 0) out.push(current);
  return out;
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
    signal === 'logs' ? (protocol === 'http/json' ? JsonLogsSerializer : ProtobufLogsSerializer) : protocol === 'http/json' ? JsonTraceSerializer : ProtobufTraceSerializer;
  const body = serializer.serializeRequest(items as never);
  if (body === undefined) throw new Error(`the OTLP ${signal} serializer returned nothing`);
  return body;
}

const CONTENT_TYPE: Record<Protocol, string> = { 'http/protobuf': 'application/x-protobuf', 'http/json': 'application/json' };

interface Collected {
  logs: LogItem[];
  turns: SpanItem[][];
  counts: ExportResult['pending'];
}

function collect(log: EventLog, options: ExportOptions, resource: Resource, rules: RedactionRules, observed: HrTime): Collected {
  const db = log.db;
  ensureMarksTable(db);
  indexSidecars(db, options.dirs);
  const logs: LogItem[] = [];
  let sidecars = 0;
  for (const { path, stem } of pendingSidecars(db, options.dirs, options.since)) {
    const sidecar = readSidecar(path, rules);
    if (sidecar === undefined) continue;
    logs.push(sidecarLog({ stem, sidecar, observed }, resource));
    sidecars++;
  }
  const events = pendingEvents(db, options.since);
  for (const row of events) logs.push(eventLog(row, resource, observed));
  const turns = pendingStops(db, options.since).map((stop) => turnSpans({ stop, events: turnEvents(db, stop) }, resource));
  return { logs, turns, counts: { sidecars, events: events.length, turns: turns.length, spans: turns.reduce((n, t) => n + t.length, 0) } };
}

/**
 * Sends what is pending. Throws a UserError (exit 1) when the endpoint refuses or the budget runs
 * out; batches acknowledged before that stay marked.
 */
export async function runExport(stateDir: string, options: ExportOptions): Promise<ExportResult> {
  const env = options.env ?? process.env;
  const now = options.now ?? Date.now;
  const started = now();
  const config = readExportConfig(stateDir);
  let target: ExportTarget | undefined;
  if (options.dryRun) {
    checkFlagsOnly(options.flags);
    try {
      target = resolveTarget(options.flags, env, config);
    } catch {
      target = undefined; // a dry run needs no endpoint
    }
  } else {
    target = resolveTarget(options.flags, env, config);
  }
  const resource: Resource = { attributes: target?.resource ?? resolveResource(env) };
  const result: ExportResult = {
    dry_run: Boolean(options.dryRun),
    locked: false,
    endpoints: target === undefined ? null : { logs: target.logs.url, traces: target.traces.url },
    protocol: target?.logs.protocol ?? null,
    pending: { sidecars: 0, events: 0, turns: 0, spans: 0 },
    sent: { log_records: 0, spans: 0, requests: 0, attempts: 0 },
    marked: 0,
  };

  const lockDir = ensurePrivateDir(join(stateDir, 'export'));
  const lock = options.dryRun ? undefined : acquireDrainLock(lockDir);
  if (!options.dryRun && lock === undefined) return { ...result, locked: true };
  try {
    const log = openDrainedLog(stateDir);
    try {
      const rules = loadRedactionRules(stateDir, warnOnStderr);
      const collected = collect(log, options, resource, rules, hrNow(started));
      result.pending = collected.counts;
      if (options.dryRun || target === undefined) return result;
      const size = Math.max(1, Math.trunc(options.batchSize ?? DEFAULT_BATCH_SIZE));
      const deadline = started + options.budgetMs;
      const jobs: Array<{ signal: 'logs' | 'traces'; to: SignalTarget; batch: Batch<LogItem> | Batch<SpanItem> }> = [
        ...batchLogs(collected.logs, size).map((batch) => ({ signal: 'logs' as const, to: target.logs, batch })),
        ...batchTurns(collected.turns, size).map((batch) => ({ signal: 'traces' as const, to: target.traces, batch })),
      ];
      for (const job of jobs) {
        const body = encode(job.signal, job.to.protocol, job.batch.items);
        const outcome = await sendWithRetry({ url: job.to.url, body, contentType: CONTENT_TYPE[job.to.protocol], headers: job.to.headers, deadline });
        result.sent.attempts += outcome.attempts;
        const left = jobs.reduce((n, j) => n + j.batch.recordIds.length, 0) - result.sent.log_records - result.sent.spans;
        if (!outcome.ok) {
          const done = `${result.marked} record(s) exported before, ${left} left pending for the next export`;
          if (outcome.refused) throw new UserError(`the OTLP endpoint ${job.to.url} refused the export with HTTP ${outcome.status}; ${done}; check the endpoint, its path and its headers`);
          throw new UserError(`the OTLP endpoint ${job.to.url} did not accept the export within ${Math.round(options.budgetMs / 1000)} s (${outcome.reason}); ${done}; run forge-reflect export again when it is reachable`);
        }
        result.sent.requests++;
        if (job.signal === 'logs') result.sent.log_records += job.batch.items.length;
        else result.sent.spans += job.batch.items.length;
        result.marked += markExported(log.db, job.batch.recordIds, job.to.url, isoMicros(now()));
        lock?.touch();
      }
      return result;
    } finally {
      log.close();
    }
  } finally {
    lock?.release();
  }
}

