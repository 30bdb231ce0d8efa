/**
 * `install` / `uninstall` / `doctor` / `report` / `events` with --runtime, through the built CLI:
 * each runtime's file, byte-for-byte round trips next to a user's own settings, a file that is not
 * JSON left untouched with one line naming it, an unknown runtime a usage error, an older kit's
 * command replaced rather than doubled, the vendored hooks kept while any runtime still uses them,
 * doctor reporting every installed runtime and its trust.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claudeCode } from '../src/runtimes/claude-code.js';
import { cleanupTempDirs, CLI, KIT_ROOT, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

function cli(args: string[], cwd: string, env: Record<string, string> = {}) {
  const base = { ...process.env };
  for (const key of Object.keys(base)) if (/^(REFLECTION_|FORGE_|CLAUDE_|GEMINI_|CODEX_)/.test(key)) delete base[key];
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, env: { ...base, NO_COLOR: '1', FORGE_REFLECT_CLI: 'off', ...env }, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function repo(name = 'my repo'): string {
  const dir = join(tempDir('forge inst '), name);
  mkdirSync(dir, { recursive: true });
  spawnSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
  return dir;
}

/** Every file under a folder (but .git) with its bytes. */
function tree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir, { withFileTypes: true })) {
      if (dir === root && name.name === '.git') continue;
      const path = join(dir, name.name);
      if (name.isDirectory()) {
        out[`${path.slice(root.length + 1)}/`] = '';
        walk(path);
      } else out[path.slice(root.length + 1)] = readFileSync(path, 'latin1');
    }
  };
  walk(root);
  return out;
}

const USER_CODEX =
  '{\n    "description": "team hooks",\n    "hooks": {\n        "PostToolUse": [ { "matcher": "Bash", "hooks": [ { "type": "command", "command": "./lint.sh", "timeout": 5 } ] } ]\n    }\n}\n';
const USER_GEMINI =
  '{\r\n\t"general": {"vimMode": true},\r\n\t"hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}\r\n}\r\n';

describe('install --runtime codex and gemini next to a user’s own files', () => {
  it('registers in .codex/hooks.json and .gemini/settings.json, keeps theirs, and uninstall gives back every byte', () => {
    const dir = repo();
    mkdirSync(join(dir, '.codex'));
    mkdirSync(join(dir, '.gemini'));
    writeFileSync(join(dir, '.codex', 'hooks.json'), USER_CODEX);
    writeFileSync(join(dir, '.gemini', 'settings.json'), USER_GEMINI);
    const before = tree(dir);

    const install = cli(['install', '--runtime', 'codex', '--runtime', 'gemini', '--json'], dir);
    expect(install.status).toBe(0);
    const report = JSON.parse(install.stdout);
    expect(report).toMatchObject({ runtimes: ['codex', 'gemini'], registration_files: ['.codex/hooks.json', '.gemini/settings.json'] });
    const codexHooks = JSON.parse(readFileSync(join(dir, '.codex', 'hooks.json'), 'utf8'));
    expect(Object.keys(codexHooks)).toEqual(['description', 'hooks']);
    expect(codexHooks.hooks.PostToolUse[0].hooks[0].command).toBe('./lint.sh');
    expect(codexHooks.hooks.PostToolUse[1].hooks[0].command).toContain('reflect-event-hook.sh" PostToolUse codex');
    const geminiText = readFileSync(join(dir, '.gemini', 'settings.json'), 'utf8');
    expect(geminiText).toContain('\r\n\t"general"'); // the file's own style
    const geminiSettings = JSON.parse(geminiText);
    expect(geminiSettings.general).toEqual({ vimMode: true });
    expect(geminiSettings.hooks.BeforeTool).toHaveLength(1);
    expect(geminiSettings.hooks.AfterTool[0].hooks[0].timeout).toBe(10_000);
    expect(existsSync(join(dir, '.claude', 'settings.json'))).toBe(false);

    // Idempotent.
    const again = tree(dir);
    expect(cli(['install', '--runtime', 'codex,gemini'], dir).stdout).toContain('Already installed');
    expect(tree(dir)).toEqual(again);

    expect(cli(['uninstall', '--runtime', 'all'], dir).status).toBe(0);
    const after = tree(dir);
    delete after['.forge/'];
    for (const k of Object.keys(after)) if (k.startsWith('.forge/')) delete after[k];
    expect(after).toEqual(before);
  });

  it('uninstalling one runtime keeps the vendored hooks another still runs, and removes the folder install created', () => {
    const dir = repo();
    expect(cli(['install', '--runtime', 'all'], dir).status).toBe(0);
    expect(existsSync(join(dir, '.codex', 'hooks.json'))).toBe(true);
    const un = cli(['uninstall', '--runtime', 'codex'], dir);
    expect(un.status).toBe(0);
    expect(existsSync(join(dir, '.codex'))).toBe(false);
    expect(existsSync(join(dir, '.claude', 'hooks', 'forge-reflect', 'reflect-event-hook.sh'))).toBe(true);
    expect(un.stdout).toMatch(/kept \.claude\/hooks\/forge-reflect\/: \.claude\/settings\.json still registers/);
    const manifest = JSON.parse(readFileSync(join(dir, '.claude', 'hooks', 'forge-reflect', 'install-manifest.json'), 'utf8'));
    expect(Object.keys(manifest.settings).sort()).toEqual(['.claude/settings.json', '.gemini/settings.json', '.qwen/settings.json']);
    expect(cli(['uninstall', '--runtime', 'all'], dir).status).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['.forge', '.git']);
  });

  it('an older kit’s command (no runtime argument; no mode check) is replaced, not run twice', () => {
    const older = '"$CLAUDE_PROJECT_DIR"/.claude/hooks/forge-reflect/reflect-stop-hook.sh';
    for (const old of [older, `${older} claude-code`]) {
      const dir = repo();
      mkdirSync(join(dir, '.claude'));
      writeFileSync(
        join(dir, '.claude', 'settings.json'),
        JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: old, timeout: 30 }] }] } }, null, 2),
      );
      const out = cli(['install'], dir);
      expect(out.stdout).toContain('removed an older forge-reflect command');
      const stop = JSON.parse(readFileSync(join(dir, '.claude', 'settings.json'), 'utf8')).hooks.Stop;
      expect(stop.flatMap((g: { hooks: Array<{ command: string }> }) => g.hooks.map((h) => h.command))).toEqual([claudeCode.command('stop', 'Stop')]);
    }
  });
});

describe('bad input', () => {
  it('a registration file that is not valid JSON: untouched, one line naming it, exit 1, nothing written', () => {
    const dir = repo();
    mkdirSync(join(dir, '.gemini'));
    writeFileSync(join(dir, '.gemini', 'settings.json'), '{ "general": { // a comment\n } }');
    const before = tree(dir);
    const out = cli(['install', '--runtime', 'codex', '--runtime', 'gemini'], dir);
    expect(out.status).toBe(1);
    expect(out.stderr.trim().split('\n')).toHaveLength(1);
    expect(out.stderr).toContain(join(dir, '.gemini', 'settings.json'));
    expect(tree(dir)).toEqual(before);
  });

  it('an unknown runtime: usage error (exit 2) listing the supported ones, nothing written', () => {
    const dir = repo();
    const out = cli(['install', '--runtime', 'cursor'], dir);
    expect(out.status).toBe(2);
    expect(out.stderr).toMatch(/--runtime "cursor" is not a supported runtime; use claude-code, codex, gemini, qwen, cline, opencode, copilot or all/);
    expect(readdirSync(dir)).toEqual(['.git']);
    expect(cli(['uninstall', '--runtime', 'vscode'], dir).status).toBe(2);
    expect(cli(['events', '--runtime', 'vscode'], dir).status).toBe(2);
    expect(cli(['report', '--runtime', 'vscode'], dir).status).toBe(2);
  });
});

describe('doctor reports every installed runtime', () => {
  it('one line per runtime, then its trust; trusted when the user config says so', () => {
    const dir = repo();
    const home = tempDir('forge home ');
    expect(cli(['install', '--runtime', 'codex', '--runtime', 'gemini'], dir).status).toBe(0);
    let out = cli(['doctor', '--json'], dir, { HOME: home });
    let checks = JSON.parse(out.stdout).checks as Array<{ name: string; status: string }>;
    const status = (name: string) => checks.find((c) => c.name === name)?.status;
    expect(status('codex hooks')).toBe('ok');
    expect(status('gemini hooks')).toBe('ok');
    expect(status('claude-code hooks')).toBeUndefined();
    expect(status('codex project trust')).toBe('warn');
    expect(status('codex hook trust')).toBe('warn');
    expect(status('gemini folder trust')).toBe('warn');

    mkdirSync(join(home, '.codex'));
    mkdirSync(join(home, '.gemini'));
    const hooksFile = join(dir, '.codex', 'hooks.json');
    writeFileSync(
      join(home, '.codex', 'config.toml'),
      `model = "x"\n\n[projects.${JSON.stringify(dir)}]\ntrust_level = "trusted"\n\n[hooks.state.${JSON.stringify(`${hooksFile}:post_tool_use:0:0`)}]\ntrusted_hash = "sha256:00"\n`,
    );
    writeFileSync(join(home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [dir]: 'TRUST_FOLDER' }));
    out = cli(['doctor', '--json'], dir, { HOME: home });
    checks = JSON.parse(out.stdout).checks;
    expect(status('codex project trust')).toBe('ok');
    expect(status('codex hook trust')).toBe('ok');
    expect(status('gemini folder trust')).toBe('ok');

    writeFileSync(join(dir, '.codex', 'config.toml'), '[hooks]\n');
    checks = JSON.parse(cli(['doctor', '--json'], dir, { HOME: home }).stdout).checks;
    expect(status('codex hook files')).toBe('warn');

    // A vendored script gone: that runtime's registration fails.
    spawnSync('rm', ['-r', join(dir, '.claude', 'hooks', 'forge-reflect')]);
    checks = JSON.parse(cli(['doctor', '--json'], dir, { HOME: home }).stdout).checks;
    expect(status('codex hooks')).toBe('fail');
  });

  it('a registration file that is not JSON fails for its runtime', () => {
    const dir = repo();
    expect(cli(['install', '--runtime', 'codex'], dir).status).toBe(0);
    writeFileSync(join(dir, '.codex', 'hooks.json'), '{');
    const out = cli(['doctor'], dir);
    expect(out.status).toBe(1);
    expect(out.stdout).toMatch(/codex hooks\s+\.codex\/hooks\.json is not valid JSON/);
  });
});

describe('report and events by runtime', () => {
  it('sidecars written through the Codex and Gemini Stop commands: report --runtime and events --runtime pick each', () => {
    const dir = repo('report repo');
    writeFileSync(join(dir, 'README.md'), 'x\n');
    spawnSync('git', ['-c', 'user.email=t@e', '-c', 'user.name=t', 'add', '.'], { cwd: dir });
    spawnSync('git', ['-c', 'user.email=t@e', '-c', 'user.name=t', '-c', 'commit.gpgsign=false', 'commit', '-qm', 'init'], { cwd: dir });
    expect(cli(['install', '--runtime', 'codex', '--runtime', 'gemini'], dir).status).toBe(0);
    const fixtures = join(KIT_ROOT, 'tests', 'fixtures', 'runtimes');
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, REFLECTION_MODE: 'solo', FORGE_REFLECT_CLI: 'off' };
    const codexStop = JSON.parse(readFileSync(join(dir, '.codex', 'hooks.json'), 'utf8')).hooks.Stop[0].hooks[0].command as string;
    const codexRun = spawnSync('/bin/bash', ['-c', codexStop], { cwd: dir, env, input: readFileSync(join(fixtures, 'codex', 'Stop.json')), encoding: 'utf8' });
    expect(codexRun).toMatchObject({ status: 0, stdout: '' });
    const geminiStop = JSON.parse(readFileSync(join(dir, '.gemini', 'settings.json'), 'utf8')).hooks.AfterAgent[0].hooks[0].command as string;
    const text = geminiStop.replace(/\$GEMINI_PROJECT_DIR/g, `'${dir}'`);
    const geminiRun = spawnSync('bash', ['-c', text], {
      cwd: dir,
      env: { ...env, GEMINI_PROJECT_DIR: dir },
      input: readFileSync(join(fixtures, 'gemini', 'AfterAgent.json')),
      encoding: 'utf8',
    });
    expect(geminiRun).toMatchObject({ status: 0, stdout: '' });

    const rows = (runtime: string) =>
      (JSON.parse(cli(['report', '--runtime', runtime, '--json'], dir).stdout) as { rows: Array<{ agent: string; session_id: string }> }).rows;
    expect(rows('codex').map((r) => [r.agent, r.session_id])).toEqual([['codex', '01a20904-b3c8-7790-90fd-32e2f57eeda2']]);
    expect(rows('gemini').map((r) => [r.agent, r.session_id])).toEqual([['gemini', 'e797f0ca-f1d0-4e67-a354-9fbd1854803a']]);
    expect(rows('claude-code')).toEqual([]);
    const events = JSON.parse(cli(['events', '--runtime', 'gemini', '--json'], dir).stdout) as Array<{ runtime: string; type: string }>;
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((e) => e.runtime === 'gemini')).toBe(true);
  });
});
