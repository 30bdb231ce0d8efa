/**
 * The kit in the real OpenAI Codex CLI (0.169.0, `codex exec`), against a scripted Responses API on
 * 127.0.0.1, in scratch repos (paths with spaces) with the kit installed by
 * `forge-reflect install --runtime codex` from its packed tarball.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startMockServer, type MockServer } from './support/mock-server.js';
import { answerWith, eventsOf, expectAuthTurnSidecar, expectEventsAsRecords, expectOnlySession, sidecarsOf, treeBytes } from './support/records.js';
import { responsesRoute, type CodexTurn } from './support/responses-mock.js';
import { runCodex } from './support/run-codex.js';
import { installKit, makeScratchRepo, type ScratchRepo } from './support/scratch.js';

let repo: ScratchRepo | undefined;
let mock: MockServer | undefined;
afterEach(async () => {
  await mock?.close();
  repo?.cleanup();
  repo = undefined;
  mock = undefined;
});

const SCRIPT: CodexTurn[] = [
  [{ type: 'patch', patch: '*** Begin Patch\n*** Add File: src/auth/token.ts\n+export const rotate = () => 1;\n*** End Patch\n' }],
  [{ type: 'shell', command: 'ls /nonexistent-forge-e2e' }],
  [{ type: 'shell', command: 'echo tests pass' }],
  [{ type: 'message', text: answerWith('Added token rotation in src/auth/token.ts.') }],
];

async function session(env: NodeJS.ProcessEnv) {
  mock = await startMockServer([responsesRoute(SCRIPT)]);
  const run = await runCodex({ cwd: repo!.dir, mockUrl: mock.url, prompt: 'Add token rotation', env });
  expect(run.status, `codex exited ${run.status}: ${run.stderr.slice(-2000)}`).toBe(0);
  expect(mock.violations.map((v) => `${v.method} ${v.path}`)).toEqual([]);
  expect(mock.requests.filter((r) => r.path.startsWith('/v1/responses'))).toHaveLength(SCRIPT.length);
  return run;
}

describe('Codex CLI, real client', () => {
  it('records the session: apply_patch to an auth file, a failing and a passing shell command, the self-report in the final answer', async () => {
    repo = makeScratchRepo();
    installKit(repo, ['codex']);
    const run = await session({ REFLECTION_MODE: 'solo' });
    expect(run.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expectAuthTurnSidecar(repo, run.sessionId, 'codex');

    const log = eventsOf(repo);
    expectEventsAsRecords(repo, log);
    const tools = log.filter((e) => e.type === 'tool.failed' || e.type === 'tool.executed');
    expect(tools.map((e) => `${e.type} ${e.tool_name}`)).toEqual(['tool.executed apply_patch', 'tool.failed Bash', 'tool.executed Bash']);
    expectOnlySession(log, run.sessionId, 'codex');
  });

  it('with the mode unset nothing is recorded; uninstall gives back the files byte for byte', async () => {
    repo = makeScratchRepo();
    repo.write('.codex/hooks.json', '{\n  "hooks": {\n    "Stop": [{"hooks": [{"type": "command", "command": "true"}]}]\n  }\n}\n');
    const before = { codex: treeBytes(repo, '.codex'), claude: treeBytes(repo, '.claude') };
    installKit(repo, ['codex']);
    expect(readFileSync(join(repo.dir, '.codex', 'hooks.json'), 'utf8')).toContain('reflect-stop-hook.sh');
    await session({});
    expect(existsSync(join(repo.dir, 'src', 'auth', 'token.ts'))).toBe(true);
    expect(sidecarsOf(repo)).toEqual([]);
    const r = repo.cli(['uninstall', '--runtime', 'codex']);
    expect(r.status, r.stderr).toBe(0);
    expect({ codex: treeBytes(repo, '.codex'), claude: treeBytes(repo, '.claude') }).toEqual(before);
  });
});
