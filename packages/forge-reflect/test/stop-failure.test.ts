/**
 * A turn that ends on a model error: Claude Code and Qwen Code fire StopFailure instead of Stop,
 * Cline TaskError instead of TaskComplete. The registrations install writes run the real Stop hook
 * the way each client does; the turn gets its sidecar, degraded (the payload's last message is the
 * API error's text, never read for a self-report), one turn.stopped row under the error event, and
 * the error named in reflection.written's self_report_note.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupTempDirs, CLI, KIT_ROOT, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const FIXTURES = join(KIT_ROOT, 'tests', 'fixtures');
const CLAUDE_FAILURE = JSON.parse(readFileSync(join(FIXTURES, 'payloads', 'stop-failure.json'), 'utf8')) as Json;
const QWEN_FAILURE = JSON.parse(readFileSync(join(FIXTURES, 'runtimes', 'qwen', 'model-error-StopFailure.json'), 'utf8')) as Json;
const QWEN_ENV = JSON.parse(readFileSync(join(FIXTURES, 'runtimes', 'qwen', 'hook-env.json'), 'utf8')) as Record<string, string>;
const BLOCK = '```reflection\n{"confidence": 0.9, "most_likely_wrong": {"surface": "none", "description": "nothing"}, "known_not_in_diff": "x"}\n```';

function cli(args: string[], cwd: string) {
  const base = { ...process.env };
  for (const key of Object.keys(base)) if (/^(REFLECTION_|FORGE_|CLAUDE_|GEMINI_|QWEN_)/.test(key)) delete base[key];
  return spawnSync(process.execPath, [CLI, ...args], { cwd, env: { ...base, NO_COLOR: '1', FORGE_REFLECT_CLI: 'off' }, encoding: 'utf8' });
}

function installed(runtime: string): string {
  const dir = join(tempDir('forge stopfail '), 'repo');
  mkdirSync(dir, { recursive: true });
  spawnSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
  const r = cli(['install', '--runtime', runtime], dir);
  expect(r.status, r.stderr).toBe(0);
  return dir;
}

/** The registered StopFailure command, run as the client runs it (`sh -c` / `bash -c`, its hook environment). */
function fireStopFailure(runtime: 'claude-code' | 'qwen', dir: string, payload: Json) {
  const file = runtime === 'qwen' ? '.qwen/settings.json' : '.claude/settings.json';
  const hooks = JSON.parse(readFileSync(join(dir, file), 'utf8')).hooks as Record<
    string,
    Array<{ matcher?: string; hooks: Array<{ command: string; timeout: number }> }>
  >;
  expect(hooks.StopFailure).toHaveLength(1);
  expect(hooks.StopFailure?.[0]?.matcher).toBeUndefined();
  const command = hooks.StopFailure?.[0]?.hooks[0]?.command as string;
  expect(command).toMatch(/reflect-stop-hook\.sh (claude-code|qwen)/);
  const mark = randomBytes(8).toString('hex');
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: dir, REFLECTION_MODE: 'solo', FORGE_REFLECT_CLI: 'off', STOP_FAILURE_MARK: mark };
  const env =
    runtime === 'qwen'
      ? { ...base, ...QWEN_ENV, QWEN_PROJECT_DIR: dir, CLAUDE_PROJECT_DIR: dir, GEMINI_PROJECT_DIR: dir, PWD: dir }
      : { ...base, CLAUDE_PROJECT_DIR: dir };
  const r = spawnSync(runtime === 'qwen' ? 'bash' : 'sh', ['-c', command], {
    cwd: dir,
    env,
    input: JSON.stringify({ ...payload, cwd: dir }),
    encoding: 'utf8',
  });
  // Claude's StopFailure hook runs in a session of its own (setsid): its command returns first.
  const until = Date.now() + 15_000;
  while (running(mark) && Date.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  return r;
}

/** Whether a process with MARK in its environment still runs (none known without /proc). */
function running(mark: string): boolean {
  if (!existsSync('/proc/self/environ')) return false;
  return readdirSync('/proc').some((pid) => {
    try {
      return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`STOP_FAILURE_MARK=${mark}`);
    } catch {
      return false;
    }
  });
}

function sidecars(dir: string): Json[] {
  const folder = join(dir, '.forge', 'reflections');
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((n) => n.endsWith('.reflection.json'))
    .map((n) => JSON.parse(readFileSync(join(folder, n), 'utf8')) as Json);
}

function events(dir: string): Json[] {
  const r = cli(['events', '--json', '--limit', '100'], dir);
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Json[];
}

const CASES = [
  ['claude-code', CLAUDE_FAILURE, /the turn ended on an error \(StopFailure: rate_limit: 429 Too Many Requests\)/],
  ['qwen', QWEN_FAILURE, /the turn ended on an error \(StopFailure: rate_limit: 429 mock: scripted HTTP 429\)/],
] as const;

describe.each(CASES)('StopFailure in %s (a turn that ends on a model error)', (runtime, payload, note) => {
  it('gets its sidecar, degraded; one turn.stopped row under StopFailure; the error in reflection.written; exit 0, silent', () => {
    const dir = installed(runtime);
    // An error text that happens to hold a reflection block is still no self-report.
    const r = fireStopFailure(runtime, dir, { ...payload, last_assistant_message: `${payload.last_assistant_message}\n${BLOCK}` });
    expect([r.status, r.stdout]).toEqual([0, '']);
    const all = sidecars(dir);
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ agent: runtime, session_id: payload.session_id, confidence: null, most_likely_wrong: null });
    expect(all[0]!.provenance.degraded).toBe(true);
    const log = events(dir);
    expect(log.every((e) => e.runtime === runtime)).toBe(true);
    const stopped = log.filter((e) => e.type === 'turn.stopped');
    expect(stopped.map((e) => e.hook_event)).toEqual(['StopFailure']);
    const written = log.filter((e) => e.type === 'reflection.written');
    expect(written).toHaveLength(1);
    expect(written[0]!.payload).toMatchObject({ degraded: true, self_report: 'absent', self_report_source: 'none' });
    expect(written[0]!.payload.self_report_note).toMatch(note);
  });

  it('a self-report file the agent wrote earlier in the turn is merged, and the sidecar is still degraded', () => {
    const dir = installed(runtime);
    const r0 = cli(['self-report', '--confidence', '0.4', '--surface', 'auth', '--wrong', 'half done', '--session', payload.session_id], dir);
    expect(r0.status, r0.stderr).toBe(0);
    const r = fireStopFailure(runtime, dir, payload);
    expect([r.status, r.stdout]).toEqual([0, '']);
    const [sidecar] = sidecars(dir);
    expect(sidecar).toMatchObject({ confidence: 0.4, most_likely_wrong: { surface: 'auth', description: 'half done' } });
    expect(sidecar!.provenance.degraded).toBe(true);
    const written = events(dir).filter((e) => e.type === 'reflection.written');
    expect(written[0]!.payload).toMatchObject({ degraded: true, self_report: 'ok', self_report_source: 'file' });
    expect(written[0]!.payload.self_report_note).toMatch(note);
  });
});

describe("Cline's TaskError", () => {
  it("names the error (its name and message, not the stack) in reflection.written's self_report_note", () => {
    const dir = installed('cline');
    const wrapper = join(dir, '.clinerules', 'hooks', 'TaskError');
    const payload = readFileSync(join(FIXTURES, 'runtimes', 'cline', 'model-error', '002-TaskError.json'), 'utf8');
    const r = spawnSync(wrapper, [], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: dir, REFLECTION_MODE: 'solo', FORGE_REFLECT_CLI: 'off' },
      input: payload,
      encoding: 'utf8',
    });
    expect([r.status, r.stdout]).toEqual([0, '']);
    expect(sidecars(dir)[0]!.provenance.degraded).toBe(true);
    const log = events(dir);
    expect(log.filter((e) => e.type === 'turn.stopped').map((e) => e.hook_event)).toEqual(['TaskError']);
    const note = log.find((e) => e.type === 'reflection.written')?.payload.self_report_note as string;
    expect(note).toBe('the turn ended on an error (TaskError: Error: mock: the model is unavailable): there is no final answer');
  });
});
