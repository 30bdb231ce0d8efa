/**
 * What `export` sends, built from the log's rows: one OTLP log record per sidecar and per event,
 * one span per finished turn with a child span per timed tool call. Pure: rows in, plain objects
 * in the shapes the official OpenTelemetry serializers read (ReadableLogRecord, ReadableSpan) out.
 *
 * Every record carries `forge_reflect.record_id`, stable across resends, so a collector can drop
 * duplicates; span and trace ids are derived from it too, so a resent span is the same span.
 * The attribute mapping is documented in docs/otlp.md.
 */
import { createHash } from 'node:crypto';
import type { EventRow } from '../events.js';

export const SCOPE = { name: 'forge-reflect', version: '0.1.0' } as const;
export const RECORD_ID = 'forge_reflect.record_id';

export type Attributes = Record<string, string | number | boolean | string[]>;
export type HrTime = [number, number];

export interface Resource {
  attributes: Attributes;
}

/** The fields of the SDK's ReadableLogRecord that the OTLP serializers read. */
export interface LogItem {
  recordId: string;
  hrTime: HrTime;
  hrTimeObserved: HrTime;
  severityNumber: number;
  severityText: string;
  body: string;
  eventName: string;
  attributes: Attributes;
  droppedAttributesCount: 0;
  resource: Resource;
  instrumentationScope: typeof SCOPE;
}

/** The fields of the SDK's ReadableSpan that the OTLP serializers read. */
export interface SpanItem {
  recordId: string;
  name: string;
  kind: number;
  spanContext: () => { traceId: string; spanId: string; traceFlags: number };
  parentSpanContext?: { traceId: string; spanId: string; traceFlags: number; isRemote: false };
  startTime: HrTime;
  endTime: HrTime;
  attributes: Attributes;
  status: { code: number; message?: string };
  events: never[];
  links: never[];
  droppedAttributesCount: 0;
  droppedEventsCount: 0;
  droppedLinksCount: 0;
  resource: Resource;
  instrumentationScope: typeof SCOPE;
}

/** OTLP severity numbers. */
const SEVERITY = { INFO: 9, WARN: 13, ERROR: 17 } as const;
/** The API's SpanKind.INTERNAL and SpanStatusCode values. */
const KIND_INTERNAL = 0;
const STATUS_UNSET = 0;
const STATUS_ERROR = 2;

/** `2026-11-22T10:15:00.123456Z` → [seconds, nanoseconds]. */
export function hrTimeOf(iso: string): HrTime {
  const m = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d+))?Z$/.exec(iso);
  const ms = Date.parse(m ? `${m[1]}Z` : iso);
  if (Number.isNaN(ms)) return [0, 0];
  const fraction = m?.[2] ?? '';
  return [Math.floor(ms / 1000), Number(fraction.padEnd(9, '0').slice(0, 9))];
}

function hrMinusMs(t: HrTime, ms: number): HrTime {
  const total = BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]) - BigInt(Math.round(ms * 1_000_000));
  const clamped = total < 0n ? 0n : total;
  return [Number(clamped / 1_000_000_000n), Number(clamped % 1_000_000_000n)];
}

function hexId(seed: string, bytes: number): string {
  return createHash('sha256')
    .update(seed)
    .digest('hex')
    .slice(0, bytes * 2);
}

function put(attrs: Attributes, key: string, value: string | number | boolean | string[] | null | undefined): void {
  if (value !== null && value !== undefined) attrs[key] = value;
}

/** A sidecar as the export sees it: its file name and its parsed (already redacted) JSON. */
export interface SidecarInput {
  /** The file name without `.reflection.json`. */
  stem: string;
  sidecar: Record<string, unknown>;
  observed: HrTime;
}

function field(o: unknown, ...path: string[]): unknown {
  let v = o;
  for (const p of path) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
  return v;
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const bool = (v: unknown) => (typeof v === 'boolean' ? v : undefined);

export function sidecarLog(input: SidecarInput, resource: Resource): LogItem {
  const s = input.sidecar;
  const recordId = `sidecar:${input.stem}`;
  const attributes: Attributes = { [RECORD_ID]: recordId, 'forge_reflect.record.kind': 'sidecar' };
  put(attributes, 'session.id', str(s.session_id));
  put(attributes, 'gen_ai.agent.name', str(s.agent));
  put(attributes, 'vcs.repository.name', str(s.repo));
  put(attributes, 'forge_reflect.task_ref', str(s.task_ref));
  put(attributes, 'forge_reflect.risk.surface', str(field(s, 'risk', 'surface')));
  put(attributes, 'forge_reflect.risk.score', num(field(s, 'risk', 'score')));
  const needsReview = bool(field(s, 'risk', 'needs_review'));
  put(attributes, 'forge_reflect.risk.needs_review', needsReview);
  put(attributes, 'forge_reflect.confidence', num(s.confidence));
  put(attributes, 'forge_reflect.degraded', bool(field(s, 'provenance', 'degraded')));
  put(attributes, 'forge_reflect.reflection_mode', str(field(s, 'provenance', 'reflection_mode')));
  put(attributes, 'forge_reflect.reflection_attempt', num(field(s, 'provenance', 'reflection_attempt')));
  put(attributes, 'forge_reflect.most_likely_wrong.surface', str(field(s, 'most_likely_wrong', 'surface')));
  if (Array.isArray(s.files_changed))
    put(
      attributes,
      'forge_reflect.files_changed',
      s.files_changed.filter((f): f is string => typeof f === 'string'),
    );
  const ts = str(s.timestamp);
  return {
    recordId,
    hrTime: ts === undefined ? input.observed : hrTimeOf(ts),
    hrTimeObserved: input.observed,
    severityNumber: needsReview ? SEVERITY.WARN : SEVERITY.INFO,
    severityText: needsReview ? 'WARN' : 'INFO',
    body: JSON.stringify(s),
    eventName: 'forge_reflect.reflection',
    attributes,
    droppedAttributesCount: 0,
    resource,
    instrumentationScope: SCOPE,
  };
}

/** The file an edit-like tool call touched, when its payload names one. */
function toolFilePath(payload: string): string | undefined {
  try {
    const p = JSON.parse(payload) as unknown;
    const input = field(p, 'tool_input') ?? field(p, 'toolArgs') ?? field(p, 'tool_args');
    return str(field(input, 'file_path')) ?? str(field(input, 'path')) ?? str(field(p, 'file_path'));
  } catch {
    return undefined;
  }
}

export function eventLog(row: EventRow, resource: Resource, observed: HrTime): LogItem {
  const recordId = `event:${row.id}`;
  const attributes: Attributes = { [RECORD_ID]: recordId, 'forge_reflect.record.kind': 'event', 'forge_reflect.event.type': row.type };
  put(attributes, 'session.id', row.session_id);
  put(attributes, 'gen_ai.agent.id', row.agent_id);
  put(attributes, 'forge_reflect.runtime', row.runtime);
  put(attributes, 'forge_reflect.hook_event', row.hook_event);
  put(attributes, 'gen_ai.tool.name', row.tool_name);
  put(attributes, 'gen_ai.tool.call.id', row.tool_use_id);
  put(attributes, 'forge_reflect.duration_ms', row.duration_ms);
  put(attributes, 'process.working_directory', row.cwd);
  if (row.tool_name !== null) put(attributes, 'code.file.path', toolFilePath(row.payload));
  if (row.truncated === 1) attributes['forge_reflect.payload_truncated'] = true;
  const failed = row.type === 'tool.failed';
  return {
    recordId,
    hrTime: hrTimeOf(row.ts),
    hrTimeObserved: observed,
    severityNumber: failed ? SEVERITY.ERROR : SEVERITY.INFO,
    severityText: failed ? 'ERROR' : 'INFO',
    body: row.payload,
    eventName: `forge_reflect.${row.type}`,
    attributes,
    droppedAttributesCount: 0,
    resource,
    instrumentationScope: SCOPE,
  };
}

/** One finished turn: its stop event and the session's events since the previous stop. */
export interface TurnInput {
  stop: EventRow;
  /** The events of the turn before the stop, oldest first (prompt, tool calls, …). */
  events: readonly EventRow[];
}

function span(
  recordId: string,
  name: string,
  traceId: string,
  start: HrTime,
  end: HrTime,
  attributes: Attributes,
  resource: Resource,
  parentSpanId?: string,
  error = false,
): SpanItem {
  const spanId = hexId(`span:${recordId}`, 8);
  return {
    recordId,
    name,
    kind: KIND_INTERNAL,
    spanContext: () => ({ traceId, spanId, traceFlags: 1 }),
    ...(parentSpanId === undefined ? {} : { parentSpanContext: { traceId, spanId: parentSpanId, traceFlags: 1, isRemote: false as const } }),
    startTime: start,
    endTime: end,
    attributes: { [RECORD_ID]: recordId, ...attributes },
    status: { code: error ? STATUS_ERROR : STATUS_UNSET },
    events: [],
    links: [],
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    resource,
    instrumentationScope: SCOPE,
  };
}

const earlier = (a: HrTime, b: HrTime) => (a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]) ? a : b);

/** The turn's span first, then one child span per tool call whose duration the log has. */
export function turnSpans(turn: TurnInput, resource: Resource): SpanItem[] {
  const stop = turn.stop;
  const turnId = `turn:${stop.id}`;
  const traceId = hexId(`trace:${turnId}`, 16);
  const end = hrTimeOf(stop.ts);
  const tools = turn.events.filter((e) => (e.type === 'tool.executed' || e.type === 'tool.failed') && e.duration_ms !== null);
  let start = turn.events.length > 0 ? hrTimeOf((turn.events[0] as EventRow).ts) : end;
  for (const t of tools) start = earlier(start, hrMinusMs(hrTimeOf(t.ts), t.duration_ms as number));
  const common: Attributes = {};
  put(common, 'session.id', stop.session_id);
  put(common, 'gen_ai.agent.id', stop.agent_id);
  put(common, 'forge_reflect.runtime', stop.runtime);
  const turnAttrs: Attributes = {
    ...common,
    'gen_ai.operation.name': 'invoke_agent',
    'forge_reflect.record.kind': 'turn',
    'forge_reflect.tool_calls': turn.events.filter((e) => e.type === 'tool.executed' || e.type === 'tool.failed').length,
  };
  const parent = span(turnId, `invoke_agent ${stop.runtime}`, traceId, start, end, turnAttrs, resource);
  const parentSpanId = parent.spanContext().spanId;
  const children = tools.map((t) => {
    const attrs: Attributes = { ...common, 'gen_ai.operation.name': 'execute_tool', 'forge_reflect.record.kind': 'tool_call' };
    put(attrs, 'gen_ai.tool.name', t.tool_name);
    put(attrs, 'gen_ai.tool.call.id', t.tool_use_id);
    if (t.tool_name !== null) put(attrs, 'code.file.path', toolFilePath(t.payload));
    const tEnd = hrTimeOf(t.ts);
    return span(
      `tool:${t.id}`,
      `execute_tool ${t.tool_name ?? 'unknown'}`,
      traceId,
      hrMinusMs(tEnd, t.duration_ms as number),
      tEnd,
      attrs,
      resource,
      parentSpanId,
      t.type === 'tool.failed',
    );
  });
  return [parent, ...children];
}
