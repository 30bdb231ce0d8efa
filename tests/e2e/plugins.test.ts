/**
 * The kit installed the way each runtime installs things: the real, pinned clients' own commands
 * (`claude plugin marketplace add` + `claude plugin install`, `codex plugin marketplace add` +
 * `codex plugin add`, `gemini extensions install --consent`) against a copy of this checkout as a
 * user clones it (tracked and new files only: no build output, no node_modules), offline. Then a
 * headless session in a scratch repo against the loopback mock records: one sidecar with the
 * runtime's name and the self-report, the events once each; with the mode unset nothing. With the
 * kit also registered in the project's settings (`forge-reflect install`), each event is still
 * stored once and the turn has one sidecar. The CLI the other ways a user gets it: `npm install -g`
 * used from a repository with no package.json, and `pnpm add -D` with pnpm 10 (pinned in the e2e
 * cache like the clients), before and after better-sqlite3's build is approved.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { anthropicRoute, type AssistantTurn } from './support/anthropic-mock.js';
import { ensureClient } from './support/clients.js';
import { geminiRoute, type GeminiTurn } from './support/gemini-mock.js';
import { KIT_ROOT, packKit } from './support/kit.js';
import { serveGit, type GitServer } from './support/git-http.js';
import { startMockServer, type MockServer } from './support/mock-server.js';
import { answerWith, eventsOf, REPORT, sidecarsOf } from './support/records.js';
import { responsesRoute, type CodexTurn } from './support/responses-mock.js';
import { runClaude, runProcess } from './support/run-claude.js';
import { baseEnv, installKit, makeScratchRepo, type ScratchRepo } from './support/scratch.js';

let repo: ScratchRepo | undefined;
let mock: MockServer | undefined;
const temps: string[] = [];
afterEach(async () => {
  await mock?.close();
  repo?.cleanup();
  repo = undefined;
  mock = undefined;
});
let gitServer: GitServer | undefined;
afterAll(async () => {
  await gitServer?.close();
  for (const t of temps.splice(0)) rmSync(t, { recursive: true, force: true });
});

function temp(prefix: string): string {
  const t = mkdtempSync(join(tmpdir(), prefix));
  temps.push(t);
  return t;
}

/** This checkout as a clone has it: its tracked and new (not ignored) files, committed in a fresh repo. */
let clone: string | undefined;
function kitClone(): string {
  if (clone) return clone;
  const dir = join(temp('forge-kit-clone-'), 'forge-reflect');
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: KIT_ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const rel of files) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    try {
      copyFileSync(join(KIT_ROOT, rel), join(dir, rel));
    } catch {
      // deleted in the work tree
    }
  }
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.email=e2e@forge-reflect.invalid', '-c', 'user.name=e2e', '-c', 'commit.gpgsign=false', ...args], {
      cwd: dir,
      stdio: 'ignore',
    });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'the kit');
  clone = dir;
  return dir;
}

/** The clone as a git URL: a bare copy served by git's smart HTTP on 127.0.0.1 (the clients clone shallow). */
async function kitGitUrl(): Promise<string> {
  if (!gitServer) {
    const root = temp('forge-kit-git-');
    execFileSync('git', ['clone', '-q', '--bare', kitClone(), join(root, 'forge-reflect.git')], { stdio: 'ignore' });
    gitServer = await serveGit(root);
  }
  return `${gitServer.url}/forge-reflect.git`;
}

/** Runs a client's own install command; its exit status and output. */
async function clientCommand(bin: string, args: string[], env: NodeJS.ProcessEnv, cwd = tmpdir()) {
  const r = await runProcess(bin, args, cwd, baseEnv(env), 180_000);
  return { ...r, text: `${r.stdout}${r.stderr}` };
}

const CLAUDE_SCRIPT = (dir: string): AssistantTurn[] => [
  [{ type: 'tool_use', name: 'Write', input: { file_path: join(dir, 'src/auth/token.ts'), content: 'export const rotate = () => 1;\n' } }],
  [{ type: 'tool_use', name: 'Bash', input: { command: 'echo tests pass', description: 'run the tests' } }],
  [{ type: 'text', text: answerWith('Added token rotation in src/auth/token.ts.') }],
];

describe('Claude Code plugin, installed by the real client', () => {
  /** A config home with the kit's marketplace added and the plugin installed by `claude plugin …`. */
  async function claudeHomeWithPlugin(source: string): Promise<{ home: string; configDir: string }> {
    const claude = ensureClient('claude');
    const home = temp('forge-e2e-claude-plugin-');
    const configDir = join(home, '.claude');
    const env = { HOME: home, CLAUDE_CONFIG_DIR: configDir, DISABLE_TELEMETRY: '1', DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' };
    const add = await clientCommand(claude, ['plugin', 'marketplace', 'add', source], env);
    expect(add.status, add.text).toBe(0);
    const install = await clientCommand(claude, ['plugin', 'install', 'forge-reflect@forge-reflect'], env);
    expect(install.status, install.text).toBe(0);
    return { home, configDir };
  }

  async function session(configHome: { home: string; configDir: string }, mode: string | null) {
    mock = await startMockServer([anthropicRoute(CLAUDE_SCRIPT(repo!.dir))]);
    const env = { HOME: configHome.home, CLAUDE_CONFIG_DIR: configHome.configDir, ...(mode ? { REFLECTION_MODE: mode } : {}) };
    const run = await runClaude({ cwd: repo!.dir, mockUrl: mock.url, prompt: 'Add token rotation', env });
    expect(run.status, `claude exited ${run.status}: ${run.stderr.slice(0, 2000)}`).toBe(0);
    expect(mock.violations.map((v) => `${v.method} ${v.path}`)).toEqual([]);
    return run;
  }

  function expectOneRecordedTurn(sessionId: string | undefined) {
    const all = sidecarsOf(repo!);
    expect(all).toHaveLength(1);
    const sidecar = all[0]!;
    expect(sidecar.session_id).toBe(sessionId);
    expect(sidecar.agent).toBe('claude-code');
    expect(sidecar.confidence).toBe(REPORT.confidence);
    expect(sidecar.provenance.degraded).toBe(false);
    expect(sidecar.risk.surface).toBe('auth');
    const log = eventsOf(repo!);
    const tools = log.filter((e) => e.type === 'tool.failed' || e.type === 'tool.executed');
    expect(tools.map((e) => `${e.type} ${e.tool_name}`)).toEqual(['tool.executed Write', 'tool.executed Bash']);
    expect(log.filter((e) => e.type === 'session.started')).toHaveLength(1);
    expect(log.filter((e) => e.type === 'turn.stopped')).toHaveLength(1);
    expect(new Set(log.map((e) => e.runtime))).toEqual(new Set(['claude-code']));
    expect(log.every((e) => e.session_id === sessionId)).toBe(true);
  }

  it('from a local path: a session records a sidecar and its events; the mode unset records nothing', async () => {
    const configHome = await claudeHomeWithPlugin(kitClone());
    repo = makeScratchRepo();
    const run = await session(configHome, 'solo');
    expectOneRecordedTurn(run.sessionId);
    repo.cleanup();
    repo = makeScratchRepo();
    await session(configHome, null);
    expect(sidecarsOf(repo)).toEqual([]);
  });

  it('from a git URL (served on 127.0.0.1, offline)', async () => {
    const configHome = await claudeHomeWithPlugin(await kitGitUrl());
    repo = makeScratchRepo();
    const run = await session(configHome, 'solo');
    expectOneRecordedTurn(run.sessionId);
  });

  it('plugin and `forge-reflect install` in one repo: each event stored once, one sidecar; doctor says which records', async () => {
    const configHome = await claudeHomeWithPlugin(kitClone());
    repo = makeScratchRepo();
    installKit(repo, ['claude-code']);
    const env = { HOME: configHome.home, CLAUDE_CONFIG_DIR: configHome.configDir };
    const doctor = repo.cli(['doctor'], env);
    expect(doctor.stdout).toMatch(/claude-code plugin .*\.claude\/settings\.json records; this plugin's hooks stay quiet/);
    const run = await session(configHome, 'solo');
    expectOneRecordedTurn(run.sessionId);
    // Uninstalling the settings way leaves the plugin recording.
    expect(repo.cli(['uninstall'], env).status).toBe(0);
    rmSync(join(repo.dir, 'src'), { recursive: true, force: true });
    rmSync(join(repo.dir, '.forge'), { recursive: true, force: true });
    const again = await session(configHome, 'solo');
    expectOneRecordedTurn(again.sessionId);
  });

  it('a plugin whose hooks.json lacks the `hooks` wrapper is refused by the client, by name', async () => {
    const claude = ensureClient('claude');
    const dir = join(temp('forge-e2e-claude-bad-'), 'plugin');
    cpSync(join(kitClone(), 'plugins', 'claude-code'), dir, { recursive: true });
    const hooks = JSON.parse(readFileSync(join(dir, 'hooks', 'hooks.json'), 'utf8')) as { hooks: unknown };
    writeFileSync(join(dir, 'hooks', 'hooks.json'), JSON.stringify(hooks.hooks));
    const home = temp('forge-e2e-claude-plugin-');
    const r = await clientCommand(claude, ['plugin', 'validate', dir], { HOME: home, CLAUDE_CONFIG_DIR: join(home, '.claude') });
    expect(r.status, r.text).not.toBe(0);
    expect(r.text).toContain('hooks.json');
  });

  it('a marketplace that cannot be reached is a clear error from the client', async () => {
    const claude = ensureClient('claude');
    const home = temp('forge-e2e-claude-plugin-');
    const r = await clientCommand(claude, ['plugin', 'marketplace', 'add', `${(await kitGitUrl()).replace(/forge-reflect\.git$/, 'no-such-repo.git')}`], {
      HOME: home,
      CLAUDE_CONFIG_DIR: join(home, '.claude'),
    });
    expect(r.status).not.toBe(0);
    expect(r.text.length).toBeGreaterThan(0);
  });
});

const CODEX_SCRIPT: CodexTurn[] = [
  [{ type: 'patch', patch: '*** Begin Patch\n*** Add File: src/auth/token.ts\n+export const rotate = () => 1;\n*** End Patch\n' }],
  [{ type: 'shell', command: 'echo tests pass' }],
  [{ type: 'message', text: answerWith('Added token rotation in src/auth/token.ts.') }],
];

describe('Codex plugin, installed by the real client', () => {
  function codexHome(mockUrl: string, repoDir: string): { home: string; codexHome: string } {
    const home = temp('forge-e2e-codex-plugin-');
    const dir = join(home, '.codex');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'config.toml'),
      [
        'model = "gpt-5.5"',
        'model_provider = "mock"',
        'check_for_update_on_startup = false',
        '',
        '[model_providers.mock]',
        'name = "mock"',
        `base_url = ${JSON.stringify(`${mockUrl}/v1`)}`,
        'env_key = "MOCK_API_KEY"',
        'wire_api = "responses"',
        'request_max_retries = 0',
        'stream_max_retries = 0',
        '',
        '[analytics]',
        'enabled = false',
        '',
        '[otel]',
        'exporter = "none"',
        '',
        `[projects.${JSON.stringify(repoDir)}]`,
        'trust_level = "trusted"',
        '',
      ].join('\n'),
    );
    return { home, codexHome: dir };
  }

  async function codexSession(settingsToo: boolean) {
    const codex = ensureClient('codex');
    repo = makeScratchRepo();
    if (settingsToo) installKit(repo, ['codex']);
    mock = await startMockServer([responsesRoute(CODEX_SCRIPT)]);
    const h = codexHome(mock.url, repo.dir);
    const env = { HOME: h.home, CODEX_HOME: h.codexHome };
    const add = await clientCommand(codex, ['plugin', 'marketplace', 'add', kitClone()], env);
    expect(add.status, add.text).toBe(0);
    const install = await clientCommand(codex, ['plugin', 'add', 'forge-reflect@forge-reflect'], env);
    expect(install.status, install.text).toBe(0);
    // The project's hooks reviewed once (what the TUI's review persists), so they count as the recording registration.
    if (settingsToo)
      writeFileSync(
        join(h.codexHome, 'config.toml'),
        `\n[hooks.state.${JSON.stringify(`${repo.dir}/.codex/hooks.json:stop:0:0`)}]\ntrusted_hash = "sha256:e2e"\n`,
        { flag: 'a' },
      );
    const run = await runProcess(
      codex,
      ['exec', '--sandbox', 'workspace-write', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', 'Add token rotation'],
      repo.dir,
      baseEnv({ ...env, MOCK_API_KEY: 'mock-not-a-real-key', REFLECTION_MODE: 'solo' }),
      180_000,
    );
    expect(run.status, `codex exited ${run.status}: ${run.stderr.slice(-2000)}`).toBe(0);
    const sessionId = /session id: ([0-9a-f-]{36})/.exec(run.stderr + run.stdout)?.[1];
    const all = sidecarsOf(repo);
    expect(all).toHaveLength(1);
    expect(all[0]!.agent).toBe('codex');
    expect(all[0]!.session_id).toBe(sessionId);
    expect(all[0]!.confidence).toBe(REPORT.confidence);
    expect(all[0]!.files_changed).toEqual(['src/auth/token.ts']);
    const log = eventsOf(repo);
    const tools = log.filter((e) => e.type === 'tool.failed' || e.type === 'tool.executed');
    expect(tools.map((e) => `${e.type} ${e.tool_name}`)).toEqual(['tool.executed apply_patch', 'tool.executed Bash']);
    expect(new Set(log.map((e) => e.runtime))).toEqual(new Set(['codex']));
    const doctor = repo.cli(['doctor'], env);
    expect(doctor.stdout).toMatch(
      settingsToo ? /codex plugin .*\.codex\/hooks\.json records; this plugin's hooks stay quiet/ : /codex plugin .*this plugin records/,
    );
  }

  it('from a local path: a session records a sidecar and its events as codex', async () => {
    await codexSession(false);
  });

  it('plugin and a trusted project .codex/hooks.json: each event stored once, one sidecar', async () => {
    await codexSession(true);
  });
});

const GEMINI_SCRIPT: GeminiTurn[] = [
  [{ functionCall: { name: 'write_file', args: { file_path: 'src/auth/token.ts', content: 'export const rotate = () => 1;\n' } } }],
  [{ functionCall: { name: 'run_shell_command', args: { command: 'echo tests pass', description: 'run the tests' } } }],
  [{ text: answerWith('Added token rotation in src/auth/token.ts.') }],
];

describe('Gemini CLI extension, installed by the real client', () => {
  function geminiHome(): string {
    const home = temp('forge-e2e-gemini-ext-');
    mkdirSync(join(home, '.gemini'), { recursive: true });
    writeFileSync(
      join(home, '.gemini', 'settings.json'),
      JSON.stringify({
        security: { auth: { selectedType: 'gemini-api-key' } },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      }),
    );
    return home;
  }

  async function geminiSession(home: string, mode: string | null) {
    const gemini = ensureClient('gemini');
    mock = await startMockServer([geminiRoute(GEMINI_SCRIPT)]);
    const env = baseEnv({
      HOME: home,
      GEMINI_API_KEY: 'mock-not-a-real-key',
      GOOGLE_GEMINI_BASE_URL: mock.url,
      GEMINI_TELEMETRY_ENABLED: 'false',
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
      ...(mode ? { REFLECTION_MODE: mode } : {}),
    });
    const r = await runProcess(gemini, ['-p', 'Add token rotation', '--yolo', '--output-format', 'json'], repo!.dir, env, 180_000);
    expect(r.status, `gemini exited ${r.status}: ${r.stderr.slice(-2000)}`).toBe(0);
    expect(mock.violations.map((v) => `${v.method} ${v.path}`)).toEqual([]);
    return (JSON.parse(r.stdout.slice(r.stdout.indexOf('{'))) as { session_id?: string }).session_id;
  }

  for (const [how, source] of [
    ['plugins/gemini of a local clone', () => join(kitClone(), 'plugins', 'gemini')],
    ["a git URL (the repository's root, served on 127.0.0.1)", () => kitGitUrl()],
  ] as const) {
    it(`from ${how}: a session records a sidecar and its events as gemini; the mode unset records nothing`, async () => {
      const gemini = ensureClient('gemini');
      const home = geminiHome();
      const install = await clientCommand(gemini, ['extensions', 'install', await source(), '--consent'], { HOME: home, GEMINI_CLI_TRUST_WORKSPACE: 'true' });
      expect(install.status, install.text).toBe(0);
      repo = makeScratchRepo();
      const sessionId = await geminiSession(home, 'solo');
      const all = sidecarsOf(repo);
      expect(all).toHaveLength(1);
      expect(all[0]!.agent).toBe('gemini');
      expect(all[0]!.session_id).toBe(sessionId);
      expect(all[0]!.confidence).toBe(REPORT.confidence);
      const log = eventsOf(repo);
      const tools = log.filter((e) => e.type === 'tool.failed' || e.type === 'tool.executed');
      expect(tools.map((e) => `${e.type} ${e.tool_name}`)).toEqual(['tool.executed write_file', 'tool.executed run_shell_command']);
      expect(new Set(log.map((e) => e.runtime))).toEqual(new Set(['gemini']));
      await mock!.close();
      mock = undefined;
      repo.cleanup();
      repo = makeScratchRepo();
      await geminiSession(home, null);
      expect(sidecarsOf(repo)).toEqual([]);
    });
  }
});

describe('the CLI installed globally, used from a repository with no package.json', () => {
  it("npm install -g: the plugin's Stop hook drains with it, and its install and doctor work there", async () => {
    const prefix = temp('forge-e2e-global-');
    // Asynchronous: a long synchronous child would stall the worker's heartbeat to vitest.
    const npm = await runProcess(
      'npm',
      ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', packKit()],
      tmpdir(),
      baseEnv(),
      600_000,
    );
    expect(npm.status, npm.stderr).toBe(0);
    const bin = join(prefix, 'bin');
    expect(existsSync(join(bin, 'forge-reflect'))).toBe(true);
    // A repository of another language: no package.json, no node_modules.
    const dir = join(temp('forge e2e plain '), 'my service');
    mkdirSync(dir, { recursive: true });
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.email=e2e@forge-reflect.invalid', '-c', 'user.name=e2e', '-c', 'commit.gpgsign=false', ...args], {
        cwd: dir,
        encoding: 'utf8',
      });
    git('init', '-q', '-b', 'main');
    writeFileSync(join(dir, 'main.go'), 'package main\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'a Go service');
    const PATH = `${bin}:${process.env.PATH ?? ''}`;
    const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
      spawnSync(join(bin, 'forge-reflect'), args, { cwd: dir, env: baseEnv({ PATH, ...env }), encoding: 'utf8', timeout: 120_000 });

    const configHome = await (async () => {
      const claude = ensureClient('claude');
      const home = temp('forge-e2e-claude-plugin-');
      const configDir = join(home, '.claude');
      const env = { HOME: home, CLAUDE_CONFIG_DIR: configDir, DISABLE_TELEMETRY: '1', DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' };
      expect((await clientCommand(claude, ['plugin', 'marketplace', 'add', kitClone()], env)).status).toBe(0);
      expect((await clientCommand(claude, ['plugin', 'install', 'forge-reflect@forge-reflect'], env)).status).toBe(0);
      return { home, configDir };
    })();
    const doctor = cli(['doctor'], { HOME: configHome.home, CLAUDE_CONFIG_DIR: configHome.configDir });
    expect(doctor.stdout).toMatch(/claude-code plugin .*this plugin records/);
    expect(doctor.stdout).toContain(`the Stop hook drains the spool with ${join(bin, 'forge-reflect')}`);

    mock = await startMockServer([anthropicRoute(CLAUDE_SCRIPT(dir))]);
    const run = await runClaude({
      cwd: dir,
      mockUrl: mock.url,
      prompt: 'Add token rotation',
      env: { HOME: configHome.home, CLAUDE_CONFIG_DIR: configHome.configDir, REFLECTION_MODE: 'solo', PATH },
    });
    expect(run.status, run.stderr.slice(0, 2000)).toBe(0);
    // The drain the Stop hook started (the global CLI) made the log; nothing else ran a CLI here.
    const deadline = Date.now() + 30_000;
    while (!existsSync(join(dir, '.forge', 'events.db')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(existsSync(join(dir, '.forge', 'events.db'))).toBe(true);
    const events = JSON.parse(cli(['events', '--json', '--limit', '1000']).stdout) as
      | Array<Record<string, unknown>>
      | { events: Array<Record<string, unknown>> };
    const log = Array.isArray(events) ? events : events.events;
    expect(log.filter((e) => e.type === 'tool.executed').map((e) => e.tool_name)).toEqual(['Write', 'Bash']);
    expect(new Set(log.map((e) => e.runtime))).toEqual(new Set(['claude-code']));

    // The settings way from the global copy works in this repository too, and then settings record.
    const install = cli(['install'], { HOME: configHome.home, CLAUDE_CONFIG_DIR: configHome.configDir });
    expect(install.status, install.stderr).toBe(0);
    expect(install.stdout).toContain('also has the forge-reflect plugin');
  });
});

describe('the CLI installed with pnpm 10 (a dependency build needs approval)', () => {
  it('pnpm add -D: unapproved, doctor names the unbuilt better-sqlite3 and the hooks still record; approved, install + a session + report', async () => {
    const pnpm = ensureClient('pnpm');
    const root = temp('forge-e2e-pnpm-');
    // pnpm's store, cache, config and state in the test's folder: nothing in the user's home.
    const pnpmEnv = baseEnv({
      XDG_CACHE_HOME: join(root, 'xdg', 'cache'),
      XDG_CONFIG_HOME: join(root, 'xdg', 'config'),
      XDG_DATA_HOME: join(root, 'xdg', 'data'),
      XDG_STATE_HOME: join(root, 'xdg', 'state'),
      PNPM_HOME: join(root, 'pnpm-home'),
      npm_config_store_dir: join(root, 'store'),
    });
    const dir = join(root, 'my project');
    mkdirSync(dir, { recursive: true });
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.email=e2e@forge-reflect.invalid', '-c', 'user.name=e2e', '-c', 'commit.gpgsign=false', ...args], {
        cwd: dir,
        encoding: 'utf8',
      });
    git('init', '-q', '-b', 'main');
    writeFileSync(join(dir, 'package.json'), '{\n  "name": "scratch",\n  "version": "1.0.0",\n  "private": true\n}\n');
    writeFileSync(join(dir, '.gitignore'), 'node_modules/\n');
    const add = await runProcess(pnpm, ['add', '-D', packKit()], dir, pnpmEnv, 600_000);
    expect(add.status, add.stdout + add.stderr).toBe(0);
    expect(add.stdout).toMatch(/Ignored build scripts: better-sqlite3/);
    git('add', '-A');
    git('commit', '-q', '-m', 'scratch project with forge-reflect as a pnpm devDependency');
    // pnpm's layout: better-sqlite3 beside the kit in node_modules/.pnpm, not hoisted to the top.
    const driverDir = dirname(
      createRequire(join(realpathSync(join(dir, 'node_modules', 'forge-reflect-kit')), 'package.json')).resolve('better-sqlite3/package.json'),
    );
    expect(driverDir).toContain(join('node_modules', '.pnpm'));
    const addon = join(driverDir, 'build', 'Release', 'better_sqlite3.node');
    expect(existsSync(addon)).toBe(false);
    const bin = join(dir, 'node_modules', '.bin', 'forge-reflect');
    const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => spawnSync(bin, args, { cwd: dir, env: baseEnv(env), encoding: 'utf8', timeout: 120_000 });

    // Unapproved: install works (it needs no driver); doctor and report name better-sqlite3 and the fix.
    const install = cli(['install']);
    expect(install.status, install.stderr).toBe(0);
    const doctor = cli(['doctor']);
    expect(doctor.status).toBe(1);
    expect(doctor.stdout).toMatch(/✗ event log +better-sqlite3, the log's driver, cannot load \(Could not locate the bindings file/);
    expect(doctor.stdout).toContain(
      'fix: pnpm 10 skips its build until approved: add "pnpm": {"onlyBuiltDependencies": ["better-sqlite3"]} to package.json and run pnpm install',
    );
    const unbuiltReport = cli(['report']);
    expect(unbuiltReport.status).toBe(1);
    expect(unbuiltReport.stderr).toMatch(/^forge-reflect: better-sqlite3, the event log's driver, cannot load .*onlyBuiltDependencies/);
    expect(unbuiltReport.stderr).not.toContain('internal error');

    // A session through the settings registration: the hooks record, the drain cannot, the events wait.
    mock = await startMockServer([anthropicRoute(CLAUDE_SCRIPT(dir))]);
    const run = await runClaude({ cwd: dir, mockUrl: mock.url, prompt: 'Add token rotation', env: { REFLECTION_MODE: 'solo' } });
    expect(run.status, run.stderr.slice(0, 2000)).toBe(0);
    await mock.close();
    mock = undefined;
    const sidecarDir = join(dir, '.forge', 'reflections');
    const sidecars = readdirSync(sidecarDir).filter((n) => n.endsWith('.reflection.json'));
    expect(sidecars).toHaveLength(1);
    const sidecar = JSON.parse(readFileSync(join(sidecarDir, sidecars[0]!), 'utf8')) as Record<string, any>;
    expect(sidecar.session_id).toBe(run.sessionId);
    expect(sidecar.agent).toBe('claude-code');
    expect(sidecar.confidence).toBe(REPORT.confidence);
    expect(sidecar.provenance.degraded).toBe(false);
    // The Stop hook's detached drain failed on the driver: the spool keeps everything, no log was made.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(readdirSync(join(dir, '.forge', 'spool')).length).toBeGreaterThan(0);
    expect(existsSync(join(dir, '.forge', 'events.db'))).toBe(false);

    // Approved as the docs say, then pnpm install builds it (from source: node-gyp against Node's headers).
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ ...manifest, pnpm: { onlyBuiltDependencies: ['better-sqlite3'] } }, null, 2)}\n`);
    const approved = await runProcess(pnpm, ['install'], dir, pnpmEnv, 900_000);
    expect(approved.status, (approved.stdout + approved.stderr).slice(-4000)).toBe(0);
    expect(existsSync(addon)).toBe(true);

    const healthy = cli(['doctor']);
    expect(healthy.stdout).toMatch(/✓ event log +.*better-sqlite3 loads|✓ event log +.*quick_check ok/);
    // The first command drains what waited; report shows the turn's sidecar.
    const report = cli(['report', '--session', String(run.sessionId)]);
    expect(report.status, report.stderr).toBe(0);
    expect(report.stdout).toMatch(/^sidecars +1\n/);
    expect(report.stdout).toMatch(/my project#main +claude-code +auth .* 0\.55 +1: src\/auth\/token\.ts/);
    const events = JSON.parse(cli(['events', '--json', '--limit', '1000']).stdout) as
      | Array<Record<string, unknown>>
      | { events: Array<Record<string, unknown>> };
    const log = Array.isArray(events) ? events : events.events;
    expect(log.filter((e) => e.type === 'tool.executed').map((e) => e.tool_name)).toEqual(['Write', 'Bash']);
    expect(log.filter((e) => e.type === 'turn.stopped')).toHaveLength(1);
    expect(new Set(log.map((e) => e.runtime))).toEqual(new Set(['claude-code']));

    // Approved: a second session through the same hooks, and report shows both turns' sidecars.
    rmSync(join(dir, 'src'), { recursive: true, force: true });
    mock = await startMockServer([anthropicRoute(CLAUDE_SCRIPT(dir))]);
    const again = await runClaude({ cwd: dir, mockUrl: mock.url, prompt: 'Add token rotation', env: { REFLECTION_MODE: 'solo' } });
    expect(again.status, again.stderr.slice(0, 2000)).toBe(0);
    expect(readdirSync(sidecarDir).filter((n) => n.endsWith('.reflection.json'))).toHaveLength(2);
    const both = cli(['report']);
    expect(both.status, both.stderr).toBe(0);
    expect(both.stdout).toMatch(/^sidecars +2\n/);
    expect(cli(['report', '--session', String(again.sessionId)]).stdout).toMatch(/^sidecars +1\n[\s\S]*claude-code +auth .* 0\.55 +1: src\/auth\/token\.ts/);
    const after = JSON.parse(cli(['events', '--json', '--limit', '1000']).stdout) as
      | Array<Record<string, unknown>>
      | { events: Array<Record<string, unknown>> };
    const log2 = (Array.isArray(after) ? after : after.events).filter((e) => e.session_id === again.sessionId);
    expect(log2.filter((e) => e.type === 'tool.executed').map((e) => e.tool_name)).toEqual(['Write', 'Bash']);
  }, 1_200_000);
});
