/**
 * The kit in the real Gemini CLI (0.61.0, `gemini -p --yolo`), against a scripted Gemini API on
 * 127.0.0.1, in scratch repos (paths with spaces) with the kit installed by
 * `forge-reflect install --runtime gemini` from its packed tarball.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { geminiRoute, type GeminiTurn } from './support/gemini-mock.js';
import { startMockServer, type MockServer } from './support/mock-server.js';
import { answerWith, eventsOf, expectAuthTurnSidecar, expectEventsAsRecords, expectOnlySession, sidecarsOf, treeBytes } from './support/records.js';
import { runGemini } from './support/run-gemini.js';
import { installKit, makeScratchRepo, type ScratchRepo } from './support/scratch.js';

let repo: ScratchRepo | undefined;
let mock: MockServer | undefined;
afterEach(async () => {
  await mock?.close();
  repo?.cleanup();
  repo = undefined;
  mock = undefined;
});

const SCRIPT: GeminiTurn[] = [
  [{ functionCall: { name: 'write_file', args: { file_path: 'src/auth/token.ts', content: 'export const rotate = () => 1;\n' } } }],
  [{ functionCall: { name: 'run_shell_command', args: { command: 'ls /nonexistent-forge-e2e', description: 'list a missing folder' } } }],
  [{ functionCall: { name: 'run_shell_command', args: { command: 'echo tests pass', description: 'run the tests' } } }],
  [{ text: answerWith('Added token rotation in src/auth/token.ts.') }],
];

async function session(env: NodeJS.ProcessEnv) {
  mock = await startMockServer([geminiRoute(SCRIPT)]);
  const run = await runGemini({ cwd: repo!.dir, mockUrl: mock.url, prompt: 'Add token rotation', env });
  expect(run.status, `gemini exited ${run.status}: ${run.stderr.slice(-2000)}`).toBe(0);
  expect(mock.violations.map((v) => `${v.method} ${v.path}`)).toEqual([]);
  expect(mock.requests.filter((r) => r.path.includes(':streamGenerateContent'))).toHaveLength(SCRIPT.length);
  return run;
}

describe('Gemini CLI, real client', () => {
  it('records the session: write_file to an auth file, a failing and a passing shell command, the self-report in the final answer', async () => {
    repo = makeScratchRepo();
    installKit(repo, ['gemini']);
    const run = await session({ REFLECTION_MODE: 'solo' });
    expect(run.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expectAuthTurnSidecar(repo, run.sessionId, 'gemini');

    const log = eventsOf(repo);
    expectEventsAsRecords(repo, log);
    const tools = log.filter((e) => e.type === 'tool.failed' || e.type === 'tool.executed');
    expect(tools.map((e) => `${e.type} ${e.tool_name}`)).toEqual([
      'tool.executed write_file',
      'tool.failed run_shell_command',
      'tool.executed run_shell_command',
    ]);
    expectOnlySession(log, run.sessionId, 'gemini');
  });

  it('with the mode unset nothing is recorded; uninstall gives back the files byte for byte', async () => {
    repo = makeScratchRepo();
    repo.write('.gemini/settings.json', '{\n  "ui": {"theme": "GitHub"}\n}\n');
    const before = { gemini: treeBytes(repo, '.gemini'), claude: treeBytes(repo, '.claude') };
    installKit(repo, ['gemini']);
    expect(readFileSync(join(repo.dir, '.gemini', 'settings.json'), 'utf8')).toContain('reflect-stop-hook.sh');
    await session({});
    expect(existsSync(join(repo.dir, 'src', 'auth', 'token.ts'))).toBe(true);
    expect(sidecarsOf(repo)).toEqual([]);
    const r = repo.cli(['uninstall', '--runtime', 'gemini']);
    expect(r.status, r.stderr).toBe(0);
    expect({ gemini: treeBytes(repo, '.gemini'), claude: treeBytes(repo, '.claude') }).toEqual(before);
  });
});
