/**
 * The kit in the real Cline CLI (3.0.65, `cline --json`, provider openai-compatible), against a
 * scripted Chat Completions API on 127.0.0.1, in scratch repos (paths with spaces) with the kit
 * installed by `forge-reflect install --runtime cline` from its packed tarball.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { clineToolOutcome } from '../../packages/forge-reflect/src/runtimes/cline.js';
import { chatCompletionsRoute, toolResultCount, type ChatTurn } from './support/chat-completions-mock.js';
import { startMockServer, type MockServer, type Route } from './support/mock-server.js';
import {
  answerWith,
  eventsOf,
  expectAuthTurnSidecar,
  expectEachEventOnce,
  expectEventsAsRecords,
  expectOnlySession,
  type Json,
  payloadOf,
  REPORT,
  sidecarsOf,
  treeBytes,
} from './support/records.js';
import { runCline, type ClineRun } from './support/run-cline.js';
import { installKit, makeScratchRepo, type ScratchRepo } from './support/scratch.js';

let repo: ScratchRepo | undefined;
let mock: MockServer | undefined;
afterEach(async () => {
  await mock?.close();
  repo?.cleanup();
  repo = undefined;
  mock = undefined;
});

/** Cline's editor takes an absolute path; run_commands a list of commands. */
function script(dir: string): ChatTurn[] {
  return [
    [{ type: 'tool', name: 'editor', args: { path: join(dir, 'src', 'auth', 'token.ts'), new_text: 'export const rotate = () => 1;\n' } }],
    [{ type: 'tool', name: 'run_commands', args: { commands: ['exit 3'] } }],
    [{ type: 'tool', name: 'run_commands', args: { commands: ['echo tests pass'] } }],
    [{ type: 'text', text: answerWith('Added token rotation in src/auth/token.ts.') }],
  ];
}

async function session(env: NodeJS.ProcessEnv): Promise<ClineRun> {
  const turns = script(repo!.dir);
  mock = await startMockServer([chatCompletionsRoute(turns)]);
  const run = await runCline({ cwd: repo!.dir, mockUrl: mock.url, prompt: 'Add token rotation', env });
  expect(run.status, `cline exited ${run.status}: ${run.stderr.slice(-2000)}`).toBe(0);
  // A hook that printed {"cancel":true} would have aborted the task (still exit 0).
  expect(run.finishReason).toBe('completed');
  expect(run.left.map((p) => p.command)).toEqual([]);
  expect(mock.violations.map((v) => `${v.method} ${v.path}`)).toEqual([]);
  expect(mock.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(turns.length);
  expect(run.result).toContain('```reflection');
  return run;
}

function expectSessionRecorded(run: ClineRun): void {
  expect(run.sessionId).toMatch(/^\d+_[0-9a-z]+$/);
  expectAuthTurnSidecar(repo!, run.sessionId, 'cline');

  const log = eventsOf(repo!);
  expectEventsAsRecords(repo!, log);
  const tools = log.filter((e) => e.type === 'tool.failed' || e.type === 'tool.executed');
  expect(tools.map((e) => `${e.type} ${e.tool_name}`)).toEqual(['tool.executed editor', 'tool.failed run_commands', 'tool.executed run_commands']);
  const failed = tools[1] as Json;
  expect(failed.hook_event).toBe('PostToolUse');
  // Cline says success: true for the tool; the failure and its code are in the per-command output.
  expect(payloadOf(failed).postToolUse.success).toBe(true);
  expect(clineToolOutcome(payloadOf(failed))).toEqual({ failed: true, exitCode: 3 });
  expect(clineToolOutcome(payloadOf(tools[2] as Json))).toEqual({ failed: false, exitCode: null });
  expect(log.filter((e) => e.type === 'session.started').map((e) => e.hook_event)).toEqual(['TaskStart']);
  expect(log.filter((e) => e.type === 'turn.stopped').map((e) => e.hook_event)).toEqual(['TaskComplete']);
  expect(log.filter((e) => e.type === 'reflection.written')).toHaveLength(1);
  expectOnlySession(log, run.sessionId, 'cline');
  // Each event once.
  expectEachEventOnce(log, (e) => `${e.hook_event} ${e.tool_use_id} ${payloadOf(e)?.timestamp}`);
}

describe('Cline CLI, real client', () => {
  it('records the task: an edit of an auth file, a failing and a passing command, the self-report in the final answer', async () => {
    repo = makeScratchRepo();
    installKit(repo, ['cline']);
    expect(existsSync(join(repo.dir, '.claude', 'settings.json'))).toBe(false);
    const run = await session({ REFLECTION_MODE: 'solo' });
    expectSessionRecorded(run);
  });

  it('with the mode unset nothing is recorded; uninstall gives back the files byte for byte', async () => {
    repo = makeScratchRepo();
    repo.write('.clinerules/style.md', 'Prefer small functions.\n');
    const before = { clinerules: treeBytes(repo, '.clinerules'), claude: treeBytes(repo, '.claude') };
    installKit(repo, ['cline']);
    expect(readFileSync(join(repo.dir, '.clinerules', 'hooks', 'TaskComplete'), 'utf8')).toContain('reflect-stop-hook.sh');
    await session({});
    expect(existsSync(join(repo.dir, 'src', 'auth', 'token.ts'))).toBe(true);
    expect(sidecarsOf(repo)).toEqual([]);
    expect(existsSync(join(repo.dir, '.forge', 'spool'))).toBe(false);
    const r = repo.cli(['uninstall', '--runtime', 'cline']);
    expect(r.status, r.stderr).toBe(0);
    expect({ clinerules: treeBytes(repo, '.clinerules'), claude: treeBytes(repo, '.claude') }).toEqual(before);
  });

  it("a spawn_agent subagent: its own TaskStart and TaskComplete are logged as the subagent's, one sidecar for the turn", async () => {
    repo = makeScratchRepo();
    installKit(repo, ['cline']);
    const sub = (r: { messages?: { role?: string; content?: unknown }[] }) => JSON.stringify(r.messages?.[0]?.content ?? '').includes('SUBAGENT-REVIEWER');
    const turns: ChatTurn[] = [
      [{ type: 'tool', name: 'spawn_agent', args: { systemPrompt: 'You are a reviewer (SUBAGENT-REVIEWER).', task: 'Review src/auth.' } }],
      [{ type: 'text', text: answerWith('Reviewed with a subagent.') }],
      [{ type: 'text', text: answerWith('Review: fine.', { ...REPORT, confidence: 0.99 }) }],
    ];
    mock = await startMockServer([chatCompletionsRoute(turns, { turnOf: (body) => (sub(body) ? 2 : Math.min(toolResultCount(body), 1)) })]);
    const run = await runCline({ cwd: repo.dir, mockUrl: mock.url, prompt: 'Review the auth code', env: { REFLECTION_MODE: 'solo' } });
    expect(run.status, run.stderr.slice(-2000)).toBe(0);
    expect(run.finishReason).toBe('completed');
    expect(run.left.map((p) => p.command)).toEqual([]);
    expect(mock.violations).toEqual([]);
    expect(mock.requests.filter((r) => sub(JSON.parse(r.body)))).toHaveLength(1);
    const sidecars = sidecarsOf(repo);
    expect(sidecars.map((s) => [s.agent, s.session_id, s.confidence])).toEqual([['cline', run.sessionId, REPORT.confidence]]);
    const log = eventsOf(repo);
    expectOnlySession(log, run.sessionId, 'cline');
    const stopped = log.filter((e) => e.type === 'subagent.stopped');
    expect(stopped).toHaveLength(1);
    const main = log.find((e) => e.type === 'session.started') as Json;
    expect(stopped[0]!.agent_id).not.toBe(main.agent_id);
    expect(payloadOf(stopped[0]!).parent_agent_id).toBe(main.agent_id);
    expect(log.filter((e) => e.type === 'session.started')).toHaveLength(1);
    expect(log.filter((e) => e.type === 'turn.stopped')).toHaveLength(1);
    expect(log.filter((e) => e.type === 'tool.executed').map((e) => e.tool_name)).toEqual(['spawn_agent']);
  });

  it('a turn that ends on a model error (TaskError, no TaskComplete) still gets its sidecar, degraded, the error in the log', async () => {
    repo = makeScratchRepo();
    installKit(repo, ['cline']);
    const failing: Route = (request, res) => {
      if (request.method !== 'POST' || !request.path.endsWith('/chat/completions')) return false;
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"mock: the model is unavailable","type":"invalid_request_error"}}');
      return true;
    };
    mock = await startMockServer([failing]);
    const run = await runCline({ cwd: repo.dir, mockUrl: mock.url, prompt: 'Add token rotation', env: { REFLECTION_MODE: 'solo' } });
    expect(run.finishReason).toBe('error');
    expect(run.left.map((p) => p.command)).toEqual([]);
    expect(mock.violations).toEqual([]);
    const sidecars = sidecarsOf(repo);
    expect(sidecars).toHaveLength(1);
    expect(sidecars[0]).toMatchObject({ agent: 'cline', session_id: run.sessionId, confidence: null });
    expect(sidecars[0]!.provenance.degraded).toBe(true);
    const log = eventsOf(repo);
    const end = log.filter((e) => e.type === 'turn.stopped');
    expect(end.map((e) => e.hook_event)).toEqual(['TaskError']);
    expect(payloadOf(end[0]!).error.message).toBe('mock: the model is unavailable');
    expect(new Set(log.map((e) => e.runtime))).toEqual(new Set(['cline']));
  });

  it('the kit registered for Claude Code and Cline in one repo: each event once, as cline', async () => {
    repo = makeScratchRepo();
    installKit(repo, ['claude-code', 'cline']);
    const run = await session({ REFLECTION_MODE: 'solo' });
    expectSessionRecorded(run);
  });
});
