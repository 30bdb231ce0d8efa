/**
 * `forge-reflect install` and `uninstall` against scratch repositories, through the built CLI:
 * merging next to a user's own hooks, idempotency, byte-for-byte round trips, refusals that leave
 * everything untouched, --dry-run, and the vendored Stop hook writing a valid sidecar.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const KIT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CLI = join(KIT, 'packages', 'forge-reflect', 'bin', 'forge-reflect.js');
const CANONICAL = JSON.parse(readFileSync(join(KIT, 'runtime/claude/settings.json'), 'utf8')) as { hooks: Record<string, unknown[]> };
const EVENTS = Object.keys(CANONICAL.hooks);
const STOP_PAYLOAD = readFileSync('/work/shared/reference/claude-code-payloads/stop.json');
const VENDORED = '.claude/hooks/forge-reflect';

/** The environment of every child: none of the kit's variables leak in from the test runner. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (/^(REFLECTION_|FORGE_)/.test(key)) delete env[key];
  return { ...env, NO_COLOR: '1', FORGE_REFLECT_CLI: '/nonexistent/forge-reflect', ...extra };
}

function cli(args: string[], cwd: string, env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd, env: cleanEnv(env), encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function git(cwd: string, ...args: string[]): string {
  const result = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

function makeRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.email', 'test@example.com');
  git(dir, 'config', 'user.name', 'test');
  git(dir, 'config', 'commit.gpgsign', 'false');
  writeFileSync(join(dir, 'README.md'), 'hello\n');
  git(dir, 'add', 'README.md');
  git(dir, 'commit', '-q', '-m', 'initial');
  return dir;
}

/** Every path under a folder (but .git) with its kind, mode, bytes and mtime. */
function snapshot(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      if (dir === root && name === '.git') continue;
      const path = join(dir, name);
      const stats = lstatSync(path);
      const rel = path.slice(root.length + 1);
      if (stats.isDirectory()) {
        out.set(rel, `dir ${(stats.mode & 0o777).toString(8)}`);
        walk(path);
      } else if (stats.isSymbolicLink()) {
        out.set(rel, `link`);
      } else {
        out.set(rel, `file ${(stats.mode & 0o777).toString(8)} ${stats.mtimeMs} ${readFileSync(path).toString('base64')}`);
      }
    }
  };
  walk(root);
  return out;
}

const USER_SETTINGS = `{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": [
      "Bash(npm test)"
    ]
  },
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [
          {
            "type": "command",
            "command": "npx prettier --write \\"$CLAUDE_FILE\\""
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "say done",
            "timeout": 5
          }
        ]
      }
    ]
  },
  "model": "opus"
}
`;

let scratch: string;
let repo: string;

beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'forge-install-'));
  repo = makeRepo(join(scratch, 'my repo'));
});

afterEach(() => {
  rmSync(scratch, { recursive: true, force: true });
});

function writeSettings(rel: string, text: string): void {
  mkdirSync(dirname(join(repo, rel)), { recursive: true });
  writeFileSync(join(repo, rel), text);
}

const readSettings = (rel = '.claude/settings.json') => JSON.parse(readFileSync(join(repo, rel), 'utf8')) as Record<string, unknown>;

describe('install into a repo without .claude/', () => {
  it('vendors the hooks (modes kept), registers every canonical group, creates .forge/ 0700', () => {
    const r = cli(['install'], repo);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    for (const name of ['reflect-stop-hook.sh', 'reflect-event-hook.sh']) {
      const dest = join(repo, VENDORED, name);
      expect(readFileSync(dest).equals(readFileSync(join(KIT, 'hooks', name)))).toBe(true);
      expect(lstatSync(dest).mode & 0o111).toBe(0o111);
    }
    for (const name of readdirSync(join(KIT, 'hooks', 'lib'))) {
      const dest = join(repo, VENDORED, 'lib', name);
      expect(readFileSync(dest).equals(readFileSync(join(KIT, 'hooks', 'lib', name)))).toBe(true);
      expect(lstatSync(dest).mode & 0o777).toBe(lstatSync(join(KIT, 'hooks', 'lib', name)).mode & 0o777);
    }
    expect(readSettings()).toEqual(CANONICAL);
    expect(readFileSync(join(repo, '.claude/settings.json'), 'utf8').endsWith('}\n')).toBe(true);
    expect(lstatSync(join(repo, '.forge')).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(repo, '.forge/.gitignore'), 'utf8')).toBe('*\n');
    expect(existsSync(join(repo, '.claude/settings.json.forge-reflect.bak'))).toBe(false); // no file before, no backup
    expect(r.stdout).toContain('REFLECTION_MODE=solo');
    expect(r.stdout).toMatch(/restart Claude Code/);
    expect(r.stdout).toMatch(/trust/);
    expect(r.stdout).toContain(`create  ${VENDORED}/reflect-stop-hook.sh`);
    expect(r.stdout).toContain('hooks.Stop');
    // No temp file left behind anywhere.
    expect([...snapshot(repo).keys()].filter((p) => p.includes('.tmp-'))).toEqual([]);
  });

  it('uninstall removes the settings file it created and every folder it created; .forge/ stays', () => {
    expect(cli(['install', '--with-instructions'], repo).status).toBe(0);
    writeFileSync(join(repo, '.forge', 'keep-me'), 'data');
    const r = cli(['uninstall'], repo);
    expect(r.status).toBe(0);
    expect(existsSync(join(repo, '.claude'))).toBe(false);
    expect(readFileSync(join(repo, '.forge', 'keep-me'), 'utf8')).toBe('data');
    expect(r.stdout).toMatch(/kept \.forge\//);
  });
});

describe('install next to a user’s settings', () => {
  beforeEach(() => writeSettings('.claude/settings.json', USER_SETTINGS));

  it('appends our groups after the user’s, keeps other keys and their order, backs up the old file', () => {
    expect(cli(['install'], repo).status).toBe(0);
    const after = readSettings();
    expect(Object.keys(after)).toEqual(['$schema', 'permissions', 'hooks', 'model']);
    const before = JSON.parse(USER_SETTINGS) as { hooks: Record<string, unknown[]>; permissions: unknown };
    const hooks = after.hooks as Record<string, unknown[]>;
    expect(Object.keys(hooks).slice(0, 2)).toEqual(['PostToolUse', 'Stop']);
    expect(new Set(Object.keys(hooks))).toEqual(new Set(EVENTS));
    expect(hooks.Stop?.[0]).toEqual(before.hooks.Stop?.[0]);
    expect(hooks.Stop?.[1]).toEqual(CANONICAL.hooks.Stop?.[0]);
    expect(hooks.PostToolUse?.[0]).toEqual(before.hooks.PostToolUse?.[0]);
    expect(hooks.PostToolUse?.[1]).toEqual(CANONICAL.hooks.PostToolUse?.[0]);
    expect(after.permissions).toEqual(before.permissions);
    expect(readFileSync(join(repo, '.claude/settings.json.forge-reflect.bak'), 'utf8')).toBe(USER_SETTINGS);
  });

  it('a second install writes nothing and says so', async () => {
    expect(cli(['install'], repo).status).toBe(0);
    const before = snapshot(repo);
    await new Promise((r) => setTimeout(r, 20)); // a rewrite would show in the mtimes
    const r = cli(['install'], repo);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/Already installed: nothing changed/);
    expect(snapshot(repo)).toEqual(before);
    const json = JSON.parse(cli(['install', '--json'], repo).stdout) as { changed: boolean; steps: unknown[] };
    expect(json.changed).toBe(false);
    expect(json.steps).toEqual([]);
  });

  it('uninstall gives back the settings file byte for byte and removes the backup', () => {
    expect(cli(['install', '--with-instructions'], repo).status).toBe(0);
    const r = cli(['uninstall'], repo);
    expect(r.status).toBe(0);
    expect(readFileSync(join(repo, '.claude/settings.json'), 'utf8')).toBe(USER_SETTINGS);
    expect(readdirSync(join(repo, '.claude'))).toEqual(['settings.json']);
    expect(r.stdout).toMatch(/Uninstalled/);
    // And a second uninstall has nothing left to do.
    const again = cli(['uninstall'], repo);
    expect(again.stdout).toMatch(/Nothing to uninstall/);
    expect(readFileSync(join(repo, '.claude/settings.json'), 'utf8')).toBe(USER_SETTINGS);
  });

  it('keeps another file style through the round trip (4 spaces, no final newline)', () => {
    const fourSpaces = JSON.stringify(JSON.parse(USER_SETTINGS), null, 4);
    writeSettings('.claude/settings.json', fourSpaces);
    expect(cli(['install'], repo).status).toBe(0);
    const text = readFileSync(join(repo, '.claude/settings.json'), 'utf8');
    expect(text).toMatch(/^\{\n {4}"\$schema"/);
    expect(text.endsWith('}')).toBe(true);
    expect(cli(['uninstall'], repo).status).toBe(0);
    expect(readFileSync(join(repo, '.claude/settings.json'), 'utf8')).toBe(fourSpaces);
  });

  it('a hand-formatted file (inline arrays, odd spacing, CRLF) comes back byte for byte', () => {
    const hand =
      '{ "permissions": { "allow": ["Bash(npm test)", "Read"] },\r\n  "hooks": { "Stop": [ { "hooks": [ { "type": "command", "command": "say done" } ] } ] },\r\n  "model" : "opus" }\r\n';
    writeSettings('.claude/settings.json', hand);
    expect(cli(['install'], repo).status).toBe(0);
    expect(readFileSync(join(repo, '.claude/settings.json'), 'utf8')).not.toBe(hand);
    const r = cli(['uninstall'], repo);
    expect(r.status).toBe(0);
    expect(readFileSync(join(repo, '.claude/settings.json'), 'utf8')).toBe(hand);
    expect(r.stdout).toMatch(/back to its exact bytes/);
    expect(existsSync(join(repo, '.claude/settings.json.forge-reflect.bak'))).toBe(false);
  });

  it('uninstall keeps a vendored folder holding files install did not put there', () => {
    expect(cli(['install'], repo).status).toBe(0);
    writeFileSync(join(repo, VENDORED, 'my-notes.txt'), 'mine\n');
    const r = cli(['uninstall'], repo);
    expect(r.status).toBe(0);
    expect(readdirSync(join(repo, VENDORED))).toEqual(['my-notes.txt']);
    expect(r.stdout).toMatch(/kept \.claude\/hooks\/forge-reflect\/: it holds files/);
    expect(readFileSync(join(repo, '.claude/settings.json'), 'utf8')).toBe(USER_SETTINGS);
  });

  it('uninstall after the user changed the file: our parts out, their change kept, backup kept', () => {
    expect(cli(['install'], repo).status).toBe(0);
    const installed = readSettings();
    installed.model = 'sonnet';
    writeSettings('.claude/settings.json', `${JSON.stringify(installed, null, 2)}\n`);
    const r = cli(['uninstall'], repo);
    expect(r.status).toBe(0);
    const expected = JSON.parse(USER_SETTINGS) as Record<string, unknown>;
    expected.model = 'sonnet';
    expect(readFileSync(join(repo, '.claude/settings.json'), 'utf8')).toBe(`${JSON.stringify(expected, null, 2)}\n`);
    expect(readFileSync(join(repo, '.claude/settings.json.forge-reflect.bak'), 'utf8')).toBe(USER_SETTINGS);
    expect(r.stdout).toMatch(/kept \.claude\/settings\.json\.forge-reflect\.bak/);
  });

  it('--local changes only settings.local.json; uninstall --local gives it back byte for byte', () => {
    const local = '{\n  "permissions": {\n    "deny": []\n  }\n}\n';
    writeSettings('.claude/settings.local.json', local);
    const r = cli(['install', '--local'], repo);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/settings\.local\.json is not ignored by git/);
    expect(readFileSync(join(repo, '.claude/settings.json'), 'utf8')).toBe(USER_SETTINGS);
    const merged = readSettings('.claude/settings.local.json');
    expect(Object.keys(merged)).toEqual(['permissions', 'hooks']);
    expect(merged.hooks).toEqual(CANONICAL.hooks);
    expect(readFileSync(join(repo, '.claude/settings.local.json.forge-reflect.bak'), 'utf8')).toBe(local);
    expect(cli(['uninstall', '--local'], repo).status).toBe(0);
    expect(readFileSync(join(repo, '.claude/settings.local.json'), 'utf8')).toBe(local);
    expect(readFileSync(join(repo, '.claude/settings.json'), 'utf8')).toBe(USER_SETTINGS);
    expect(existsSync(join(repo, VENDORED))).toBe(false);
  });

  it('installed in both files: uninstalling one keeps the vendored hooks the other still runs', () => {
    expect(cli(['install'], repo).status).toBe(0);
    expect(cli(['install', '--local'], repo).status).toBe(0);
    expect(existsSync(join(repo, '.claude/settings.local.json.forge-reflect.bak'))).toBe(false);
    const r = cli(['uninstall', '--local'], repo);
    expect(r.status).toBe(0);
    expect(existsSync(join(repo, '.claude/settings.local.json'))).toBe(false);
    expect(existsSync(join(repo, VENDORED, 'reflect-stop-hook.sh'))).toBe(true);
    expect(r.stdout).toMatch(/still registers the hooks/);
    expect(cli(['uninstall'], repo).status).toBe(0);
    expect(readFileSync(join(repo, '.claude/settings.json'), 'utf8')).toBe(USER_SETTINGS);
    expect(existsSync(join(repo, VENDORED))).toBe(false);
    expect(existsSync(join(repo, '.claude/hooks'))).toBe(false);
  });

  it('--dry-run lists the changes and writes nothing (install and uninstall)', () => {
    const before = snapshot(repo);
    const r = cli(['install', '--dry-run', '--with-instructions'], repo);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`would create  ${VENDORED}/reflect-stop-hook.sh`);
    expect(r.stdout).toContain('would update  .claude/settings.json');
    expect(r.stdout).toMatch(/nothing was written/);
    expect(snapshot(repo)).toEqual(before);
    expect(cli(['install'], repo).status).toBe(0);
    const installed = snapshot(repo);
    const u = cli(['uninstall', '--dry-run'], repo);
    expect(u.stdout).toContain('would remove  .claude/hooks/forge-reflect/reflect-stop-hook.sh');
    expect(snapshot(repo)).toEqual(installed);
  });
});

describe('refusals leave everything as it was', () => {
  it.each([
    ['not JSON', '{ "hooks": { "Stop": [ } }\n', /not valid JSON/],
    ['a trailing comma', '{\n  "model": "opus",\n}\n', /not valid JSON/],
    ['hooks that is an array', '{ "hooks": [] }\n', /"hooks" is not an object/],
    ['an event that is not an array', '{ "hooks": { "Stop": "x" } }\n', /"hooks.Stop" is not an array/],
  ])('a settings file with %s: exit 1, one line naming the file and the fix, nothing written', (_name, text, problem) => {
    writeSettings('.claude/settings.json', text);
    const before = snapshot(repo);
    for (const command of ['install', 'uninstall']) {
      const r = cli([command], repo);
      expect(r.status).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(join(repo, '.claude/settings.json'));
      expect(r.stderr).toMatch(problem);
      expect(r.stderr).toMatch(/fix the file/);
      expect(r.stderr).not.toMatch(/\bat .*\.js:\d+/);
      expect(snapshot(repo)).toEqual(before);
    }
  });

  it('a settings file that is a symlink is not followed', () => {
    const target = join(scratch, 'shared-settings.json');
    writeFileSync(target, USER_SETTINGS);
    mkdirSync(join(repo, '.claude'));
    symlinkSync(target, join(repo, '.claude/settings.json'));
    const before = snapshot(repo);
    const r = cli(['install'], repo);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/symbolic link/);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(snapshot(repo)).toEqual(before);
    expect(readFileSync(target, 'utf8')).toBe(USER_SETTINGS);
    expect(cli(['uninstall'], repo).status).toBe(1);
  });

  it('a foreign .claude/commands/reflect.md is never overwritten', () => {
    writeSettings('.claude/commands/reflect.md', 'my own reflect command\n');
    const before = snapshot(repo);
    const r = cli(['install', '--with-instructions'], repo);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/reflect\.md exists and is not forge-reflect's/);
    expect(snapshot(repo)).toEqual(before);
    // Without the option, install goes ahead and uninstall leaves the user's file alone.
    expect(cli(['install'], repo).status).toBe(0);
    expect(cli(['uninstall'], repo).status).toBe(0);
    expect(readFileSync(join(repo, '.claude/commands/reflect.md'), 'utf8')).toBe('my own reflect command\n');
  });

  it('outside a git repository and without --repo: exit 1; with --repo it works from anywhere', () => {
    const outside = join(scratch, 'not a repo');
    mkdirSync(outside);
    const r = cli(['install'], outside);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/not inside a git work tree.*--repo/);
    expect(existsSync(join(outside, '.claude'))).toBe(false);
    expect(cli(['install', '--repo', repo], outside).status).toBe(0);
    expect(existsSync(join(repo, VENDORED, 'reflect-stop-hook.sh'))).toBe(true);
    expect(cli(['install', '--repo', join(scratch, 'missing')], outside).status).toBe(1);
  });

  it('--repo defaults to the top level when run from a subfolder', () => {
    mkdirSync(join(repo, 'src', 'deep'), { recursive: true });
    expect(cli(['install'], join(repo, 'src', 'deep')).status).toBe(0);
    expect(existsSync(join(repo, VENDORED, 'reflect-stop-hook.sh'))).toBe(true);
    expect(existsSync(join(repo, 'src', '.claude'))).toBe(false);
  });
});

describe('--with-instructions', () => {
  it('copies the slash command and prints the CLAUDE.md snippet without touching CLAUDE.md', () => {
    writeFileSync(join(repo, 'CLAUDE.md'), '# house rules\n');
    const r = cli(['install', '--with-instructions'], repo);
    expect(r.status).toBe(0);
    const source = readFileSync(join(KIT, 'runtime/claude/commands/reflect.md'));
    expect(readFileSync(join(repo, '.claude/commands/reflect.md')).equals(source)).toBe(true);
    expect(r.stdout).toContain(readFileSync(join(KIT, 'runtime/claude/CLAUDE.md.snippet'), 'utf8').trimEnd());
    expect(readFileSync(join(repo, 'CLAUDE.md'), 'utf8')).toBe('# house rules\n');
  });

  it('uninstall keeps a slash command the user edited', () => {
    expect(cli(['install', '--with-instructions'], repo).status).toBe(0);
    writeFileSync(join(repo, '.claude/commands/reflect.md'), 'edited\n');
    const r = cli(['uninstall'], repo);
    expect(r.status).toBe(0);
    expect(readFileSync(join(repo, '.claude/commands/reflect.md'), 'utf8')).toBe('edited\n');
    expect(r.stdout).toMatch(/kept \.claude\/commands\/reflect\.md/);
  });
});

describe('install --json', () => {
  it('lists each change', () => {
    const r = cli(['install', '--json'], repo);
    const out = JSON.parse(r.stdout) as { changed: boolean; settings_file: string; steps: Array<{ action: string; path: string }>; next_steps: string[] };
    expect(out.changed).toBe(true);
    expect(out.settings_file).toBe('.claude/settings.json');
    expect(out.steps.filter((s) => s.path === '.claude/settings.json')).toHaveLength(EVENTS.length);
    expect(out.next_steps.join(' ')).toContain('REFLECTION_MODE=solo');
  });
});

describe('end to end: the vendored Stop hook', () => {
  function runStopHook(env: Record<string, string> = {}) {
    return spawnSync(join(repo, VENDORED, 'reflect-stop-hook.sh'), [], {
      cwd: repo,
      input: STOP_PAYLOAD,
      env: cleanEnv({ REFLECTION_MODE: 'solo', ...env }),
      encoding: 'utf8',
    });
  }

  it('with a self-report, writes a non-degraded sidecar that validate accepts', () => {
    expect(cli(['install'], repo).status).toBe(0);
    mkdirSync(join(repo, 'src', 'auth'), { recursive: true });
    writeFileSync(join(repo, 'src', 'auth', 'token.ts'), 'export const t = 1;\n');
    const sr = cli(['self-report', '--confidence', '0.55', '--surface', 'auth', '--wrong', 'expiry is off by one', '--not-in-diff', 'staging differs'], repo);
    expect(sr.status).toBe(0);
    const hook = runStopHook();
    expect(hook.status).toBe(0);
    expect(hook.stdout).toBe('');
    const dir = join(repo, '.forge', 'reflections');
    const sidecars = readdirSync(dir).filter((n) => n.endsWith('.reflection.json'));
    expect(sidecars).toHaveLength(1);
    const sidecar = JSON.parse(readFileSync(join(dir, sidecars[0] as string), 'utf8')) as Record<string, any>;
    expect(sidecar.session_id).toBe('7f3c2a9e-4b1d-4e8a-9c6f-2d5e8b1a0c34');
    expect(sidecar.confidence).toBe(0.55);
    expect(sidecar.most_likely_wrong).toEqual({ surface: 'auth', description: 'expiry is off by one' });
    expect(sidecar.known_not_in_diff).toBe('staging differs');
    expect(sidecar.risk.surface).toBe('auth');
    expect(sidecar.files_changed).toContain('src/auth/token.ts');
    expect(sidecar.provenance.degraded).toBe(false);
    expect(existsSync(join(repo, '.forge', 'reflection-input.json'))).toBe(false); // consumed
    const v = cli(['validate', dir], repo);
    expect(v.stdout).toContain('1 checked, 1 valid, 0 invalid');
    expect(v.status).toBe(0);
  });

  it('without a self-report, still a valid (degraded) sidecar; with REFLECTION_MODE unset, nothing', () => {
    expect(cli(['install'], repo).status).toBe(0);
    const off = spawnSync(join(repo, VENDORED, 'reflect-stop-hook.sh'), [], { cwd: repo, input: STOP_PAYLOAD, env: cleanEnv() });
    expect(off.status).toBe(0);
    expect(existsSync(join(repo, '.forge', 'reflections'))).toBe(false);
    expect(runStopHook().status).toBe(0);
    const dir = join(repo, '.forge', 'reflections');
    const sidecars = readdirSync(dir).filter((n) => n.endsWith('.reflection.json'));
    expect(sidecars).toHaveLength(1);
    const sidecar = JSON.parse(readFileSync(join(dir, sidecars[0] as string), 'utf8')) as Record<string, any>;
    expect(sidecar.confidence).toBeNull();
    expect(sidecar.provenance.degraded).toBe(true);
    expect(cli(['validate', dir], repo).status).toBe(0);
  });

  it('the vendored copy is self-contained: the repo still gets sidecars after it is moved', () => {
    expect(cli(['install'], repo).status).toBe(0);
    const moved = join(scratch, 'moved repo');
    renameSync(repo, moved);
    repo = moved;
    expect(runStopHook().status).toBe(0);
    const dir = join(repo, '.forge', 'reflections');
    expect(readdirSync(dir).filter((n) => n.endsWith('.reflection.json'))).toHaveLength(1);
    expect(cli(['validate', dir], repo).status).toBe(0);
  });
});
