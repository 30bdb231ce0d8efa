/**
 * The kit in the real Claude Code CLI (2.1.330, headless), against a scripted Messages API on
 * 127.0.0.1, in scratch repos with the kit installed from its packed tarball.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { anthropicRoute, type AssistantTurn } from './support/anthropic-mock.js';
import { startMockServer, type MockServer } from './support/mock-server.js';
import { runClaude } from './support/run-claude.js';
import { installKit, makeScratchRepo, type ScratchRepo } from './support/scratch.js';

const SECRET = 'sk-ant-api03-E2eSecretValueThatMustNeverBeStored0123456789abcdef';
const REPORT = { confidence: 0.55, most_likely_wrong: { surface: 'auth', description: 'the token is never rotated' }, known_not_in_diff: 'did not run the integration tests' };
const answer = (text: string, report: object | null = REPORT) =>
  report === null ? text : `${text}\n\n\`\`\`reflection\n${JSON.stringify(report)}\n\`\`\`\n`;

let repo: ScratchRepo | undefined;
let mock: MockServer | undefined;
afterEach(async () => {
  await mock?.close();
  repo?.cleanup();
  repo = undefined;
  mock = undefined;
});

async function session(script: AssistantTurn[], prompt: string, options: { mode?: 'solo' | null; permissionMode?: 'bypassPermissions' | 'default'; cwdRel?: string } = {}) {
  mock = await startMockServer([anthropicRoute(script)]);
  const env = options.mode === null ? {} : { REFLECTION_MODE: options.mode ?? 'solo' };
  const run = await runClaude({ cwd: join(repo!.dir, options.cwdRel ?? ''), mockUrl: mock.url, prompt, env, permissionMode: options.permissionMode });
  expect(run.status, `claude exited ${run.status}: ${run.stderr.slice(0, 2000)}`).toBe(0);
  expect(mock.violations.map((v) => `${v.method} ${v.path}`)).toEqual([]);
  expect(mock.requests.length).toBeGreaterThan(0);
  return run;
}

function sidecars(dir = join(repo!.dir, '.forge', 'reflections')): Record<string, any>[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => n.endsWith('.reflection.json'))
    .sort()
    .map((n) => JSON.parse(readFileSync(join(dir, n), 'utf8')));
}

function events(): Record<string, any>[] {
  const r = repo!.cli(['events', '--json', '--limit', '1000']);
  expect(r.status, r.stderr).toBe(0);
  const parsed = JSON.parse(r.stdout);
  return Array.isArray(parsed) ? parsed : parsed.events;
}

describe('Claude Code, real client', () => {
  it('records a whole session: auth write, a failing and a passing Bash call, the self-report in the final answer, the secret redacted', async () => {
    repo = makeScratchRepo();
    installKit(repo);
    const run = await session(
      [
        [{ type: 'tool_use', name: 'Write', input: { file_path: join(repo.dir, 'src/auth/token.ts'), content: 'export const rotate = () => 1;\n' } }],
        [{ type: 'tool_use', name: 'Bash', input: { command: 'ls /nonexistent-forge-e2e', description: 'list a missing folder' } }],
        [{ type: 'tool_use', name: 'Bash', input: { command: 'echo tests pass', description: 'run the tests' } }],
        [{ type: 'text', text: answer('Added token rotation in src/auth/token.ts.') }],
      ],
      `Add token rotation. The staging key is ${SECRET}`,
    );
    const all = sidecars();
    expect(all).toHaveLength(1);
    const sidecar = all[0]!;
    expect(sidecar.session_id).toBe(run.sessionId);
    expect(sidecar.agent).toBe('claude-code');
    expect(sidecar.confidence).toBe(0.55);
    expect(sidecar.most_likely_wrong).toEqual(REPORT.most_likely_wrong);
    expect(sidecar.known_not_in_diff).toBe(REPORT.known_not_in_diff);
    expect(sidecar.provenance.degraded).toBe(false);
    expect(sidecar.risk.surface).toBe('auth');
    expect(sidecar.risk.needs_review).toBe(true);
    expect(sidecar.files_changed).toEqual(['src/auth/token.ts']);

    const log = events();
    const failed = log.filter((e) => e.type === 'tool.failed');
    expect(failed.map((e) => e.tool_name)).toEqual(['Bash']);
    expect(log.every((e) => e.session_id === run.sessionId)).toBe(true);
    expect(new Set(log.map((e) => e.runtime))).toEqual(new Set(['claude-code']));
    const dump = JSON.stringify(log) + JSON.stringify(sidecars()) + repo.cli(['report', '--format', 'json']).stdout;
    expect(dump).not.toContain(SECRET);
    expect(dump).toContain('[REDACTED');
  });
});
