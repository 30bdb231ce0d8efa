/**
 * The registered command strings, run the way each runtime runs them: Claude Code `sh -c` with
 * CLAUDE_PROJECT_DIR; Codex `/bin/bash -c` in the session's cwd with no project variable; Gemini
 * `bash -c` after its two rewrites (settings-load `$VAR` expansion from its own environment, then
 * `$GEMINI_PROJECT_DIR` replaced by the shell-quoted project path). In repos whose paths hold spaces
 * and quotes, against a fake vendored hook that records what it got; and with the hooks gone, every
 * command exits 0 and prints nothing. Then the real vendored hooks through the Codex and Gemini
 * commands: the spool envelope names the runtime and the state stays at the project.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REFLECTION_MODES } from '@forge-reflect/reflection-types';
import { VENDORED_DIR, type RuntimeModule } from '../src/runtimes/module.js';
import { claudeCode } from '../src/runtimes/claude-code.js';
import { codex } from '../src/runtimes/codex.js';
import { gemini } from '../src/runtimes/gemini.js';
import { bindingsFor } from '../src/runtimes/hook-map.js';
import { cleanupTempDirs, CLI, KIT_ROOT, spooledEnvelopes, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

/** shell-quote's quote(), which Gemini uses for the paths it inserts. */
function shellQuote(s: string): string {
  if (/["\s]/.test(s) && !/'/.test(s)) return `'${s.replace(/(['\\])/g, '\\$1')}'`;
  if (/["'\s]/.test(s)) return `"${s.replace(/(["\\$`!])/g, '\\$1')}"`;
  return s.replace(/([A-Za-z]:)?([#!"$&'()*,:;<=>?@[\\\]^`{|}])/g, '$1\\$2');
}

/** Gemini's settings-load expansion: `$NAME`, `${NAME}`, `${NAME:-default}` from its environment; unset names stay. */
function geminiLoadExpand(text: string, env: Record<string, string | undefined>): string {
  return text.replace(/\$(?:(\w+)|\{([^}]+?)(?::-([^}]*))?\})/g, (match, a?: string, b?: string, fallback?: string) => {
    const value = env[(a ?? b) as string];
    if (typeof value === 'string') return value;
    return fallback ?? match;
  });
}

const FAKE_HOOK = `#!/usr/bin/env bash
{ printf 'args=%s\\n' "$*"; printf 'project=%s\\n' "\${FORGE_PROJECT_DIR:-}"; printf 'pwd=%s\\n' "$PWD"; printf 'mode=%s\\n' "\${REFLECTION_MODE:-}"; printf 'stdin=%s\\n' "$(cat)"; } >>"$FAKE_OUT"
`;

function fakeRepo(name: string): string {
  const repo = join(tempDir('forge cmd '), name);
  mkdirSync(join(repo, VENDORED_DIR), { recursive: true });
  for (const script of ['reflect-event-hook.sh', 'reflect-stop-hook.sh']) {
    writeFileSync(join(repo, VENDORED_DIR, script), FAKE_HOOK);
    chmodSync(join(repo, VENDORED_DIR, script), 0o755);
  }
  mkdirSync(join(repo, 'src', 'deep dir'), { recursive: true });
  return repo;
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  record: string;
}

/** Runs one registered command as its runtime would, in `cwd` for the project `repo`. */
function runAs(module: RuntimeModule, command: string, repo: string, cwd: string, out: string, extraEnv: Record<string, string> = {}): Run {
  const env: Record<string, string | undefined> = { PATH: process.env.PATH, HOME: process.env.HOME, FAKE_OUT: out, REFLECTION_MODE: 'solo', ...extraEnv };
  let shell = 'bash';
  let text = command;
  if (module.id === 'claude-code') {
    shell = 'sh';
    env.CLAUDE_PROJECT_DIR = repo;
  } else if (module.id === 'gemini') {
    text = geminiLoadExpand(text, { ...env, PWD: cwd }).replace(/\$GEMINI_PROJECT_DIR/g, shellQuote(repo));
    env.GEMINI_PROJECT_DIR = repo;
  }
  const result = spawnSync(shell, ['-c', text], { cwd, env: env as NodeJS.ProcessEnv, input: '{"hook_event_name":"X"}', encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, record: existsSync(out) ? readFileSync(out, 'utf8') : '' };
}

describe.each([
  ['claude-code', claudeCode],
  ['codex', codex],
  ['gemini', gemini],
] as const)('%s commands', (_id, module) => {
  for (const name of ['my repo', "it's a repo"]) {
    it(`find the vendored hook in a repo named ${JSON.stringify(name)} and pass event, runtime and stdin`, () => {
      const repo = fakeRepo(name);
      for (const b of bindingsFor(module.id)) {
        const out = join(repo, '..', `out-${b.event}`);
        const run = runAs(module, module.command(b.hook, b.event), repo, repo, out);
        expect(run, b.event).toMatchObject({ status: 0, stdout: '', stderr: '' });
        const args = b.hook === 'event' ? `${b.event} ${module.id}` : module.id;
        expect(run.record).toContain(`args=${args}\n`);
        expect(run.record).toContain('stdin={"hook_event_name":"X"}');
        if (module.id !== 'claude-code') expect(run.record).toContain(`project=${repo}\n`);
      }
    });
  }

  it('exit 0 and print nothing when the vendored hooks are gone', () => {
    const dir = join(tempDir('forge gone '), 'no kit here');
    mkdirSync(dir, { recursive: true });
    for (const b of bindingsFor(module.id)) {
      const run = runAs(module, module.command(b.hook, b.event), dir, dir, join(dir, 'out'));
      expect(run, b.event).toEqual({ status: module.id === 'claude-code' ? 127 : 0, stdout: '', stderr: run.stderr, record: '' });
      if (module.id !== 'claude-code') expect(run.stderr).toBe('');
    }
  });
});

describe('Claude Code: a BASH_ENV of the user', () => {
  it("is not run by the hook's bash: nothing of it reaches the hook's stdout, and the hook still runs", () => {
    const repo = fakeRepo('bash env');
    const marker = join(repo, '..', 'bash-env-ran');
    const bashEnv = join(repo, '..', 'bash-env.sh');
    // What such a file may do: print, and take time (nvm's loader, say).
    writeFileSync(bashEnv, `echo 'printed by BASH_ENV'\n: >>'${marker}'\n`);
    for (const b of bindingsFor('claude-code')) {
      const out = join(repo, '..', `out-${b.event}`);
      const run = runAs(claudeCode, claudeCode.command(b.hook, b.event), repo, repo, out, { BASH_ENV: bashEnv });
      expect(run, b.event).toMatchObject({ status: 0, stdout: '', stderr: '' });
      expect(run.record).toContain('stdin={"hook_event_name":"X"}');
    }
    expect(existsSync(marker)).toBe(false);
  });
});

describe('Codex runs hooks in the session cwd with no project variable', () => {
  it('a session started in a subfolder still finds the project (walks up, no git needed)', () => {
    const repo = fakeRepo('walk up');
    const out = join(repo, '..', 'out');
    const run = runAs(codex, codex.command('event', 'PostToolUse'), repo, join(repo, 'src', 'deep dir'), out);
    expect(run).toMatchObject({ status: 0, stdout: '', stderr: '' });
    expect(run.record).toContain(`project=${repo}\n`);
    expect(run.record).toContain(`pwd=${join(repo, 'src', 'deep dir')}\n`);
  });
  it('POSIX sh too (newer Codex may run hooks with /bin/sh -lc)', () => {
    const repo = fakeRepo('plain sh');
    const out = join(repo, '..', 'out');
    const run = spawnSync('sh', ['-c', codex.command('stop', 'Stop')], {
      cwd: join(repo, 'src'),
      env: { PATH: process.env.PATH, FAKE_OUT: out },
      input: '{}',
      encoding: 'utf8',
    });
    expect(run).toMatchObject({ status: 0, stdout: '', stderr: '' });
    expect(readFileSync(out, 'utf8')).toContain(`args=codex\nproject=${repo}\n`);
    const none = spawnSync('sh', ['-c', codex.command('stop', 'Stop')], { cwd: tempDir('forge none '), env: { PATH: process.env.PATH }, encoding: 'utf8' });
    expect(none).toMatchObject({ status: 0, stdout: '', stderr: '' });
  });
  it('a copied Claude command would not find the hooks (why Codex gets its own)', () => {
    const repo = fakeRepo('copied');
    const run = spawnSync('bash', ['-c', claudeCode.command('event', 'PostToolUse')], {
      cwd: repo,
      env: { PATH: process.env.PATH, REFLECTION_MODE: 'solo' },
      encoding: 'utf8',
    });
    expect(run.status).toBe(127);
  });
});

describe('Claude Code: with the mode off the command starts nothing', () => {
  /** A `bash` first on PATH that notes each start, then runs the real one. */
  function spyPath(): { path: string; log: string } {
    const bin = tempDir('forge spy ');
    const log = join(bin, 'started');
    const realBash = spawnSync('sh', ['-c', 'command -v bash'], { encoding: 'utf8' }).stdout.trim();
    writeFileSync(join(bin, 'bash'), `#!/bin/sh\necho bash >>'${log}'\nexec '${realBash}' "$@"\n`);
    chmodSync(join(bin, 'bash'), 0o755);
    return { path: `${bin}:${process.env.PATH}`, log };
  }

  it('mode unset, off or unknown: sh runs no bash and no hook, exit 0, silent', () => {
    const repo = fakeRepo('off');
    const spy = spyPath();
    for (const mode of [undefined, '', 'off', 'nope', 'SOLO']) {
      for (const b of bindingsFor('claude-code')) {
        const out = join(repo, '..', 'out');
        const env: Record<string, string | undefined> = { PATH: spy.path, CLAUDE_PROJECT_DIR: repo, FAKE_OUT: out };
        if (mode !== undefined) env.REFLECTION_MODE = mode;
        const run = spawnSync('sh', ['-c', claudeCode.command(b.hook, b.event)], { cwd: repo, env: env as NodeJS.ProcessEnv, input: '{}', encoding: 'utf8' });
        expect(run, `${mode} ${b.event}`).toMatchObject({ status: 0, stdout: '', stderr: '' });
        expect(existsSync(out)).toBe(false);
      }
    }
    expect(existsSync(spy.log)).toBe(false);
  });

  it('solo and orchestrated start bash once, by name (no env from the shebang)', () => {
    const repo = fakeRepo('on');
    const spy = spyPath();
    for (const mode of ['solo', 'orchestrated']) {
      const out = join(repo, '..', `out-${mode}`);
      const run = spawnSync('sh', ['-c', claudeCode.command('event', 'PostToolUse')], {
        cwd: repo,
        env: { PATH: spy.path, CLAUDE_PROJECT_DIR: repo, FAKE_OUT: out, REFLECTION_MODE: mode },
        input: '{}',
        encoding: 'utf8',
      });
      expect(run).toMatchObject({ status: 0, stdout: '', stderr: '' });
      expect(readFileSync(out, 'utf8')).toContain(`mode=${mode}\n`);
    }
    expect(readFileSync(spy.log, 'utf8')).toBe('bash\nbash\n');
  });

  it("the modes in the command are the hooks' own: REFLECTION_MODES without off, as in each script's first check", () => {
    const command = claudeCode.command('event', 'PostToolUse');
    const inCommand = /case "\$REFLECTION_MODE" in ([a-z|]+)\)/.exec(command)?.[1]?.split('|');
    expect(inCommand).toEqual(REFLECTION_MODES.filter((m) => m !== 'off'));
    for (const script of ['reflect-event-hook.sh', 'reflect-stop-hook.sh']) {
      const text = readFileSync(join(KIT_ROOT, 'hooks', script), 'utf8');
      const inScript = /case "\$\{REFLECTION_MODE:-\}" in ([a-z |]+)\)/
        .exec(text)?.[1]
        ?.split('|')
        .map((m) => m.trim());
      expect(inScript, script).toEqual(inCommand);
    }
  });
});

describe('Gemini: the REFLECTION_MODE passthrough', () => {
  it('"${REFLECTION_MODE:-off}" becomes the user\'s value, or off when unset', () => {
    const env = gemini.handler('event', 'AfterTool', 10).env as Record<string, string>;
    expect(geminiLoadExpand(env.REFLECTION_MODE as string, { REFLECTION_MODE: 'solo' })).toBe('solo');
    expect(geminiLoadExpand(env.REFLECTION_MODE as string, {})).toBe('off');
  });
});

function cli(args: string[], cwd: string, env: Record<string, string> = {}) {
  const base = { ...process.env };
  for (const key of Object.keys(base)) if (/^(REFLECTION_|FORGE_|CLAUDE_|GEMINI_)/.test(key)) delete base[key];
  return spawnSync(process.execPath, [CLI, ...args], { cwd, env: { ...base, NO_COLOR: '1', FORGE_REFLECT_CLI: 'off', ...env }, encoding: 'utf8' });
}

function gitRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  spawnSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
  return dir;
}

describe('the real vendored hooks through the Codex and Gemini commands', () => {
  const payload = (runtime: string, name: string) => readFileSync(join(KIT_ROOT, 'tests', 'fixtures', 'runtimes', runtime, name), 'utf8');

  it('Codex PostToolUse from a subfolder: one spooled event under <repo>/.forge, envelope runtime codex', () => {
    const repo = gitRepo(join(tempDir('forge real '), 'codex repo'));
    expect(cli(['install', '--runtime', 'codex', '--repo', repo], repo).status).toBe(0);
    const hooks = JSON.parse(readFileSync(join(repo, '.codex', 'hooks.json'), 'utf8'));
    const command = hooks.hooks.PostToolUse[0].hooks[0].command as string;
    mkdirSync(join(repo, 'pkg'), { recursive: true });
    const run = spawnSync('/bin/bash', ['-c', command], {
      cwd: join(repo, 'pkg'),
      env: { PATH: process.env.PATH, HOME: process.env.HOME, REFLECTION_MODE: 'solo' },
      input: payload('codex', 'PostToolUse.2.Bash.exit1.json'),
      encoding: 'utf8',
    });
    expect(run).toMatchObject({ status: 0, stdout: '' });
    const envelopes = spooledEnvelopes(join(repo, '.forge'));
    expect(envelopes).toHaveLength(1);
    expect(envelopes[0]).toMatchObject({ event: 'PostToolUse', runtime: 'codex' });
    const events = cli(['events', '--runtime', 'codex', '--json'], repo);
    expect(JSON.parse(events.stdout)).toMatchObject([{ runtime: 'codex', hook_event: 'PostToolUse', tool_use_id: 'call_2' }]);
  });

  it('Gemini AfterTool with mode unset in the parent: the env passthrough keeps the kit off, nothing written', () => {
    const repo = gitRepo(join(tempDir('forge real '), 'gemini repo'));
    expect(cli(['install', '--runtime', 'gemini', '--repo', repo], repo).status).toBe(0);
    const settings = JSON.parse(readFileSync(join(repo, '.gemini', 'settings.json'), 'utf8'));
    const handler = settings.hooks.AfterTool[0].hooks[0];
    const run = (mode: string | undefined) => {
      const hookEnv = geminiLoadExpand(handler.env.REFLECTION_MODE, { REFLECTION_MODE: mode });
      const text = geminiLoadExpand(handler.command, { PATH: process.env.PATH }).replace(/\$GEMINI_PROJECT_DIR/g, shellQuote(repo));
      return spawnSync('bash', ['-c', text], {
        cwd: repo,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, GEMINI_PROJECT_DIR: repo, REFLECTION_MODE: hookEnv },
        input: payload('gemini', 'AfterTool.run_shell_command.exit1.json'),
        encoding: 'utf8',
      });
    };
    expect(run(undefined)).toMatchObject({ status: 0, stdout: '', stderr: '' });
    expect(existsSync(join(repo, '.forge', 'spool'))).toBe(false);
    expect(run('solo')).toMatchObject({ status: 0, stdout: '', stderr: '' });
    const events = JSON.parse(cli(['events', '--json'], repo).stdout);
    expect(events).toMatchObject([{ runtime: 'gemini', type: 'tool.failed', tool_name: 'run_shell_command' }]);
  });
});
