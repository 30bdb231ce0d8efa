/**
 * The kit in the real opencode (1.18.33, `opencode run --format json`), against a scripted Chat
 * Completions API on 127.0.0.1, in scratch repos (paths with spaces) with the kit installed by
 * `forge-reflect install --runtime opencode` (the plugin in .opencode/plugins/) from its packed tarball.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { opencodeExitCode } from '../../packages/forge-reflect/src/runtimes/opencode.js';
import { chatCompletionsRoute, type ChatRequest, type ChatTurn } from './support/chat-completions-mock.js';
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
import { runOpencode, stubPluginInstall, type OpencodeRun } from './support/run-opencode.js';
import { installKit, makeScratchRepo, type ScratchRepo } from './support/scratch.js';

let repo: ScratchRepo | undefined;
let mock: MockServer | undefined;
afterEach(async () => {
  await mock?.close();
  repo?.cleanup();
  repo = undefined;
  mock = undefined;
});

/** opencode's write tool takes an absolute filePath. */
function script(dir: string): ChatTurn[] {
  return [
    [{ type: 'tool', name: 'write', args: { filePath: join(dir, 'src', 'auth', 'token.ts'), content: 'export const rotate = () => 1;\n' } }],
    [{ type: 'tool', name: 'bash', args: { command: 'exit 3', description: 'a failing check' } }],
    [{ type: 'tool', name: 'bash', args: { command: 'echo tests pass', description: 'run the tests' } }],
    [{ type: 'text', text: answerWith('Added token rotation in src/auth/token.ts.') }],
  ];
}

const withTools = (body: string) => ((JSON.parse(body) as ChatRequest & { tools?: unknown[] }).tools ?? []).length > 0;

/** opencode's first request is a title side-request without tools: it gets a title, the rest the script. */
function opencodeRoute(turns: ChatTurn[]): Route {
  const main = chatCompletionsRoute(turns);
  const title = chatCompletionsRoute([[{ type: 'text', text: 'Token rotation' }]], { turnOf: () => 0 });
  return (request, res) =>
    request.method === 'POST' && request.path.endsWith('/chat/completions') && !withTools(request.body) ? title(request, res) : main(request, res);
}

async function session(env: NodeJS.ProcessEnv): Promise<OpencodeRun> {
  const turns = script(repo!.dir);
  mock = await startMockServer([opencodeRoute(turns)]);
  const run = await runOpencode({ cwd: repo!.dir, mockUrl: mock.url, prompt: 'Add token rotation', env });
  expect(run.status, `opencode exited ${run.status}: ${run.stderr.slice(-2000)}`).toBe(0);
  expect(mock.violations.map((v) => `${v.method} ${v.path}`)).toEqual([]);
  expect(
    mock.requests.filter((r) => r.path.endsWith('/chat/completions') && withTools(r.body)),
    run.stdout.slice(-3000),
  ).toHaveLength(turns.length);
  expect(run.text).toContain('```reflection');
  // opencode's own startup install did not run in the project (it would fetch from the registry).
  expect(existsSync(join(repo!.dir, '.opencode', 'node_modules', '@opencode-ai'))).toBe(false);
  return run;
}

function expectSessionRecorded(run: OpencodeRun): void {
  expect(run.sessionId).toMatch(/^ses_[0-9A-Za-z]+$/);
  expectAuthTurnSidecar(repo!, run.sessionId, 'opencode');

  const log = eventsOf(repo!);
  expectEventsAsRecords(repo!, log);
  const tools = log.filter((e) => e.type === 'tool.failed' || e.type === 'tool.executed');
  expect(tools.map((e) => `${e.type} ${e.tool_name}`)).toEqual(['tool.executed write', 'tool.failed bash', 'tool.executed bash']);
  const failed = tools[1] as Json;
  expect(failed.hook_event).toBe('tool.execute.after');
  expect(opencodeExitCode(payloadOf(failed))).toBe(3);
  expect(log.filter((e) => e.type === 'prompt.submitted')).toHaveLength(1);
  expect(log.filter((e) => e.type === 'turn.stopped')).toHaveLength(1);
  expect(log.filter((e) => e.type === 'reflection.written')).toHaveLength(1);
  expect(log.filter((e) => e.type === 'session.started')).toHaveLength(1);
  expect(log.filter((e) => e.type === 'event.unknown')).toEqual([]);
  expectOnlySession(log, run.sessionId, 'opencode');
  expectEachEventOnce(log, (e) => `${e.hook_event} ${e.tool_use_id}`);
}

/**
 * A session whose agent hands a shell command to a subagent (opencode's `task` tool, a child
 * session): opencode names the session of each request in x-session-id, so the first session with
 * tools gets `main`, every other one `sub`.
 */
function subagentRoute(main: ChatTurn[], sub: ChatTurn[]): Route {
  let first: string | undefined;
  const routes = {
    main: chatCompletionsRoute(main),
    sub: chatCompletionsRoute(sub),
    title: chatCompletionsRoute([[{ type: 'text', text: 'Subagent' }]], { turnOf: () => 0 }),
  };
  return (request, res) => {
    if (request.method !== 'POST' || !request.path.endsWith('/chat/completions')) return false;
    if (!withTools(request.body)) return routes.title(request, res);
    const session = String(request.headers['x-session-id'] ?? '');
    first ??= session;
    return (session === first ? routes.main : routes.sub)(request, res);
  };
}

describe('opencode, real client', () => {
  it('records the session: write to an auth file, a failing and a passing shell command, the self-report in the final answer', async () => {
    repo = makeScratchRepo();
    installKit(repo, ['opencode']);
    expect(readFileSync(join(repo.dir, '.opencode', 'plugins', 'forge-reflect.js'), 'utf8')).toContain('reflect-stop-hook.sh');
    expect(existsSync(join(repo.dir, '.claude', 'settings.json'))).toBe(false);
    stubPluginInstall(join(repo.dir, '.opencode'));
    const run = await session({ REFLECTION_MODE: 'solo' });
    expectSessionRecorded(run);
    const r = repo.cli(['uninstall', '--runtime', 'opencode']);
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(join(repo.dir, '.opencode', 'plugins'))).toBe(false);
    expect(existsSync(join(repo.dir, '.claude', 'hooks', 'forge-reflect'))).toBe(false);
  });

  it('with the mode unset nothing is recorded; uninstall gives back .opencode/ byte for byte', async () => {
    repo = makeScratchRepo();
    // A project where opencode has run before: its own plugin, its startup install, its .gitignore.
    repo.write('.opencode/plugins/mine.js', 'export const Mine = async () => ({});\n');
    repo.write('.opencode/.gitignore', 'node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore');
    stubPluginInstall(join(repo.dir, '.opencode'));
    const before = { opencode: treeBytes(repo, '.opencode'), claude: treeBytes(repo, '.claude') };
    installKit(repo, ['opencode']);
    await session({});
    expect(existsSync(join(repo.dir, 'src', 'auth', 'token.ts'))).toBe(true);
    expect(sidecarsOf(repo)).toEqual([]);
    expect(existsSync(join(repo.dir, '.forge', 'spool'))).toBe(false);
    const r = repo.cli(['uninstall', '--runtime', 'opencode']);
    expect(r.status, r.stderr).toBe(0);
    expect({ opencode: treeBytes(repo, '.opencode'), claude: treeBytes(repo, '.claude') }).toEqual(before);
  });

  it('the kit registered for Claude Code and opencode in one repo: each event once, as opencode', async () => {
    repo = makeScratchRepo();
    installKit(repo, ['claude-code', 'opencode']);
    stubPluginInstall(join(repo.dir, '.opencode'));
    const run = await session({ REFLECTION_MODE: 'solo' });
    expectSessionRecorded(run);
  });

  it("a subagent's turn: its events under the parent session with the subagent as agent_id, subagent.stopped, one sidecar", async () => {
    repo = makeScratchRepo();
    installKit(repo, ['opencode']);
    stubPluginInstall(join(repo.dir, '.opencode'));
    const main: ChatTurn[] = [
      [{ type: 'tool', name: 'task', args: { description: 'run the tests', prompt: 'Run echo sub and report', subagent_type: 'general' } }],
      [{ type: 'text', text: answerWith('The subagent ran the tests.') }],
    ];
    const sub: ChatTurn[] = [
      [{ type: 'tool', name: 'bash', args: { command: 'echo sub', description: 'run the tests' } }],
      [{ type: 'text', text: 'sub done' }],
    ];
    mock = await startMockServer([subagentRoute(main, sub)]);
    const run = await runOpencode({ cwd: repo.dir, mockUrl: mock.url, prompt: 'Run the tests through a subagent', env: { REFLECTION_MODE: 'solo' } });
    expect(run.status, run.stderr.slice(-2000)).toBe(0);
    expect(mock.violations.map((v) => `${v.method} ${v.path}`)).toEqual([]);
    const sessions = new Set(mock.requests.filter((r) => withTools(r.body)).map((r) => r.headers['x-session-id']));
    expect(sessions.size).toBe(2);
    const child = [...sessions].find((s) => s !== run.sessionId) as string;
    const sidecars = sidecarsOf(repo);
    expect(sidecars).toHaveLength(1);
    expect(sidecars[0]!.session_id).toBe(run.sessionId);
    expect(sidecars[0]!.confidence).toBe(REPORT.confidence);
    const log = eventsOf(repo);
    expect(log.every((e) => e.session_id === run.sessionId && e.runtime === 'opencode')).toBe(true);
    const tools = log.filter((e) => e.type === 'tool.executed');
    expect(tools.map((e) => `${e.tool_name} ${e.agent_id}`).sort()).toEqual([`bash ${child}`, 'task null']);
    const stopped = log.filter((e) => e.type === 'subagent.stopped');
    expect(stopped.map((e) => e.agent_id)).toEqual([child]);
    expect(log.filter((e) => e.type === 'turn.stopped')).toHaveLength(1);
    expect(log.filter((e) => e.type === 'session.started')).toHaveLength(1);
    expect(log.filter((e) => e.type === 'prompt.submitted')).toHaveLength(1);
  });
});
