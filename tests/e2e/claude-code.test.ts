/**
 * The kit in the real Claude Code CLI (2.1.330, headless), against a scripted Messages API on
 * 127.0.0.1, in scratch repos with the kit installed from its packed tarball. Every test runs twice:
 * on this Linux host as it is, and as on a stock Mac, with the stand-in's bin/ (bash 3.2, the BSD
 * userland) first and alone on the client's PATH, no /proc and Darwin's OSTYPE (support/macos-like.ts):
 * the same checks, and on the Mac a spy on `bash` shows the hooks ran under bash 3.2.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { anthropicErrorRoute, anthropicRoute, type AssistantTurn } from './support/anthropic-mock.js';
import { leftRunning, MARK_NAME, newMark } from './support/left-running.js';
import { macClient, NOT_ON_A_MAC, type MacClient } from './support/macos-like.js';
import { startMockServer, type MockServer, type Route } from './support/mock-server.js';
import { answerWith, eventsOf, expectAuthTurnSidecar, expectEventsAsRecords, REPORT, sidecarsOf } from './support/records.js';
import { runClaude } from './support/run-claude.js';
import { installKit, makeScratchRepo, type ScratchRepo } from './support/scratch.js';

const SECRET = 'sk-ant-api03-E2eSecretValueThatMustNeverBeStored0123456789abcdef';
const answer = answerWith;

let repo: ScratchRepo | undefined;
let mock: MockServer | undefined;
let mac: MacClient | undefined;
afterEach(async () => {
  await mock?.close();
  repo?.cleanup();
  mac?.cleanup();
  repo = undefined;
  mock = undefined;
  mac = undefined;
});

/** Where the client runs: this host as it is, or a stock Mac (the stand-in, support/macos-like.ts). */
const PLATFORMS: [string, boolean][] = [
  ['Linux', false],
  ['a stock Mac (the stand-in)', true],
];

/** The event hook's runs the spy saw, by the event each served (its first argument). */
function eventHookRuns(client: MacClient): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of client.runs()) {
    const m = /\/\.claude\/hooks\/forge-reflect\/reflect-event-hook\.sh (\S+) claude-code$/.exec(r.args);
    if (m) counts[m[1]!] = (counts[m[1]!] ?? 0) + 1;
  }
  return counts;
}

/**
 * On the Mac: the client's `bash` and `sh` are the stand-in's (`bash` through the spy) and no GNU-only
 * tool is on its PATH; every bash the client started was 3.2; with the mode set the event hook ran
 * (at least for SessionStart and UserPromptSubmit) and the Stop hook did, each under bash 3.2, with
 * the mode unset neither did.
 */
function expectRanOnTheMac(client: MacClient, modeSet: boolean): void {
  expect(client.commandPath('bash')).toBe(`${client.bin}/bash`);
  expect(client.commandPath('sh')).toBe(`${client.bin}/sh`);
  expect(NOT_ON_A_MAC.filter((name) => client.commandPath(name) !== '')).toEqual([]);
  const runs = client.runs();
  expect(runs.filter((r) => !/^3\.2\.48\(\d+\)-release$/.test(r.version))).toEqual([]);
  const hooks = runs.filter((r) => /\/\.claude\/hooks\/forge-reflect\/reflect-(event|stop)-hook\.sh( |$)/.test(r.args));
  if (!modeSet) {
    expect(hooks).toEqual([]);
    return;
  }
  const events = eventHookRuns(client);
  expect(events.SessionStart).toBeGreaterThan(0);
  expect(events.UserPromptSubmit).toBeGreaterThan(0);
  expect(hooks.filter((r) => /\/reflect-stop-hook\.sh claude-code$/.test(r.args)).length).toBeGreaterThan(0);
}

async function session(
  script: AssistantTurn[],
  prompt: string,
  options: {
    mode?: 'solo' | null;
    permissionMode?: 'bypassPermissions' | 'default';
    cwdRel?: string;
    onMac?: boolean;
    routes?: Route[];
    env?: NodeJS.ProcessEnv;
    status?: number;
  } = {},
) {
  mock = await startMockServer([...(options.routes ?? []), anthropicRoute(script)]);
  if (options.onMac) mac = macClient();
  const mark = newMark();
  const env = { ...(options.mode === null ? {} : { REFLECTION_MODE: options.mode ?? 'solo' }), ...(mac?.env ?? {}), ...options.env, [MARK_NAME]: mark };
  const run = await runClaude({ cwd: join(repo!.dir, options.cwdRel ?? ''), mockUrl: mock.url, prompt, env, permissionMode: options.permissionMode });
  expect(run.status, `claude exited ${run.status}: ${run.stderr.slice(0, 2000)}`).toBe(options.status ?? 0);
  expect(mock.violations.map((v) => `${v.method} ${v.path}`)).toEqual([]);
  expect(mock.requests.length).toBeGreaterThan(0);
  if (mac) expectRanOnTheMac(mac, options.mode !== null);
  // Nothing the session started is left running once its drain is done (the Stop hook's helper included).
  expect((await leftRunning(mark)).map((p) => p.command)).toEqual([]);
  return run;
}

const sidecars = () => sidecarsOf(repo!);
const events = () => eventsOf(repo!);

describe.each(PLATFORMS)('Claude Code, real client, on %s', (_platform, onMac) => {
  it('records a whole session: auth write, a failing and a passing Bash call, the self-report in the final answer, the secret redacted', async () => {
    repo = makeScratchRepo();
    installKit(repo);
    const started = Date.now();
    const run = await session(
      [
        [{ type: 'tool_use', name: 'Write', input: { file_path: join(repo.dir, 'src/auth/token.ts'), content: 'export const rotate = () => 1;\n' } }],
        [{ type: 'tool_use', name: 'Bash', input: { command: 'ls /nonexistent-forge-e2e', description: 'list a missing folder' } }],
        [{ type: 'tool_use', name: 'Bash', input: { command: 'echo tests pass', description: 'run the tests' } }],
        [{ type: 'text', text: answer('Added token rotation in src/auth/token.ts.') }],
      ],
      `Add token rotation. The staging key is ${SECRET}`,
      { onMac },
    );
    const ended = Date.now();
    expectAuthTurnSidecar(repo!, run.sessionId, 'claude-code');

    const log = events();
    expectEventsAsRecords(repo!, log, mac ? 'mac' : 'linux');
    if (mac) {
      // Every event in the log came from a hook run the spy saw under bash 3.2, and every such run logged one.
      const TYPE: Record<string, string> = {
        SessionStart: 'session.started',
        UserPromptSubmit: 'prompt.submitted',
        PostToolUse: 'tool.executed',
        PostToolUseFailure: 'tool.failed',
        SessionEnd: 'session.ended',
      };
      const byType: Record<string, number> = {};
      for (const [event, count] of Object.entries(eventHookRuns(mac))) byType[TYPE[event] ?? event] = count;
      const logged: Record<string, number> = {};
      for (const e of log) if (e.type !== 'turn.stopped' && e.type !== 'reflection.written') logged[e.type] = (logged[e.type] ?? 0) + 1;
      expect(logged).toEqual(byType);
      expect(byType['tool.failed']).toBe(1);
      const stops = mac.runs().filter((r) => /\/reflect-stop-hook\.sh claude-code$/.test(r.args)).length;
      expect(log.filter((e) => e.type === 'turn.stopped').length).toBe(stops);
    }
    // Each id starts with the time the hook received the event, in µs since the epoch (bash 3.2 has
    // no EPOCHREALTIME): inside the session, give or take a second's rounding.
    const outside = log.filter(
      (e) => !(Number(String(e.id).slice(0, 16)) / 1000 >= started - 2000 && Number(String(e.id).slice(0, 16)) / 1000 <= ended + 2000),
    );
    expect(outside.map((e) => `${e.type} ${e.id}`)).toEqual([]);
    const failed = log.filter((e) => e.type === 'tool.failed');
    expect(failed.map((e) => e.tool_name)).toEqual(['Bash']);
    expect(log.every((e) => e.session_id === run.sessionId)).toBe(true);
    expect(new Set(log.map((e) => e.runtime))).toEqual(new Set(['claude-code']));
    const dump = JSON.stringify(log) + JSON.stringify(sidecars()) + repo.cli(['report', '--format', 'json']).stdout;
    expect(dump).not.toContain(SECRET);
    expect(dump).toContain('[REDACTED');
  });
});

describe.each(PLATFORMS)('Claude Code, real client, on %s: the traps of real sessions', (_platform, onMac) => {
  const WRITE = (path: string, content = 'x\n'): AssistantTurn => [{ type: 'tool_use', name: 'Write', input: { file_path: path, content } }];
  const BASH = (command: string): AssistantTurn => [{ type: 'tool_use', name: 'Bash', input: { command, description: 'run it' } }];
  const DONE = (report: object | null = REPORT): AssistantTurn => [{ type: 'text', text: answer('Done.', report) }];

  it('with the mode unset the session runs and nothing at all is written', async () => {
    repo = makeScratchRepo();
    installKit(repo);
    const listing = () => (readdirSync(join(repo!.dir, '.forge'), { recursive: true }) as string[]).sort();
    const before = listing(); // what install made: the state folder and its .gitignore
    await session([WRITE(join(repo.dir, 'src/auth/a.ts')), DONE()], 'write it', { mode: null, onMac });
    expect(existsSync(join(repo.dir, 'src/auth/a.ts'))).toBe(true);
    expect(listing()).toEqual(before);
    expect(before.filter((n) => /spool\/|reflections\/|sessions\//.test(n))).toEqual([]);
  });

  it('a stale self-report left by an earlier session is not merged into a session that reports nothing', async () => {
    repo = makeScratchRepo();
    installKit(repo);
    // Written outside any session (mode off, no session id), an hour before this one starts.
    const r = repo.cli(['self-report', '--confidence', '0.7', '--surface', 'none', '--wrong', 'left over from yesterday']);
    expect(r.status, r.stderr).toBe(0);
    const input = join(repo.dir, '.forge', 'reflection-input.json');
    const old = new Date(Date.now() - 3600_000);
    (await import('node:fs')).utimesSync(input, old, old);
    await session([BASH('echo nothing to change'), DONE(null)], 'look around', { onMac });
    const [sidecar] = sidecars();
    expect(sidecar?.confidence).toBeNull();
    expect(sidecar?.provenance.degraded).toBe(true);
    const rejected = readdirSync(join(repo.dir, '.forge', 'rejected-input'));
    expect(rejected.some((n) => n.endsWith('.reason') && readFileSync(join(repo!.dir, '.forge', 'rejected-input', n), 'utf8').includes('stale'))).toBe(true);
  });

  it('a cd into a nested repo moves nothing: the sidecar and events stay in the project', async () => {
    repo = makeScratchRepo();
    installKit(repo);
    repo.write('vendor/lib/README.md', 'lib\n');
    const nested = join(repo.dir, 'vendor', 'lib');
    for (const args of [
      ['init', '-q', '-b', 'main'],
      ['add', '-A'],
      ['-c', 'user.email=e@x', '-c', 'user.name=e', 'commit', '-qm', 'lib'],
    ]) {
      (await import('node:child_process')).execFileSync('git', args, { cwd: nested });
    }
    repo.write('.gitignore', 'node_modules/\nvendor/\n');
    repo.git('add', '.gitignore');
    repo.git('commit', '-qm', 'ignore vendor');
    await session([BASH('cd vendor/lib && echo note > note.txt'), WRITE(join(repo.dir, 'src/auth/login.ts')), DONE()], 'work in the vendored lib', { onMac });
    expect(existsSync(join(nested, '.forge'))).toBe(false);
    const all = sidecars();
    expect(all).toHaveLength(1);
    expect(all[0]!.files_changed).toEqual(['src/auth/login.ts']);
    const report = repo.cli(['report', '--format', 'json']);
    expect(JSON.parse(report.stdout).summary?.count ?? JSON.parse(report.stdout).rows?.length).toBe(1);
    expect(events().length).toBeGreaterThan(3);
  });

  it("a file dirty before the session (and the kit's own install files) is not blamed", async () => {
    repo = makeScratchRepo();
    installKit(repo);
    repo.write('src/auth/draft.ts', "the user's own unfinished work\n");
    repo.write('README.md', '# scratch\nedited by the user\n');
    await session([WRITE(join(repo.dir, 'docs/guide.md'), '# guide\n'), DONE()], 'write the guide', { onMac });
    const [sidecar] = sidecars();
    expect(sidecar?.files_changed).toEqual(['docs/guide.md']);
    expect(sidecar?.risk.needs_review).toBe(false);
  });

  it('the agent editing .claude/settings.json needs review', async () => {
    repo = makeScratchRepo();
    installKit(repo);
    const settings = join(repo.dir, '.claude', 'settings.json');
    const edited = readFileSync(settings, 'utf8').replace('"hooks"', '"permissions": {"allow": ["Bash(*)"]},\n  "hooks"');
    await session([WRITE(settings, edited), DONE()], 'allow every command', { onMac });
    const [sidecar] = sidecars();
    expect(sidecar?.files_changed).toContain('.claude/settings.json');
    expect(sidecar?.risk.surface).toBe('auth');
    expect(sidecar?.risk.needs_review).toBe(true);
  });

  it('a turn that ends on a model error (HTTP 429: StopFailure, no Stop) still gets its sidecar, degraded, with the reason', async () => {
    repo = makeScratchRepo();
    installKit(repo);
    // The second call fails: after the first tool call, so the turn has a change to record. No
    // retries: the client would otherwise back off and ask again.
    const run = await session([WRITE(join(repo.dir, 'src/auth/token.ts')), DONE()], 'rotate the token', {
      onMac,
      routes: [anthropicErrorRoute(429, 'rate_limit_error', 'mock: scripted rate limit', 1)],
      env: { CLAUDE_CODE_MAX_RETRIES: '0' },
      status: 1,
    });
    const all = sidecars();
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ session_id: run.sessionId, agent: 'claude-code', confidence: null, files_changed: ['src/auth/token.ts'] });
    expect(all[0]!.provenance.degraded).toBe(true);
    expect(all[0]!.risk.surface).toBe('auth');
    const log = events();
    expect(log.filter((e) => e.type === 'turn.stopped').map((e) => e.hook_event)).toEqual(['StopFailure']);
    const written = log.filter((e) => e.type === 'reflection.written');
    expect(written).toHaveLength(1);
    // On the Mac (no setsid) the exiting client may stop the hook's node helper: the bash fallback
    // then names the error's type alone.
    if (mac)
      expect(written[0]!.payload.self_report_note).toMatch(
        /^the turn ended on an error \(StopFailure: rate_limit(: API Error: .*)?\): there is no final answer$/,
      );
    else
      expect(written[0]!.payload.self_report_note).toMatch(
        /^the turn ended on an error \(StopFailure: rate_limit: API Error: .*429.*mock: scripted rate limit\): there is no final answer$/,
      );
  });

  it('in the default permission mode the self-report in the final answer lands with no command and no prompt', async () => {
    repo = makeScratchRepo();
    installKit(repo);
    const run = await session([DONE()], 'summarise the repo', { permissionMode: 'default', onMac });
    const [sidecar] = sidecars();
    expect(sidecar?.session_id).toBe(run.sessionId);
    expect(sidecar?.confidence).toBe(0.55);
    expect(sidecar?.provenance.degraded).toBe(false);
  });
});
