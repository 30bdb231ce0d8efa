/**
 * `forge-reflect export` against a real OTLP/HTTP receiver that decodes every request with the
 * official opentelemetry-proto definitions: counts, attributes and bodies in both protocols, the
 * standard environment variables, exactly-once marking through faults (receiver down, 500 then
 * 200, too slow, SIGKILL mid-batch, refusal), redaction, and the automatic export after ingest.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openEventLog } from '../src/log/event-log.js';
import { CLI, cleanupTempDirs, KIT_ROOT as KIT, tempDir, writeSpoolFile } from './helpers/spool.js';
import { SELF_EVIDENT } from './helpers/secrets.js';
import { startReceiver, type Policy, type Receiver } from './helpers/otlp-receiver.js';

const receivers: Receiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});
afterAll(() => cleanupTempDirs());

async function receiver(policy?: Policy): Promise<Receiver> {
  const r = await startReceiver(policy);
  receivers.push(r);
  return r;
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI without blocking this process's event loop (the receiver lives here). */
function cli(args: string[], env: Record<string, string> = {}, onChild?: (c: ChildProcess) => void): Promise<Run> {
  return new Promise((resolve) => {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_') && k !== 'FORGE_EXPORT'));
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    onChild?.(child);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const SESSION = (n: number) => `sess-${n}-7f3c2a9e`;

/** Spools `turns` turns per session: a prompt, `tools` timed Bash calls, a Stop. */
function seedSessions(state: string, sessions: number, turns: number, tools: number, prompt = 'add validation to parseConfig'): number {
  let n = 0;
  const spool = (session: string, event: string, payload: Record<string, unknown>) => {
    writeSpoolFile(state, { event, payload: JSON.stringify({ session_id: session, cwd: '/home/dev/acme-app', hook_event_name: event, ...payload }) });
    n++;
  };
  for (let s = 0; s < sessions; s++) {
    for (let t = 0; t < turns; t++) {
      spool(SESSION(s), 'UserPromptSubmit', { prompt: `${prompt} (turn ${t})` });
      for (let k = 0; k < tools; k++) {
        spool(SESSION(s), 'PostToolUse', {
          tool_name: k % 2 === 0 ? 'Bash' : 'Edit',
          tool_input: k % 2 === 0 ? { command: 'npm test' } : { file_path: `/home/dev/acme-app/src/f${k}.ts` },
          tool_response: {},
          tool_use_id: `toolu_${s}_${t}_${k}`,
          duration_ms: 100 + k,
        });
      }
      spool(SESSION(s), 'Stop', { stop_hook_active: false });
    }
  }
  return n;
}

function writeSidecar(dir: string, i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  mkdirSync(dir, { recursive: true });
  const sidecar = {
    schema: 'reflection.v1',
    task_ref: `acme#${i}`,
    agent: 'claude-code',
    session_id: SESSION(i),
    timestamp: `2026-11-22T10:0${i}:00.000000Z`,
    repo: 'acme-app',
    confidence: 0.7,
    most_likely_wrong: { surface: 'auth', description: 'token refresh untested' },
    known_not_in_diff: null,
    risk: { needs_review: i % 2 === 0, score: i % 2 === 0 ? 0.9 : 0.1, surface: i % 2 === 0 ? 'auth' : 'docs', reason: 'auth: src/auth/token.ts' },
    files_changed: ['src/auth/token.ts'],
    provenance: { source: 'stop-hook', reflection_attempt: 1, degraded: false, reflection_mode: 'solo' },
    ...extra,
  };
  writeFileSync(join(dir, `20261122T10000${i}Z-${SESSION(i)}-abc${i}.reflection.json`), JSON.stringify(sidecar));
  return sidecar;
}

function marks(state: string): Array<{ record_id: string }> {
  const log = openEventLog(state);
  try {
    log.db.exec('CREATE TABLE IF NOT EXISTS export_marks (record_id TEXT PRIMARY KEY NOT NULL, endpoint TEXT NOT NULL, exported_at TEXT NOT NULL)');
    return log.db.prepare('SELECT record_id FROM export_marks').all() as Array<{ record_id: string }>;
  } finally {
    log.close();
  }
}

/** A state folder with 2 sessions × 2 turns × 3 tool calls (20 events, 4 turns, 12 tool spans) and 2 sidecars. */
function fixture(): { state: string; events: number; sidecars: Array<Record<string, unknown>> } {
  const state = tempDir('forge-otlp-');
  const events = seedSessions(state, 2, 2, 3);
  const sidecars = [writeSidecar(join(state, 'reflections'), 0), writeSidecar(join(state, 'reflections'), 1)];
  return { state, events, sidecars };
}
const TOTAL = 20 + 2 + 4 + 12; // log records (events + sidecars) + spans

/** Every record id in the log was received at least once, and each is marked exactly once. */
function expectAllDeliveredOnce(state: string, ...rs: Receiver[]): void {
  const received = new Set(rs.flatMap((r) => [...r.logs(), ...r.spans()].map((x) => x.recordId)));
  const marked = marks(state).map((m) => m.record_id);
  expect(marked).toHaveLength(TOTAL);
  expect(new Set(marked).size).toBe(TOTAL);
  for (const id of marked) expect(received.has(id)).toBe(true);
  expect(received.size).toBe(TOTAL);
}

describe('export: the real protocol', () => {
  it('http/protobuf: sidecars and events as log records, turns and tool calls as spans, each once', async () => {
    const { state, sidecars } = fixture();
    const r = await receiver();
    const run = await cli(['export', '--endpoint', r.url, '--json'], { FORGE_DIR: state });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({ protocol: 'http/protobuf', pending: { sidecars: 2, events: 20, turns: 4, spans: 16 }, marked: TOTAL });
    expect(r.requests.map((q) => [q.path, q.contentType])).toEqual([
      ['/v1/logs', 'application/x-protobuf'],
      ['/v1/traces', 'application/x-protobuf'],
    ]);

    const logs = r.logs();
    expect(logs).toHaveLength(22);
    expect(new Set(logs.map((l) => l.recordId)).size).toBe(22);
    for (const l of logs) expect(l.resource['service.name']).toBe('forge-reflect');

    const side = logs.filter((l) => l.attributes['forge_reflect.record.kind'] === 'sidecar');
    expect(side).toHaveLength(2);
    const s0 = side.find((l) => l.attributes['session.id'] === SESSION(0));
    expect(s0?.attributes).toMatchObject({
      'gen_ai.agent.name': 'claude-code',
      'vcs.repository.name': 'acme-app',
      'forge_reflect.task_ref': 'acme#0',
      'forge_reflect.risk.surface': 'auth',
      'forge_reflect.risk.score': 0.9,
      'forge_reflect.risk.needs_review': true,
      'forge_reflect.confidence': 0.7,
      'forge_reflect.degraded': false,
      'forge_reflect.files_changed': ['src/auth/token.ts'],
    });
    expect(s0?.eventName).toBe('forge_reflect.reflection');
    expect(JSON.parse(String(s0?.body))).toEqual(sidecars[0]);
    expect(s0?.timeUnixNano).toBe(String(Date.parse('2026-11-22T10:00:00Z') * 1_000_000));

    const events = logs.filter((l) => l.attributes['forge_reflect.record.kind'] === 'event');
    expect(events).toHaveLength(20);
    const byType = (t: string) => events.filter((e) => e.attributes['forge_reflect.event.type'] === t);
    expect(byType('prompt.submitted')).toHaveLength(4);
    expect(byType('tool.executed')).toHaveLength(12);
    expect(byType('turn.stopped')).toHaveLength(4);
    const edit = byType('tool.executed').find((e) => e.attributes['gen_ai.tool.name'] === 'Edit');
    expect(edit?.attributes).toMatchObject({
      'session.id': expect.stringMatching(/^sess-/),
      'forge_reflect.runtime': 'claude-code',
      'code.file.path': expect.stringMatching(/src\/f\d\.ts$/),
      'gen_ai.tool.call.id': expect.stringMatching(/^toolu_/),
    });
    expect(JSON.parse(String(byType('prompt.submitted')[0]?.body)).prompt).toMatch(/^add validation/);

    const spans = r.spans();
    const turns = spans.filter((s) => s.attributes['forge_reflect.record.kind'] === 'turn');
    const tools = spans.filter((s) => s.attributes['forge_reflect.record.kind'] === 'tool_call');
    expect(turns).toHaveLength(4);
    expect(tools).toHaveLength(12);
    for (const t of tools) {
      const parent = turns.find((p) => p.spanId === t.parentSpanId);
      expect(parent).toBeDefined();
      expect(t.traceId).toBe(parent?.traceId);
      expect(t.attributes['session.id']).toBe(parent?.attributes['session.id']);
      expect(BigInt(t.endTimeUnixNano) - BigInt(t.startTimeUnixNano)).toBeGreaterThanOrEqual(100_000_000n);
      expect(BigInt(t.startTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(parent?.startTimeUnixNano ?? 0));
      expect(t.attributes['gen_ai.operation.name']).toBe('execute_tool');
    }
    for (const t of turns) expect(t.parentSpanId).toBe('');
    expect(new Set(turns.map((t) => t.traceId)).size).toBe(4);

    expectAllDeliveredOnce(state, r);
    const again = await cli(['export', '--endpoint', r.url, '--json'], { FORGE_DIR: state });
    expect(JSON.parse(again.stdout)).toMatchObject({ pending: { sidecars: 0, events: 0, turns: 0 }, marked: 0 });
    expect(r.requests).toHaveLength(2);
  });

  it('http/json through the standard OTEL_ variables: paths, headers, service name, resource attributes', async () => {
    const { state } = fixture();
    const r = await receiver();
    const run = await cli(['export'], {
      FORGE_DIR: state,
      OTEL_EXPORTER_OTLP_ENDPOINT: `${r.url}/otlp/`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-team=forge,authorization=Bearer%20t0k',
      OTEL_SERVICE_NAME: 'team-agents',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=dev,team=platform',
    });
    expect(run.code).toBe(0);
    expect(r.requests.map((q) => [q.path, q.contentType])).toEqual([
      ['/otlp/v1/logs', 'application/json'],
      ['/otlp/v1/traces', 'application/json'],
    ]);
    expect(r.requests[0]?.headers['x-team']).toBe('forge');
    expect(r.requests[0]?.headers.authorization).toBe('Bearer t0k');
    expect(r.logs()).toHaveLength(22);
    expect(r.spans()).toHaveLength(16);
    expect(r.logs()[0]?.resource).toMatchObject({ 'service.name': 'team-agents', 'deployment.environment.name': 'dev', team: 'platform' });
    const tool = r.spans().find((s) => s.attributes['forge_reflect.record.kind'] === 'tool_call');
    expect(r.spans().some((s) => s.spanId === tool?.parentSpanId && s.traceId === tool?.traceId)).toBe(true);
    expectAllDeliveredOnce(state, r);
  });

  it('per-signal endpoints are used as given; --endpoint and --protocol override the environment', async () => {
    const { state } = fixture();
    const logsR = await receiver();
    const tracesR = await receiver();
    const run = await cli(['export'], {
      FORGE_DIR: state,
      OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: `${logsR.url}/custom/logs`,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${tracesR.url}/custom/traces`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(logsR.requests.map((q) => q.path)).toEqual(['/custom/logs']);
    expect(tracesR.requests.map((q) => q.path)).toEqual(['/custom/traces']);
    expect(logsR.logs()).toHaveLength(22);
    expect(tracesR.spans()).toHaveLength(16);
    const flag = await receiver();
    const state2 = fixture().state;
    const run2 = await cli(['export', '--endpoint', flag.url, '--protocol', 'http/protobuf'], {
      FORGE_DIR: state2,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/unused',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    });
    expect(run2.code).toBe(0);
    expect(flag.requests.map((q) => q.contentType)).toEqual(['application/x-protobuf', 'application/x-protobuf']);
  });
});

describe('export: faults end with every record received and marked exactly once', () => {
  it('receiver down: exit 1 naming the endpoint, nothing marked; the next export sends everything', async () => {
    const { state } = fixture();
    const gone = await startReceiver();
    const url = gone.url;
    await gone.close(); // the port is now closed: connection refused
    const down = await cli(['export', '--endpoint', url, '--timeout', '1'], { FORGE_DIR: state });
    expect(down.code).toBe(1);
    expect(down.stderr.trim().split('\n')).toHaveLength(1);
    expect(down.stderr).toContain(`${url}/v1/logs`);
    expect(marks(state)).toHaveLength(0);
    const r = await receiver();
    expect((await cli(['export', '--endpoint', r.url], { FORGE_DIR: state })).code).toBe(0);
    expectAllDeliveredOnce(state, r);
  });

  it('500 then 200: the batch is retried and marked once', async () => {
    const { state } = fixture();
    const r = await receiver((n) => ({ status: n === 0 ? 500 : 200 }));
    const run = await cli(['export', '--endpoint', r.url, '--json'], { FORGE_DIR: state });
    expect(run.code).toBe(0);
    expect(r.requests.map((q) => q.path)).toEqual(['/v1/logs', '/v1/logs', '/v1/traces']);
    expect(JSON.parse(run.stdout).sent.attempts).toBe(3);
    expectAllDeliveredOnce(state, r);
  });

  it('429 and 503 are retried too', async () => {
    const { state } = fixture();
    const r = await receiver((n) => ({ status: n === 0 ? 429 : n === 1 ? 503 : 200 }));
    expect((await cli(['export', '--endpoint', r.url], { FORGE_DIR: state })).code).toBe(0);
    expect(r.requests).toHaveLength(4);
    expectAllDeliveredOnce(state, r);
  });

  it('a receiver slower than the budget: exit 1, nothing marked; the records it got are resent next time', async () => {
    const { state } = fixture();
    const slow = await receiver(() => 'hang');
    const run = await cli(['export', '--endpoint', slow.url, '--timeout', '1'], { FORGE_DIR: state });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/did not accept the export within 1 s \(timed out\)/);
    expect(slow.logs().length).toBeGreaterThan(0); // it received them, but never acknowledged
    expect(marks(state)).toHaveLength(0);
    const r = await receiver();
    expect((await cli(['export', '--endpoint', r.url], { FORGE_DIR: state })).code).toBe(0);
    expectAllDeliveredOnce(state, slow, r);
    expect(r.logs()).toHaveLength(22); // all resent: none had been acknowledged
  });

  it('SIGKILL while the third batch is in flight: the two acknowledged batches stay marked, the rest is resent', async () => {
    const { state } = fixture();
    let child: ChildProcess | undefined;
    const first = await receiver((n) => {
      if (n < 2) return { status: 200 };
      child?.kill('SIGKILL'); // deterministic: the exporter dies with request 3 unanswered
      return 'hang';
    });
    const killed = await cli(['export', '--endpoint', first.url, '--batch-size', '5'], { FORGE_DIR: state }, (c) => (child = c));
    expect(killed.signal).toBe('SIGKILL');
    const acked = first.requests.slice(0, 2).flatMap((q) => q.logs.map((l) => l.recordId));
    expect(acked).toHaveLength(10);
    expect(
      marks(state)
        .map((m) => m.record_id)
        .sort(),
    ).toEqual([...acked].sort());
    const r = await receiver();
    expect((await cli(['export', '--endpoint', r.url, '--batch-size', '5'], { FORGE_DIR: state })).code).toBe(0);
    const resent = r.logs().map((l) => l.recordId);
    for (const id of acked) expect(resent).not.toContain(id);
    for (const id of first.requests[2]?.logs.map((l) => l.recordId) ?? []) expect(resent).toContain(id);
    expectAllDeliveredOnce(state, first, r);
  });

  it('credentials in the endpoint URL go as Basic auth and are never printed or stored', async () => {
    const { state } = fixture();
    const r = await receiver(() => ({ status: 401 }));
    const url = r.url.replace('http://', 'http://deploy:S3cretPassw0rd@');
    const run = await cli(['export', '--endpoint', url], { FORGE_DIR: state });
    expect(run.code).toBe(1);
    expect(r.requests[0]?.headers.authorization).toBe(`Basic ${Buffer.from('deploy:S3cretPassw0rd').toString('base64')}`);
    expect(run.stderr).toContain(`${r.url}/v1/logs refused the export with HTTP 401`);
    expect(run.stderr).not.toContain('S3cretPassw0rd');
  });

  it('a refusing endpoint: one line naming it and the status, exit 1, nothing marked', async () => {
    const { state } = fixture();
    const r = await receiver(() => ({ status: 400 }));
    const run = await cli(['export', '--endpoint', r.url], { FORGE_DIR: state });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain(`${r.url}/v1/logs refused the export with HTTP 400`);
    expect(r.requests).toHaveLength(1);
    expect(marks(state)).toHaveLength(0);
  });
});

describe('export: bad input, dry run, secrets', () => {
  it.each([
    [['--endpoint', 'not a url'], /--endpoint "not a url" is not a URL; give an http:\/\/ or https:\/\/ URL/],
    [['--endpoint', 'ftp://collector:21'], /is not an http\(s\) URL/],
    [['--endpoint', 'http://127.0.0.1:4318', '--protocol', 'grpc'], /--protocol "grpc" is not a supported protocol; use http\/protobuf or http\/json/],
  ])('%j is a usage error (exit 2)', async (args, message) => {
    const { state } = fixture();
    const run = await cli(['export', ...args], { FORGE_DIR: state });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(marks(state)).toHaveLength(0);
  });

  it('a bad OTEL_EXPORTER_OTLP_PROTOCOL is a usage error too; no endpoint at all says how to give one', async () => {
    const { state } = fixture();
    const bad = await cli(['export'], { FORGE_DIR: state, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/OTEL_EXPORTER_OTLP_PROTOCOL "grpc" is not a supported protocol; use http\/protobuf or http\/json/);
    const none = await cli(['export'], { FORGE_DIR: state });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no OTLP endpoint: pass --endpoint/);
  });

  it('--dry-run counts and sends nothing, marks nothing', async () => {
    const { state } = fixture();
    const r = await receiver();
    const run = await cli(['export', '--endpoint', r.url, '--dry-run', '--json'], { FORGE_DIR: state });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ dry_run: true, pending: { sidecars: 2, events: 20, turns: 4, spans: 16 }, marked: 0 });
    expect(r.requests).toHaveLength(0);
    expect(marks(state)).toHaveLength(0);
    const since = await cli(['export', '--dry-run', '--json', '--since', '2099-01-01'], { FORGE_DIR: state });
    expect(JSON.parse(since.stdout).pending).toEqual({ sidecars: 0, events: 0, turns: 0, spans: 0 });
  });

  it("a secret in a prompt and in a sidecar's self-reported text never reaches the receiver", async () => {
    const state = tempDir('forge-otlp-secret-');
    const key = (SELF_EVIDENT[0] as { value: string }).value;
    const gh = (SELF_EVIDENT.find((s) => s.kind === 'github_token') as { value: string }).value;
    seedSessions(state, 1, 1, 1, `deploy with ${key} please`);
    writeSidecar(join(state, 'reflections'), 0, {
      most_likely_wrong: { surface: 'auth', description: `the token ${gh} may leak` },
      known_not_in_diff: `staging password=${'Hunter2' + 'Secret9'} is shared`,
    });
    for (const protocol of ['http/protobuf', 'http/json']) {
      const r = await receiver();
      const s2 = protocol === 'http/json' ? tempDir('forge-otlp-secret-') : state;
      if (s2 !== state) {
        seedSessions(s2, 1, 1, 1, `deploy with ${key} please`);
        writeSidecar(join(s2, 'reflections'), 0, {
          most_likely_wrong: { surface: 'auth', description: `the token ${gh} may leak` },
          known_not_in_diff: `staging password=${'Hunter2' + 'Secret9'} is shared`,
        });
      }
      expect((await cli(['export', '--endpoint', r.url, '--protocol', protocol], { FORGE_DIR: s2 })).code).toBe(0);
      const raw = Buffer.concat(r.requests.map((q) => q.raw)).toString('latin1');
      expect(raw).not.toContain(key);
      expect(raw).not.toContain(gh);
      expect(raw).not.toContain('Hunter2Secret9');
      const sidecarBody = JSON.parse(String(r.logs().find((l) => l.attributes['forge_reflect.record.kind'] === 'sidecar')?.body));
      expect(sidecarBody.most_likely_wrong.description).toMatch(/\[REDACTED:github_token\]/);
      const prompt = r.logs().find((l) => l.attributes['forge_reflect.event.type'] === 'prompt.submitted');
      expect(String(prompt?.body)).toMatch(/\[REDACTED:anthropic_key\]/);
    }
  });
});

describe('export after ingest (what the Stop hook starts)', () => {
  it('export.endpoint in .forge/config.json: ingest exports everything, once', async () => {
    const { state } = fixture();
    const r = await receiver();
    writeFileSync(join(state, 'config.json'), JSON.stringify({ export: { endpoint: r.url, protocol: 'http/json' } }));
    const run = await cli(['ingest'], { FORGE_DIR: state });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^drained 20,/);
    expect(r.requests.map((q) => q.contentType)).toEqual(['application/json', 'application/json']);
    expectAllDeliveredOnce(state, r);
  });

  it('OTEL env alone does not export; with FORGE_EXPORT=on it does; FORGE_EXPORT=off wins over the config', async () => {
    const { state } = fixture();
    const r = await receiver();
    await cli(['ingest'], { FORGE_DIR: state, OTEL_EXPORTER_OTLP_ENDPOINT: r.url });
    expect(r.requests).toHaveLength(0);
    writeFileSync(join(state, 'config.json'), JSON.stringify({ export: { endpoint: r.url } }));
    await cli(['ingest'], { FORGE_DIR: state, FORGE_EXPORT: 'off' });
    expect(r.requests).toHaveLength(0);
    writeFileSync(join(state, 'config.json'), '{}');
    await cli(['ingest'], { FORGE_DIR: state, OTEL_EXPORTER_OTLP_ENDPOINT: r.url, FORGE_EXPORT: 'on' });
    expectAllDeliveredOnce(state, r);
  });

  it('a failing automatic export does not fail the ingest; it says so in one line and leaves records pending', async () => {
    const { state } = fixture();
    const r = await receiver(() => ({ status: 403 }));
    writeFileSync(join(state, 'config.json'), JSON.stringify({ export: { endpoint: r.url } }));
    const run = await cli(['ingest'], { FORGE_DIR: state });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/export after ingest: the OTLP endpoint .* refused the export with HTTP 403/);
    expect(marks(state)).toHaveLength(0);
  });
});

describe('export: one at a time', () => {
  it('a second export while one is in flight sends nothing and says so; the first still marks once', async () => {
    const { state } = fixture();
    let second: Run | undefined;
    const r = await receiver(async (n) => {
      // hold the first export's first request until a second export has run to its end
      if (n === 0) second = await cli(['export', '--endpoint', 'http://127.0.0.1:9', '--json'], { FORGE_DIR: state });
      return { status: 200 };
    });
    const first = await cli(['export', '--endpoint', r.url, '--timeout', '60'], { FORGE_DIR: state });
    expect(first.code).toBe(0);
    expect(second?.code).toBe(0);
    expect(JSON.parse(second?.stdout ?? '{}')).toMatchObject({ locked: true, marked: 0 });
    expectAllDeliveredOnce(state, r);
  });
});

describe('export from the real Stop hook', () => {
  it('the hook returns at once; the ingest it starts exports the new sidecar and the spooled events in the background', async () => {
    const repo = tempDir('forge-otlp-repo-');
    const git = (...args: string[]) => spawn('git', args, { cwd: repo, stdio: 'ignore' });
    await new Promise((r) => git('init', '-q').on('close', r));
    const state = join(repo, '.forge');
    mkdirSync(state, { recursive: true });
    seedSessions(state, 1, 1, 2);
    let release: (() => void) | undefined;
    const held = new Promise<void>((r) => (release = r));
    const r = await receiver(async () => {
      await held; // the first request waits until the hook has returned
      return { status: 200 };
    });
    writeFileSync(join(state, 'config.json'), JSON.stringify({ export: { endpoint: r.url } }));
    const payload = JSON.stringify({ session_id: 'stop-e2e', cwd: repo, hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'done' });
    const hook = await new Promise<Run>((resolve) => {
      const child = spawn(join(KIT, 'hooks', 'reflect-stop-hook.sh'), [], {
        cwd: repo,
        env: {
          ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(REFLECTION_|FORGE_|OTEL_)/.test(k))),
          REFLECTION_MODE: 'solo',
          FORGE_DIR: state,
          FORGE_REFLECT_CLI: CLI,
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stdin.end(payload);
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr: '' }));
    });
    expect(hook.code).toBe(0);
    expect(hook.stdout).toBe('');
    release?.();
    const deadline = Date.now() + 45_000;
    const sidecarSent = () => r.logs().some((l) => l.attributes['forge_reflect.record.kind'] === 'sidecar' && l.attributes['session.id'] === 'stop-e2e');
    while (!(sidecarSent() && r.spans().some((s) => s.attributes['session.id'] === SESSION(0))) && Date.now() < deadline)
      await new Promise((w) => setTimeout(w, 100));
    expect(sidecarSent()).toBe(true);
    expect(r.logs().filter((l) => l.attributes['forge_reflect.record.kind'] === 'event').length).toBeGreaterThanOrEqual(4);
    const turns = r.spans().filter((s) => s.attributes['forge_reflect.record.kind'] === 'turn');
    expect(turns.filter((s) => s.attributes['session.id'] === SESSION(0))).toHaveLength(1);
    expect(new Set(turns.map((s) => s.recordId)).size).toBe(turns.length);
  });
});
