/**
 * Cline CLI against its real captured payloads (tests/fixtures/runtimes/cline/, from Cline 3.0.65):
 * the wrappers install writes (one executable per event), recognition with and without the
 * envelope's runtime, the failed shell command typed from the per-command result with its exit
 * code, the answer in TaskComplete, the wrappers run the way Cline runs them (absolute path, cwd the
 * workspace, payload on stdin), install / uninstall byte for byte, and doctor.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { recognise, guessShape } from '../src/runtimes/shapes.js';
import { bindingsFor } from '../src/runtimes/hook-map.js';
import { parseRuntimes } from '../src/runtimes/index.js';
import { cline, clineAnswer, clineHookFiles, clineToolOutcome, CLINE_HOOKS_DIR } from '../src/runtimes/cline.js';
import { answerFromPayload, lastReflectionBlock } from '../src/sidecar/answer-block.js';
import { cleanupTempDirs, CLI, KIT_ROOT, tempDir } from './helpers/spool.js';

const DIR = join(KIT_ROOT, 'tests', 'fixtures', 'runtimes', 'cline');
const fixture = (name: string) => JSON.parse(readFileSync(join(DIR, name), 'utf8')) as Record<string, unknown>;
const payloads = readdirSync(DIR)
  .filter((n) => /^\d{3}-.*\.json$/.test(n))
  .sort();
const SESSION = '1796194525360_6s74g';

afterEach(cleanupTempDirs);

describe('Cline registration: one wrapper per event', () => {
  const files = clineHookFiles();

  it('runtime/cline/ holds the generated wrappers, executable (drift)', () => {
    for (const f of files) {
      const path = join(KIT_ROOT, 'runtime', 'cline', f.rel);
      expect(readFileSync(path, 'utf8'), f.rel).toBe(f.text);
      expect(statSync(path).mode & 0o111).not.toBe(0);
    }
  });

  it('named after the Cline events, in .clinerules/hooks/, TaskComplete served by the stop hook', () => {
    expect(files.map((f) => f.rel)).toEqual(bindingsFor('cline').map((b) => `${CLINE_HOOKS_DIR}/${b.event}`));
    expect(files.map((f) => f.rel.split('/').pop())).toEqual(expect.arrayContaining(['TaskStart', 'PostToolUse', 'TaskComplete']));
    for (const f of files) {
      expect(f.mode).toBe(0o755);
      expect(f.text.startsWith('#!/bin/sh\n')).toBe(true);
      expect(f.text).toContain('exit 0 ;; esac');
      expect(f.text).toMatch(/exec bash "\$script" .*cline >\/dev\/null\nexit 0\n$/);
    }
    expect(files.find((f) => f.rel.endsWith('/TaskComplete'))?.text).toContain('reflect-stop-hook.sh');
    expect(files.find((f) => f.rel.endsWith('/PostToolUse'))?.text).toContain('reflect-event-hook.sh');
    expect(files.find((f) => f.rel.endsWith('/PostToolUse'))?.text).toContain('"$script" PostToolUse cline');
  });

  it('--runtime cline and all', () => {
    expect(parseRuntimes('cline')).toEqual(['cline']);
    expect(parseRuntimes('all')).toContain('cline');
  });
});

const EXPECTED: Record<string, { type: string; hookEvent: string; toolName?: string; toolUseId?: string }> = {
  '001-TaskStart.json': { type: 'session.started', hookEvent: 'TaskStart' },
  '002-PreToolUse.json': { type: 'event.unknown', hookEvent: 'PreToolUse', toolName: 'editor', toolUseId: 'call_1' },
  '003-PostToolUse.json': { type: 'tool.executed', hookEvent: 'PostToolUse', toolName: 'editor', toolUseId: 'call_1' },
  '005-PostToolUse.json': { type: 'tool.failed', hookEvent: 'PostToolUse', toolName: 'run_commands', toolUseId: 'call_2' },
  '007-PostToolUse.json': { type: 'tool.executed', hookEvent: 'PostToolUse', toolName: 'run_commands', toolUseId: 'call_3' },
  '008-TaskComplete.json': { type: 'turn.stopped', hookEvent: 'TaskComplete' },
};

describe('Cline payloads', () => {
  it.each(Object.entries(EXPECTED))('%s: typed with the hint (the wrapper names the event), and by its shape alone', (name, want) => {
    const p = fixture(name);
    for (const r of [recognise(p, want.hookEvent, 'cline'), guessShape(p, '')]) {
      expect(r.runtime).toBe('cline');
      expect(r.type).toBe(want.type);
      expect(r.hookEvent).toBe(want.hookEvent);
      expect(r.sessionId).toBe(SESSION);
      expect(r.agentId).toBe('agent_1796194525618_qs6vl9');
      expect(r.cwd).toBe('/tmp/cline-run.d92lPW/repo');
      if (want.toolName) expect(r.toolName).toBe(want.toolName);
      if (want.toolUseId) expect(r.toolUseId).toBe(want.toolUseId);
    }
  });

  it("every captured payload is recognised as cline; the Stop hook's envelope event reads as TaskComplete", () => {
    for (const name of payloads) expect(guessShape(fixture(name), '').runtime, name).toBe('cline');
    expect(recognise(fixture('008-TaskComplete.json'), 'Stop', 'cline')).toMatchObject({ type: 'turn.stopped', hookEvent: 'TaskComplete' });
    expect(recognise(fixture('009-SessionShutdown.json'), 'SessionShutdown', 'cline').type).toBe('session.ended');
  });

  it('durations come from tool_result.durationMs', () => {
    expect(recognise(fixture('005-PostToolUse.json'), 'PostToolUse', 'cline').durationMs).toBe(46);
  });

  it('the failed command: postToolUse.success is true, the failure and exit code 3 are in the per-command output', () => {
    const failed = fixture('005-PostToolUse.json');
    expect((failed.postToolUse as { success: boolean }).success).toBe(true);
    expect(clineToolOutcome(failed)).toEqual({ failed: true, exitCode: 3 });
    expect(clineToolOutcome(fixture('007-PostToolUse.json'))).toEqual({ failed: false, exitCode: null });
    expect(clineToolOutcome(fixture('003-PostToolUse.json'))).toEqual({ failed: false, exitCode: null });
    // Several commands: the first failure's code; a tool that threw is a failure without one.
    const two = {
      ...failed,
      tool_result: {
        output: [
          { query: 'true', result: '', success: true },
          { query: 'false', error: 'Command exited with code 1', success: false },
        ],
      },
    };
    expect(clineToolOutcome(two)).toEqual({ failed: true, exitCode: 1 });
    expect(clineToolOutcome({ postToolUse: { success: false } })).toEqual({ failed: true, exitCode: null });
    expect(recognise({ ...fixture('003-PostToolUse.json'), postToolUse: { success: false } }, 'PostToolUse', 'cline').type).toBe('tool.failed');
  });

  it('TaskComplete carries the final answer with its reflection block (turn.outputText)', () => {
    const p = fixture('008-TaskComplete.json');
    const answer = answerFromPayload(JSON.stringify(p));
    expect(answer).toBe(clineAnswer(p));
    const block = lastReflectionBlock(answer as string);
    expect(block.kind).toBe('block');
    expect(JSON.parse((block as { text: string }).text).confidence).toBe(0.6);
  });

  it('a spawn_agent subagent: its TaskComplete is subagent.stopped under its own agent id, in the session; its TaskStart no new session', () => {
    const sub = (name: string) => JSON.parse(readFileSync(join(DIR, 'subagent', name), 'utf8')) as Record<string, unknown>;
    const end = recognise(sub('003-TaskComplete.json'), 'Stop', 'cline');
    expect(end).toMatchObject({ runtime: 'cline', type: 'subagent.stopped', hookEvent: 'TaskComplete', agentId: sub('003-TaskComplete.json').agent_id });
    expect(end.sessionId).toBe(recognise(sub('001-TaskStart.json'), 'TaskStart', 'cline').sessionId);
    expect(recognise(sub('002-TaskStart.json'), 'TaskStart', 'cline').type).toBe('event.unknown');
    expect(recognise(sub('001-TaskStart.json'), 'TaskStart', 'cline').type).toBe('session.started');
    expect(recognise(sub('005-TaskComplete.json'), 'Stop', 'cline').type).toBe('turn.stopped');
  });

  it("a model error: TaskError (no TaskComplete) is the turn's end, the error in the payload", () => {
    const p = JSON.parse(readFileSync(join(DIR, 'model-error', '002-TaskError.json'), 'utf8')) as Record<string, unknown>;
    expect(recognise(p, 'Stop', 'cline')).toMatchObject({ runtime: 'cline', type: 'turn.stopped', hookEvent: 'TaskError' });
    expect(answerFromPayload(JSON.stringify(p))).toBeNull();
  });

  it("another runtime's payload is not taken for Cline's", () => {
    expect(guessShape({ session_id: 's', hook_event_name: 'Stop', last_assistant_message: 'x' }, '').runtime).toBe('claude-code');
    expect(guessShape({ hookName: 'something_else' }, '').runtime).not.toBe('cline');
  });
});

function vendor(dir: string): void {
  mkdirSync(join(dir, '.claude', 'hooks', 'forge-reflect', 'lib'), { recursive: true });
  for (const name of ['reflect-event-hook.sh', 'reflect-stop-hook.sh'])
    writeFileSync(join(dir, '.claude', 'hooks', 'forge-reflect', name), readFileSync(join(KIT_ROOT, 'hooks', name)));
  for (const name of readdirSync(join(KIT_ROOT, 'hooks', 'lib')))
    writeFileSync(join(dir, '.claude', 'hooks', 'forge-reflect', 'lib', name), readFileSync(join(KIT_ROOT, 'hooks', 'lib', name)));
  mkdirSync(join(dir, CLINE_HOOKS_DIR), { recursive: true });
  for (const f of clineHookFiles()) {
    writeFileSync(join(dir, f.rel), f.text);
    chmodSync(join(dir, f.rel), f.mode);
  }
}

/** Runs a wrapper the way Cline does: by its absolute path, cwd the workspace, its environment, the payload on stdin. */
function runAsCline(dir: string, event: string, payload: string, env: NodeJS.ProcessEnv = {}) {
  const clineEnv = (fixture('hook-env.json') as { env: Record<string, string> }).env;
  const hookEnv: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: dir, ...clineEnv, PWD: dir, REFLECTION_MODE: 'solo', FORGE_REFLECT_CLI: 'off', ...env };
  return spawnSync(join(dir, CLINE_HOOKS_DIR, event), [], { cwd: dir, env: hookEnv, input: payload, encoding: 'utf8' });
}

function spooled(dir: string): string {
  const spool = join(dir, '.forge', 'spool');
  if (!existsSync(spool)) return '';
  return readdirSync(spool)
    .filter((n) => !n.startsWith('.'))
    .map((n) => readFileSync(join(spool, n), 'latin1'))
    .join('\n');
}

describe('the wrappers run by Cline', () => {
  const failed = readFileSync(join(DIR, '005-PostToolUse.json'), 'utf8');

  it('PostToolUse spools the event as cline, prints nothing (no decision Cline would act on), exits 0', () => {
    const dir = join(tempDir('forge cline '), 'my repo');
    mkdirSync(dir);
    vendor(dir);
    const r = runAsCline(dir, 'PostToolUse', failed);
    expect([r.status, r.stdout, r.stderr]).toEqual([0, '', '']);
    expect(spooled(dir)).toContain('"runtime":"cline"');
    expect(spooled(dir)).toContain('"event":"PostToolUse"');
  });

  it('the state goes to the folder holding .clinerules/hooks/, wherever the hook is started from', () => {
    const dir = join(tempDir('forge cline '), 'proj');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    vendor(dir);
    const r = spawnSync(join(dir, CLINE_HOOKS_DIR, 'PostToolUse'), [], {
      cwd: join(dir, 'sub'),
      env: { PATH: process.env.PATH, HOME: dir, REFLECTION_MODE: 'solo', FORGE_REFLECT_CLI: 'off' },
      input: failed,
      encoding: 'utf8',
    });
    expect([r.status, r.stdout]).toEqual([0, '']);
    expect(spooled(dir)).toContain('"runtime":"cline"');
    expect(existsSync(join(dir, 'sub', '.forge'))).toBe(false);
  });

  it("a copy in another hook folder Cline runs (~/.cline/hooks/) records nothing where the workspace has the kit's wrapper: one row", () => {
    const dir = join(tempDir('forge cline '), 'proj');
    mkdirSync(dir);
    vendor(dir);
    const home = tempDir();
    mkdirSync(join(home, '.cline', 'hooks'), { recursive: true });
    const copy = join(home, '.cline', 'hooks', 'PostToolUse');
    writeFileSync(copy, readFileSync(join(dir, CLINE_HOOKS_DIR, 'PostToolUse')));
    chmodSync(copy, 0o755);
    const env = { PATH: process.env.PATH, HOME: home, REFLECTION_MODE: 'solo', FORGE_REFLECT_CLI: 'off' };
    const dup = spawnSync(copy, [], { cwd: dir, env, input: failed, encoding: 'utf8' });
    expect([dup.status, dup.stdout]).toEqual([0, '']);
    expect(spooled(dir)).toBe('');
    expect(runAsCline(dir, 'PostToolUse', failed).status).toBe(0);
    expect(spooled(dir).match(/"runtime":"cline"/g)).toHaveLength(1);
    // Without the workspace's wrapper the copy is the registration: it records, in the cwd's project.
    rmSync(join(dir, CLINE_HOOKS_DIR), { recursive: true });
    rmSync(join(dir, '.forge'), { recursive: true });
    const alone = spawnSync(copy, [], { cwd: dir, env, input: failed, encoding: 'utf8' });
    expect([alone.status, alone.stdout]).toEqual([0, '']);
    expect(spooled(dir).match(/"runtime":"cline"/g)).toHaveLength(1);
  });

  it("TaskComplete writes the turn's sidecar as cline, with the self-report from turn.outputText; nothing on stdout", () => {
    const dir = join(tempDir('forge cline '), 'repo');
    mkdirSync(dir);
    spawnSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
    vendor(dir);
    const start = runAsCline(dir, 'TaskStart', readFileSync(join(DIR, '001-TaskStart.json'), 'utf8'));
    expect([start.status, start.stdout]).toEqual([0, '']);
    expect(existsSync(join(dir, '.forge', 'sessions', `${SESSION}.base`))).toBe(true);
    const r = runAsCline(dir, 'TaskComplete', readFileSync(join(DIR, '008-TaskComplete.json'), 'utf8'));
    expect([r.status, r.stdout]).toEqual([0, '']);
    const sidecars = readdirSync(join(dir, '.forge', 'reflections')).filter((n) => n.endsWith('.reflection.json'));
    expect(sidecars).toHaveLength(1);
    const sidecar = JSON.parse(readFileSync(join(dir, '.forge', 'reflections', sidecars[0] as string), 'utf8'));
    expect(sidecar).toMatchObject({
      agent: 'cline',
      session_id: SESSION,
      confidence: 0.6,
      most_likely_wrong: { surface: 'auth', description: 'token expiry' },
    });
    expect(sidecar.provenance.degraded).toBe(false);
  });

  it("a subagent's TaskComplete is spooled, no sidecar; a TaskError gets the turn's sidecar, degraded", () => {
    const dir = join(tempDir('forge cline '), 'repo');
    mkdirSync(dir);
    spawnSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
    vendor(dir);
    const sub = runAsCline(dir, 'TaskComplete', readFileSync(join(DIR, 'subagent', '003-TaskComplete.json'), 'utf8'));
    expect([sub.status, sub.stdout]).toEqual([0, '']);
    expect(existsSync(join(dir, '.forge', 'reflections'))).toBe(false);
    expect(spooled(dir)).toContain('"hookName": "agent_end"');
    const failed = runAsCline(dir, 'TaskError', readFileSync(join(DIR, 'model-error', '002-TaskError.json'), 'utf8'));
    expect([failed.status, failed.stdout]).toEqual([0, '']);
    const sidecars = readdirSync(join(dir, '.forge', 'reflections')).filter((n) => n.endsWith('.reflection.json'));
    expect(sidecars).toHaveLength(1);
    const sidecar = JSON.parse(readFileSync(join(dir, '.forge', 'reflections', sidecars[0] as string), 'utf8'));
    expect(sidecar).toMatchObject({ agent: 'cline', session_id: '1796285997620_08on6', confidence: null });
    expect(sidecar.provenance.degraded).toBe(true);
  });

  it('the mode unset: nothing is written; the kit missing: exit 0, silent', () => {
    const dir = tempDir();
    vendor(dir);
    for (const event of ['TaskStart', 'PostToolUse', 'TaskComplete']) {
      const off = runAsCline(dir, event, failed, { REFLECTION_MODE: '' });
      expect([off.status, off.stdout, off.stderr]).toEqual([0, '', '']);
    }
    expect(existsSync(join(dir, '.forge'))).toBe(false);
    const bare = tempDir();
    vendor(bare);
    rmSync(join(bare, '.claude'), { recursive: true });
    const missing = runAsCline(bare, 'TaskComplete', failed);
    expect([missing.status, missing.stdout, missing.stderr]).toEqual([0, '', '']);
    expect(existsSync(join(bare, '.forge'))).toBe(false);
  });
});

function cli(args: string[], cwd: string, env: Record<string, string> = {}) {
  const base = { ...process.env };
  for (const key of Object.keys(base)) if (/^(REFLECTION_|FORGE_|CLAUDE_|GEMINI_|CODEX_|CLINE_)/.test(key)) delete base[key];
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    env: { ...base, NO_COLOR: '1', FORGE_REFLECT_CLI: 'off', HOME: cwd, ...env },
    encoding: 'utf8',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function repo(): string {
  const dir = join(tempDir('forge inst '), 'my repo');
  mkdirSync(dir, { recursive: true });
  spawnSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
  return dir;
}

/** Every file and folder under `root` (but .git and .forge) with its bytes and mode. */
function tree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (dir === root && (e.name === '.git' || e.name === '.forge')) continue;
      const path = join(dir, e.name);
      const mode = (statSync(path).mode & 0o777).toString(8);
      if (e.isDirectory()) {
        out[`${path.slice(root.length + 1)}/`] = mode;
        walk(path);
      } else out[path.slice(root.length + 1)] = `${mode} ${readFileSync(path).toString('base64')}`;
    }
  };
  walk(root);
  return out;
}

describe('install / uninstall / doctor --runtime cline', () => {
  it('install writes the executable wrappers; a second install changes nothing; uninstall gives the tree back byte for byte', () => {
    const dir = repo();
    mkdirSync(join(dir, '.clinerules', 'hooks'), { recursive: true });
    writeFileSync(join(dir, '.clinerules', 'style.md'), 'keep tabs\n');
    writeFileSync(join(dir, '.clinerules', 'hooks', 'TaskStart.sh'), '#!/bin/sh\nexit 0\n', { mode: 0o700 });
    const before = tree(dir);
    const first = cli(['install', '--runtime', 'cline'], dir);
    expect(first.status, first.stderr).toBe(0);
    for (const f of clineHookFiles()) {
      expect(readFileSync(join(dir, f.rel), 'utf8')).toBe(f.text);
      expect(statSync(join(dir, f.rel)).mode & 0o777).toBe(0o755);
    }
    expect(cli(['install', '--runtime', 'cline'], dir).stdout).toMatch(/Already installed: nothing changed/);
    const un = cli(['uninstall', '--runtime', 'cline'], dir);
    expect(un.status, un.stderr).toBe(0);
    expect(tree(dir)).toEqual(before);
  });

  it('in a repo without .clinerules/: uninstall takes out the folders install created', () => {
    const dir = repo();
    expect(cli(['install', '--runtime', 'cline'], dir).status).toBe(0);
    expect(cli(['uninstall', '--runtime', 'cline'], dir).status).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['.forge', '.git']);
  });

  it("a hook file of the user's under the same name is never overwritten; one edited after install is kept", () => {
    const dir = repo();
    mkdirSync(join(dir, '.clinerules', 'hooks'), { recursive: true });
    writeFileSync(join(dir, '.clinerules', 'hooks', 'TaskComplete'), '#!/bin/sh\necho mine\n');
    const r = cli(['install', '--runtime', 'cline'], dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/TaskComplete exists and is not forge-reflect's.*nothing was changed/);
    expect(readdirSync(join(dir, '.clinerules', 'hooks'))).toEqual(['TaskComplete']);
    expect(existsSync(join(dir, '.claude'))).toBe(false);

    const other = repo();
    expect(cli(['install', '--runtime', 'cline'], other).status).toBe(0);
    writeFileSync(join(other, '.clinerules', 'hooks', 'TaskStart'), '#!/bin/sh\n# edited\nexit 0\n');
    const un = cli(['uninstall', '--runtime', 'cline'], other);
    expect(un.stdout).toMatch(/kept \.clinerules\/hooks\/TaskStart: it was changed after install/);
    expect(readdirSync(join(other, '.clinerules', 'hooks'))).toEqual(['TaskStart']);
  });

  it('with Claude Code installed too, uninstalling one keeps the vendored kit for the other', () => {
    const dir = repo();
    expect(cli(['install', '--runtime', 'claude-code', '--runtime', 'cline'], dir).status).toBe(0);
    const un = cli(['uninstall', '--runtime', 'claude-code'], dir);
    expect(un.stdout).toMatch(/kept \.claude\/hooks\/forge-reflect\/: \.clinerules\/hooks still registers/);
    expect(existsSync(join(dir, '.claude', 'hooks', 'forge-reflect', 'reflect-stop-hook.sh'))).toBe(true);
    expect(cli(['uninstall', '--runtime', 'cline'], dir).status).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['.forge', '.git']);
  });

  it("doctor: the wrappers there and executable; one not executable fails; the kit's wrappers in another hook folder warn", () => {
    const dir = repo();
    expect(cli(['install', '--runtime', 'cline'], dir).status).toBe(0);
    const home = tempDir();
    expect(cline.doctorChecks(dir, { HOME: home }).map((c) => `${c.name} ${c.status}`)).toEqual(['cline hook files ok']);
    const doctor = cli(['doctor', '--json'], dir, { HOME: home });
    expect((JSON.parse(doctor.stdout) as { checks: Array<{ name: string; status: string }> }).checks.find((c) => c.name === 'cline hook files')?.status).toBe(
      'ok',
    );
    chmodSync(join(dir, CLINE_HOOKS_DIR, 'TaskComplete'), 0o644);
    const bad = cline.doctorChecks(dir, { HOME: home }).find((c) => c.name === 'cline hook files');
    expect(bad?.status).toBe('fail');
    expect(bad?.detail).toMatch(/TaskComplete is not executable/);
    mkdirSync(join(home, '.cline', 'hooks'), { recursive: true });
    writeFileSync(join(home, '.cline', 'hooks', 'PostToolUse'), readFileSync(join(dir, CLINE_HOOKS_DIR, 'PostToolUse')));
    expect(cline.doctorChecks(dir, { HOME: home }).find((c) => c.name === 'cline hook folders')?.status).toBe('warn');
  });
});
