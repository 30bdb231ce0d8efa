/**
 * The kit in the real GitHub Copilot CLI (1.0.102, `copilot -p … --allow-all-tools`), against a
 * scripted Chat Completions API on 127.0.0.1 (BYOK provider `openai`, COPILOT_OFFLINE=true), in
 * scratch repos (paths with spaces) with the kit installed by `forge-reflect install --runtime
 * copilot` from its packed tarball.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { copilotFailureExitCode } from '../../packages/forge-reflect/src/runtimes/copilot.js';
import { chatCompletionsRoute, toolResultCount, type ChatRequest, type ChatTurn } from './support/chat-completions-mock.js';
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
import { runCopilot, type CopilotRun } from './support/run-copilot.js';
import { installKit, makeScratchRepo, type ScratchRepo } from './support/scratch.js';

let repo: ScratchRepo | undefined;
let mock: MockServer | undefined;
afterEach(async () => {
  await mock?.close();
  repo?.cleanup();
  repo = undefined;
  mock = undefined;
});

/** `create` takes an absolute path and does not make folders: the folder comes first. */
function script(dir: string): ChatTurn[] {
  return [
    [{ type: 'tool', name: 'bash', args: { command: 'mkdir -p src/auth', description: 'make the folder' } }],
    [{ type: 'tool', name: 'create', args: { path: join(dir, 'src', 'auth', 'token.ts'), file_text: 'export const rotate = () => 1;\n' } }],
    [{ type: 'tool', name: 'bash', args: { command: 'exit 3', description: 'a failing check' } }],
    [{ type: 'tool', name: 'bash', args: { command: 'echo tests pass && env > "$HOME/shell-env.txt"', description: 'run the tests' } }],
    [{ type: 'text', text: answerWith('Added token rotation in src/auth/token.ts.') }],
  ];
}

/** The subagent's conversation: its prompt names SUBAGENT-TASK (the main one's never does). */
const SUBAGENT_TURN = 1000;
function isSubagentRequest(body: ChatRequest): boolean {
  return (body.messages ?? []).some((m) => m?.role === 'user' && JSON.stringify(m.content ?? '').includes('SUBAGENT-TASK'));
}

async function session(
  env: NodeJS.ProcessEnv,
  turns: ChatTurn[] = script(repo!.dir),
  options: { routes?: Route[]; status?: number; calls?: number } = {},
): Promise<CopilotRun> {
  const route = chatCompletionsRoute(turns, {
    turnOf: (body) => (isSubagentRequest(body) ? SUBAGENT_TURN : toolResultCount(body)),
    fallback: 'SUBAGENT-RESULT: explored, nothing suspicious.',
  });
  mock = await startMockServer([...(options.routes ?? []), route]);
  const run = await runCopilot({ cwd: repo!.dir, mockUrl: mock.url, prompt: 'Add token rotation', env });
  expect(run.status, `copilot exited ${run.status}: ${run.stderr.slice(-2000)}\n${run.stdout.slice(-2000)}`).toBe(options.status ?? 0);
  // Nothing but the mock: no request it did not expect, and Copilot's own log names no other host.
  expect(mock.violations.map((v) => `${v.method} ${v.path}`)).toEqual([]);
  expect(mock.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(options.calls ?? turns.length);
  const hosts = [...run.log.matchAll(/starting new connection '?Some\("([^"]+)"\)/g)].map((m) => m[1]);
  expect(hosts.filter((h) => h !== '127.0.0.1' && h !== 'localhost')).toEqual([]);
  if (options.status === undefined) expect(run.transcript, `stdout: ${run.stdout.slice(-1500)}\nstderr: ${run.stderr.slice(-1500)}`).toContain('```reflection');
  return run;
}

/** The recorded session: one turn with its self-report, the tools typed, all of it copilot's. */
function expectSessionRecorded(run: CopilotRun): void {
  expect(run.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  expectAuthTurnSidecar(repo!, run.sessionId, 'copilot');

  const log = eventsOf(repo!);
  expectEventsAsRecords(repo!, log);
  expect(new Set(log.map((e) => e.runtime))).toEqual(new Set(['copilot']));
  const tools = log.filter((e) => e.type === 'tool.failed' || e.type === 'tool.executed');
  expect(tools.map((e) => `${e.type} ${e.tool_name}`)).toEqual(['tool.executed Bash', 'tool.executed Write', 'tool.failed Bash', 'tool.executed Bash']);
  const failed = tools[2] as Json;
  expect(failed.hook_event).toBe('PostToolUse');
  expect(copilotFailureExitCode(payloadOf(failed))).toBe(3);
  expect(copilotFailureExitCode(payloadOf(tools[3] as Json))).toBe(0);
  expect(log.filter((e) => e.type === 'prompt.submitted')).toHaveLength(1);
  expect(log.filter((e) => e.type === 'turn.stopped')).toHaveLength(1);
  expect(log.filter((e) => e.type === 'reflection.written')).toHaveLength(1);
  expect(log.filter((e) => e.type === 'session.started')).toHaveLength(1);
  expect(log.every((e) => e.session_id === run.sessionId)).toBe(true);
  // Each event once: no two rows of the same event (same hook event, same payload time and tool).
  expectEachEventOnce(log, (e) => `${e.hook_event} ${e.tool_name} ${payloadOf(e)?.timestamp}`);
}

describe('GitHub Copilot CLI, real client', () => {
  it('records the session: a write to an auth file, a failing and a passing shell command, the self-report in the final answer', async () => {
    repo = makeScratchRepo();
    installKit(repo, ['copilot']);
    expect(existsSync(join(repo.dir, '.claude', 'settings.json'))).toBe(false);
    const run = await session({ REFLECTION_MODE: 'solo' });
    expectSessionRecorded(run);
    // The hooks tell Copilot by COPILOT_CLI=1 with COPILOT_PROJECT_DIR; its shell tool passes on
    // neither, so a runtime started from that shell is not taken for Copilot.
    const shellEnv = readFileSync(join(run.home, 'shell-env.txt'), 'utf8');
    expect(shellEnv).toContain('REFLECTION_MODE=solo');
    expect(shellEnv).not.toMatch(/^COPILOT_PROJECT_DIR=/m);
  });

  it('with the mode unset nothing is recorded; uninstall gives back the files byte for byte', async () => {
    repo = makeScratchRepo();
    repo.write('.github/hooks/theirs.json', '{"version":1,"hooks":{}}\n');
    const before = { github: treeBytes(repo, '.github'), claude: treeBytes(repo, '.claude') };
    installKit(repo, ['copilot']);
    expect(readFileSync(join(repo.dir, '.github', 'hooks', 'forge-reflect.json'), 'utf8')).toContain('reflect-stop-hook.sh copilot');
    await session({});
    expect(existsSync(join(repo.dir, 'src', 'auth', 'token.ts'))).toBe(true);
    expect(sidecarsOf(repo)).toEqual([]);
    expect(existsSync(join(repo.dir, '.forge', 'spool'))).toBe(false);
    const r = repo.cli(['uninstall', '--runtime', 'copilot']);
    expect(r.status, r.stderr).toBe(0);
    expect({ github: treeBytes(repo, '.github'), claude: treeBytes(repo, '.claude') }).toEqual(before);
  });

  it('the kit registered for Claude Code and Copilot in one repo (Copilot runs both): each event once, as copilot', async () => {
    repo = makeScratchRepo();
    installKit(repo, ['claude-code', 'copilot']);
    const run = await session({ REFLECTION_MODE: 'solo' });
    expectSessionRecorded(run);
  });

  it("Copilot running only the kit's Claude Code registration: stored as copilot", async () => {
    repo = makeScratchRepo();
    installKit(repo, ['claude-code']);
    const run = await session({ REFLECTION_MODE: 'solo' });
    expectSessionRecorded(run);
  });

  it("a subagent's turn (the task tool): logged as the subagent's, in the parent session; one sidecar, the session's", async () => {
    repo = makeScratchRepo();
    installKit(repo, ['copilot']);
    const dir = repo.dir;
    const turns: ChatTurn[] = [
      ...script(dir).slice(0, 2),
      [
        {
          type: 'tool',
          name: 'task',
          args: {
            name: 'probe',
            agent_type: 'explore',
            description: 'Explore the repo',
            prompt: 'SUBAGENT-TASK list the files in the repository',
            mode: 'sync',
          },
        },
      ],
      [{ type: 'text', text: answerWith('Added token rotation; a subagent looked around.') }],
    ];
    const run = await session({ REFLECTION_MODE: 'solo' }, turns, { calls: turns.length + 1 });
    const all = sidecarsOf(repo);
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ session_id: run.sessionId, agent: 'copilot', confidence: REPORT.confidence });
    const log = eventsOf(repo);
    expectOnlySession(log, run.sessionId, 'copilot');
    expect(log.filter((e) => e.type === 'turn.stopped').map((e) => e.agent_id)).toEqual([null]);
    const sub = log.filter((e) => e.agent_id !== null && e.agent_id !== undefined);
    expect(sub.length).toBeGreaterThan(0);
    const subagentId = sub[0]!.agent_id as string;
    expect(subagentId).not.toBe(run.sessionId);
    // Its own Stop (under its id, naming the parent) and the parent's SubagentStop: the subagent's rows.
    expect(
      sub
        .filter((e) => e.type === 'subagent.stopped')
        .map((e) => e.hook_event)
        .sort(),
    ).toEqual(['Stop', 'SubagentStop']);
    expect(sub.every((e) => e.agent_id === subagentId)).toBe(true);
    expect(log.filter((e) => e.type === 'prompt.submitted' && (e.agent_id ?? null) === null)).toHaveLength(1);
    expect(log.filter((e) => e.type === 'reflection.written')).toHaveLength(1);
  });

  it('a turn that ends on a model error (HTTP 400: ErrorOccurred, SessionEnd "error", no Stop): its sidecar, degraded, with the reason', async () => {
    repo = makeScratchRepo();
    installKit(repo, ['copilot']);
    const fail: Route = (request, res) => {
      if (request.method !== 'POST' || !request.path.endsWith('/chat/completions')) return false;
      if (toolResultCount(JSON.parse(request.body) as ChatRequest) < 2) return false;
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'mock: scripted bad request', type: 'invalid_request_error', code: 'mock_error' } }));
      return true;
    };
    const run = await session({ REFLECTION_MODE: 'solo' }, script(repo.dir), { routes: [fail], status: 1, calls: 3 });
    const all = sidecarsOf(repo);
    expect(all).toHaveLength(1);
    const sidecar = all[0]!;
    expect(sidecar).toMatchObject({ session_id: run.sessionId, agent: 'copilot', confidence: null, files_changed: ['src/auth/token.ts'] });
    expect(sidecar.provenance.degraded).toBe(true);
    expect(sidecar.risk.surface).toBe('auth');
    const log = eventsOf(repo);
    expect(log.filter((e) => e.type === 'turn.stopped')).toHaveLength(0);
    expect(log.filter((e) => e.type === 'session.ended')).toHaveLength(1);
    expect(log.filter((e) => e.hook_event === 'ErrorOccurred')).toHaveLength(1);
    const written = log.filter((e) => e.type === 'reflection.written');
    expect(written).toHaveLength(1);
    expect(payloadOf(written[0]!).self_report_note).toMatch(/ended on an error/);
  });
});
