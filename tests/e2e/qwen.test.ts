/**
 * The kit in the real Qwen Code (0.24.4, `qwen --yolo -o json`), against a scripted Chat
 * Completions API on 127.0.0.1, in scratch repos (paths with spaces) with the kit installed by
 * `forge-reflect install --runtime qwen` from its packed tarball.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { qwenFailureExitCode } from '../../packages/forge-reflect/src/runtimes/qwen.js';
import { chatCompletionsRoute, type ChatTurn } from './support/chat-completions-mock.js';
import { startMockServer, type MockServer } from './support/mock-server.js';
import {
  answerWith,
  eventsOf,
  expectAuthTurnSidecar,
  expectEachEventOnce,
  expectEventsAsRecords,
  expectOnlySession,
  type Json,
  payloadOf,
  sidecarsOf,
  treeBytes,
} from './support/records.js';
import { runQwen, type QwenRun } from './support/run-qwen.js';
import { installKit, makeScratchRepo, type ScratchRepo } from './support/scratch.js';

let repo: ScratchRepo | undefined;
let mock: MockServer | undefined;
afterEach(async () => {
  await mock?.close();
  repo?.cleanup();
  repo = undefined;
  mock = undefined;
});

/** write_file takes an absolute path in Qwen. */
function script(dir: string): ChatTurn[] {
  return [
    [{ type: 'tool', name: 'write_file', args: { file_path: join(dir, 'src', 'auth', 'token.ts'), content: 'export const rotate = () => 1;\n' } }],
    [{ type: 'tool', name: 'run_shell_command', args: { command: 'exit 3', description: 'a failing check', is_background: false } }],
    [{ type: 'tool', name: 'run_shell_command', args: { command: 'echo tests pass', description: 'run the tests', is_background: false } }],
    [{ type: 'text', text: answerWith('Added token rotation in src/auth/token.ts.') }],
  ];
}

async function session(env: NodeJS.ProcessEnv, userHooks?: Record<string, unknown>): Promise<QwenRun> {
  const turns = script(repo!.dir);
  mock = await startMockServer([chatCompletionsRoute(turns)]);
  const run = await runQwen({ cwd: repo!.dir, mockUrl: mock.url, prompt: 'Add token rotation', env, userHooks });
  expect(run.status, `qwen exited ${run.status}: ${run.stderr.slice(-2000)}`).toBe(0);
  expect(mock.violations.map((v) => `${v.method} ${v.path}`)).toEqual([]);
  expect(mock.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(turns.length);
  expect(run.result).toContain('```reflection');
  return run;
}

/** The recorded session, as every test here wants it: one turn, its tools typed, all of it qwen's. */
function expectSessionRecorded(run: QwenRun): void {
  expect(run.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  expectAuthTurnSidecar(repo!, run.sessionId, 'qwen');

  const log = eventsOf(repo!);
  expectEventsAsRecords(repo!, log);
  const tools = log.filter((e) => e.type === 'tool.failed' || e.type === 'tool.executed');
  expect(tools.map((e) => `${e.type} ${e.tool_name}`)).toEqual([
    'tool.executed write_file',
    'tool.failed run_shell_command',
    'tool.executed run_shell_command',
  ]);
  const failed = tools[1] as Json;
  expect(failed.hook_event).toBe('PostToolUseFailure');
  expect(qwenFailureExitCode(payloadOf(failed))).toBe(3);
  // One prompt; the three model calls after tool results are the same turn going on.
  expect(log.filter((e) => e.type === 'prompt.submitted')).toHaveLength(1);
  expect(log.filter((e) => e.type === 'turn.continued')).toHaveLength(3);
  expect(log.filter((e) => e.type === 'turn.stopped')).toHaveLength(1);
  expect(log.filter((e) => e.type === 'reflection.written')).toHaveLength(1);
  expect(log.filter((e) => e.type === 'session.started')).toHaveLength(1);
  expectOnlySession(log, run.sessionId, 'qwen');
  // Each event once: no two rows of the same event (same hook event, same payload time and tool call).
  expectEachEventOnce(log, (e) => `${e.hook_event} ${e.tool_use_id} ${payloadOf(e)?.timestamp}`);
}

/** The kit's Claude Code hooks as installed in the repo, for a user's ~/.qwen/settings.json. */
function claudeHooksOf(r: ScratchRepo): Record<string, unknown> {
  return (JSON.parse(readFileSync(join(r.dir, '.claude', 'settings.json'), 'utf8')) as { hooks: Record<string, unknown> }).hooks;
}

describe('Qwen Code, real client', () => {
  it('records the session: write_file to an auth file, a failing and a passing shell command, the self-report in the final answer', async () => {
    repo = makeScratchRepo();
    installKit(repo, ['qwen']);
    expect(existsSync(join(repo.dir, '.claude', 'settings.json'))).toBe(false);
    const run = await session({ REFLECTION_MODE: 'solo' });
    expectSessionRecorded(run);
    // Qwen migrated the settings file install created (it adds `$version`); uninstall still takes the kit out.
    const r = repo.cli(['uninstall', '--runtime', 'qwen']);
    expect(r.status, r.stderr).toBe(0);
    const left = existsSync(join(repo.dir, '.qwen', 'settings.json')) ? readFileSync(join(repo.dir, '.qwen', 'settings.json'), 'utf8') : '';
    expect(left).not.toContain('forge-reflect');
    // What is left is Qwen's own migration stamp, not the kit's: the file is no longer what install wrote.
    expect(left).toBe('{\n  "$version": 4\n}\n');
  });

  it('with the mode unset nothing is recorded; uninstall gives back the files byte for byte', async () => {
    repo = makeScratchRepo();
    // As Qwen writes it: a settings file without `$version` is migrated (rewritten) at Qwen's first
    // start, which no uninstall can undo byte for byte.
    repo.write('.qwen/settings.json', '{\n  "ui": {\n    "theme": "GitHub"\n  },\n  "$version": 4\n}\n');
    const before = { qwen: treeBytes(repo, '.qwen'), claude: treeBytes(repo, '.claude') };
    installKit(repo, ['qwen']);
    expect(readFileSync(join(repo.dir, '.qwen', 'settings.json'), 'utf8')).toContain('reflect-stop-hook.sh qwen');
    await session({});
    expect(existsSync(join(repo.dir, 'src', 'auth', 'token.ts'))).toBe(true);
    expect(sidecarsOf(repo)).toEqual([]);
    expect(existsSync(join(repo.dir, '.forge', 'spool'))).toBe(false);
    const r = repo.cli(['uninstall', '--runtime', 'qwen']);
    expect(r.status, r.stderr).toBe(0);
    expect({ qwen: treeBytes(repo, '.qwen'), claude: treeBytes(repo, '.claude') }).toEqual(before);
  });

  it("the kit registered for Claude Code and Qwen in one repo, and Claude's hooks in the user's Qwen settings too: each event once, as qwen", async () => {
    repo = makeScratchRepo();
    installKit(repo, ['claude-code', 'qwen']);
    const run = await session({ REFLECTION_MODE: 'solo' }, claudeHooksOf(repo));
    expectSessionRecorded(run);
  });

  it("Qwen running only the kit's Claude Code registration: stored as qwen", async () => {
    repo = makeScratchRepo();
    installKit(repo, ['claude-code']);
    const run = await session({ REFLECTION_MODE: 'solo' }, claudeHooksOf(repo));
    expectSessionRecorded(run);
  });
});
