/**
 * An OTLP/HTTP receiver on 127.0.0.1 for tests. Each request is decoded with the generated
 * protobufjs code of the official opentelemetry-proto definitions, as shipped by
 * @opentelemetry/otlp-transformer 0.214.0 (the test-only alias `otlp-proto-decoders`; later
 * releases dropped the decoders). JSON requests go through the same messages' fromObject.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';

interface Message {
  decode(bytes: Uint8Array): unknown;
  fromObject(value: unknown): unknown;
  toObject(message: unknown, options: Record<string, unknown>): Record<string, unknown>;
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const root = createRequire(import.meta.url)('otlp-proto-decoders/build/src/generated/root.js') as any;
const LogsRequest = root.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest as Message;
const TraceRequest = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest as Message;

export type Value = string | number | boolean | null | Value[] | { [k: string]: Value };

export interface ReceivedLog {
  recordId: string;
  attributes: Record<string, Value>;
  body: Value;
  eventName: string;
  severityNumber: number;
  timeUnixNano: string;
  resource: Record<string, Value>;
}

export interface ReceivedSpan {
  recordId: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, Value>;
  status: number;
  resource: Record<string, Value>;
}

export interface ReceivedRequest {
  path: string;
  contentType: string;
  headers: IncomingMessage['headers'];
  raw: Buffer;
  logs: ReceivedLog[];
  spans: ReceivedSpan[];
}

/** What to do with the n-th request (0-based): answer a status, or hang (never answer). */
export type Policy = (n: number, request: ReceivedRequest) => { status: number } | 'hang' | Promise<{ status: number }>;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function anyValue(v: any): Value {
  if (v === undefined || v === null) return null;
  if (v.stringValue !== undefined) return v.stringValue as string;
  if (v.boolValue !== undefined) return v.boolValue as boolean;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue as number;
  if (v.arrayValue !== undefined) return ((v.arrayValue.values ?? []) as unknown[]).map(anyValue);
  if (v.kvlistValue !== undefined) return attrs(v.kvlistValue.values);
  return null;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function attrs(list: any[] | undefined): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const kv of list ?? []) out[kv.key as string] = anyValue(kv.value);
  return out;
}

const TO_OBJECT = { longs: String, bytes: String, enums: Number, defaults: false, arrays: true };

function hex(b64: unknown): string {
  return typeof b64 === 'string' ? Buffer.from(b64, 'base64').toString('hex') : '';
}

function decode(path: string, contentType: string, body: Buffer): { logs: ReceivedLog[]; spans: ReceivedSpan[] } {
  const json = contentType.includes('json');
  const isLogs = /logs\/?$/.test(path);
  const type = isLogs ? LogsRequest : TraceRequest;
  const raw = json ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : undefined;
  const message = json ? type.fromObject(raw) : type.decode(body);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const o = type.toObject(message, TO_OBJECT) as any;
  const logs: ReceivedLog[] = [];
  const spans: ReceivedSpan[] = [];
  if (isLogs) {
    for (const rl of o.resourceLogs ?? []) {
      const resource = attrs(rl.resource?.attributes);
      for (const sl of rl.scopeLogs ?? []) {
        for (const r of sl.logRecords ?? []) {
          const a = attrs(r.attributes);
          logs.push({
            recordId: String(a['forge_reflect.record_id']),
            attributes: a,
            body: anyValue(r.body),
            eventName: r.eventName ?? '',
            severityNumber: r.severityNumber ?? 0,
            timeUnixNano: String(r.timeUnixNano),
            resource,
          });
        }
      }
    }
  } else {
    // In OTLP/JSON, ids are hex (not base64): read them from the raw JSON in the same order.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const rawSpans: any[] = json ? ((raw as any).resourceSpans ?? []).flatMap((rs: any) => (rs.scopeSpans ?? []).flatMap((ss: any) => ss.spans ?? [])) : [];
    let i = 0;
    for (const rs of o.resourceSpans ?? []) {
      const resource = attrs(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          const a = attrs(s.attributes);
          const r = rawSpans[i++];
          spans.push({
            recordId: String(a['forge_reflect.record_id']),
            name: s.name,
            traceId: json ? String(r.traceId) : hex(s.traceId),
            spanId: json ? String(r.spanId) : hex(s.spanId),
            parentSpanId: json ? String(r.parentSpanId ?? '') : hex(s.parentSpanId),
            startTimeUnixNano: String(s.startTimeUnixNano),
            endTimeUnixNano: String(s.endTimeUnixNano),
            attributes: a,
            status: s.status?.code ?? 0,
            resource,
          });
        }
      }
    }
  }
  return { logs, spans };
}

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Every log record and span received, resends included. */
  logs(): ReceivedLog[];
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

export async function startReceiver(policy: Policy = () => ({ status: 200 }), port = 0): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const hanging: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      const contentType = String(req.headers['content-type'] ?? '');
      const raw = Buffer.concat(chunks);
      let decoded;
      try {
        decoded = decode(path, contentType, raw);
      } catch (error) {
        res.writeHead(400).end(String(error));
        return;
      }
      const request: ReceivedRequest = { path, contentType, headers: req.headers, raw, ...decoded };
      const n = requests.length;
      requests.push(request);
      const action = policy(n, request);
      if (action === 'hang') {
        hanging.push(res);
        return;
      }
      void Promise.resolve(action).then((a) => answer(res, a.status, contentType));
    });
  });
  const answer = (res: ServerResponse, status: number, contentType: string) => {
    if (res.destroyed) return;
    res
      .writeHead(status, { 'Content-Type': contentType.includes('json') ? 'application/json' : 'application/x-protobuf' })
      .end(contentType.includes('json') ? '{}' : '');
  };
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}`,
    port: actual,
    requests,
    logs: () => requests.flatMap((r) => r.logs),
    spans: () => requests.flatMap((r) => r.spans),
    close: () =>
      new Promise<void>((r) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
