/**
 * The runtimes' packages of the kit (plugins/, the marketplace files, the root Gemini manifest):
 * rendered from the hook map and hooks/ (a drift test), in the shapes the runtimes require, and
 * checked by doctor against the sums they were built with.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { bindingsFor } from '../src/runtimes/hook-map.js';
import { checkPluginDir, PLUGIN_DIRS, PLUGIN_RUNTIMES, pluginHooks, renderPlugins } from '../src/runtimes/plugins.js';
import { checkPlugins, findPlugins, settingsThatRecord } from '../src/doctor/plugins.js';

const KIT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const temps: string[] = [];
afterEach(() => {
  for (const t of temps.splice(0)) rmSync(t, { recursive: true, force: true });
});
function temp(): string {
  const t = mkdtempSync(join(tmpdir(), 'forge plugins '));
  temps.push(t);
  return t;
}
function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}

describe('rendered plugins', () => {
  it('the committed tree is exactly what render-plugins.mjs renders (drift test: node scripts/build/render-plugins.mjs rewrites it)', () => {
    const files = renderPlugins(KIT_ROOT);
    const drift = files.filter((f) => !existsSync(join(KIT_ROOT, f.rel)) || !readFileSync(join(KIT_ROOT, f.rel)).equals(f.bytes)).map((f) => f.rel);
    expect(drift).toEqual([]);
    const wanted = new Set(files.map((f) => f.rel));
    const extra = walk(join(KIT_ROOT, 'plugins'))
      .map((p) => relative(KIT_ROOT, p).split('\\').join('/'))
      .filter((rel) => !wanted.has(rel));
    expect(extra).toEqual([]);
    const check = spawnSync(process.execPath, [join(KIT_ROOT, 'scripts/build/render-plugins.mjs'), '--check'], { encoding: 'utf8' });
    expect(check.status, check.stderr).toBe(0);
  });

  it('each hooks.json wraps its events in `hooks`, with every event of the hook map and nothing else', () => {
    for (const runtime of PLUGIN_RUNTIMES) {
      const value = JSON.parse(readFileSync(join(KIT_ROOT, PLUGIN_DIRS[runtime], 'hooks/hooks.json'), 'utf8')) as {
        hooks: Record<string, unknown>;
        description?: string;
      };
      expect(Object.keys(value.hooks)).toEqual(bindingsFor(runtime).map((b) => b.event));
      expect(value).toEqual(pluginHooks(runtime));
      const commands = JSON.stringify(value.hooks);
      expect(commands).toContain('FORGE_PLUGIN=1');
      expect(commands).not.toContain('.claude/hooks/forge-reflect');
    }
    // Codex: no top-level description (unsupported at one point), no root plugin.json (disables its hooks).
    expect(Object.keys(JSON.parse(readFileSync(join(KIT_ROOT, 'plugins/codex/hooks/hooks.json'), 'utf8')))).toEqual(['hooks']);
    expect(existsSync(join(KIT_ROOT, 'plugins/codex/plugin.json'))).toBe(false);
    expect(existsSync(join(KIT_ROOT, 'plugin.json'))).toBe(false);
  });

  it('no manifest names `hooks`; the marketplaces list the plugin under the name forge-reflect', () => {
    for (const rel of [
      'plugins/claude-code/.claude-plugin/plugin.json',
      'plugins/codex/.codex-plugin/plugin.json',
      'plugins/gemini/gemini-extension.json',
      'gemini-extension.json',
    ]) {
      const manifest = JSON.parse(readFileSync(join(KIT_ROOT, rel), 'utf8')) as Record<string, unknown>;
      expect(manifest.name, rel).toBe('forge-reflect');
      expect('hooks' in manifest, rel).toBe(false);
    }
    const claude = JSON.parse(readFileSync(join(KIT_ROOT, '.claude-plugin/marketplace.json'), 'utf8'));
    expect(claude.name).toBe('forge-reflect');
    expect(claude.plugins).toEqual([expect.objectContaining({ name: 'forge-reflect', source: './plugins/claude-code' })]);
    const codex = JSON.parse(readFileSync(join(KIT_ROOT, '.agents/plugins/marketplace.json'), 'utf8'));
    expect(codex.plugins[0].source).toEqual({ source: 'local', path: './plugins/codex' });
    // The root extension (a git URL install) runs plugins/gemini's scripts.
    expect(readFileSync(join(KIT_ROOT, 'hooks/hooks.json'), 'utf8')).toContain('${extensionPath}/plugins/gemini/hooks/reflect-stop-hook.sh');
  });

  it('a plugin folder whose hooks were changed is named by file', () => {
    const dir = join(temp(), 'plugin');
    cpSync(join(KIT_ROOT, PLUGIN_DIRS['claude-code']), dir, { recursive: true });
    expect(checkPluginDir(dir)).toMatchObject({ modified: [], missing: [], unlisted: false, version: expect.any(String) });
    writeFileSync(join(dir, 'hooks/lib/common.sh'), '# changed\n', { flag: 'a' });
    rmSync(join(dir, 'hooks/reflect-event-hook.sh'));
    expect(checkPluginDir(dir)).toMatchObject({ modified: ['hooks/lib/common.sh'], missing: ['hooks/reflect-event-hook.sh'] });
  });
});

describe('doctor: plugin registrations', () => {
  function claudeHome(home: string, installPath: string): void {
    mkdirSync(join(home, '.claude', 'plugins'), { recursive: true });
    writeFileSync(
      join(home, '.claude', 'plugins', 'installed_plugins.json'),
      JSON.stringify({ version: 2, plugins: { 'forge-reflect@forge-reflect': [{ scope: 'user', installPath, version: '0.1.0' }] } }),
    );
    writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ enabledPlugins: { 'forge-reflect@forge-reflect': true } }));
  }

  it('finds the Claude Code plugin, the Codex plugin and the Gemini extension, and says which records', () => {
    const home = temp();
    const repo = join(home, 'repo');
    mkdirSync(repo, { recursive: true });
    const claudePath = join(home, '.claude/plugins/cache/forge-reflect/forge-reflect/0.1.0');
    cpSync(join(KIT_ROOT, PLUGIN_DIRS['claude-code']), claudePath, { recursive: true });
    claudeHome(home, claudePath);
    cpSync(join(KIT_ROOT, PLUGIN_DIRS.codex), join(home, '.codex/plugins/cache/forge-reflect/forge-reflect/0.1.0'), { recursive: true });
    writeFileSync(join(home, '.codex/config.toml'), '[plugins."forge-reflect@forge-reflect"]\nenabled = true\n');
    cpSync(join(KIT_ROOT, PLUGIN_DIRS.gemini), join(home, '.gemini/extensions/forge-reflect'), { recursive: true });
    const env = { HOME: home };
    expect(findPlugins(repo, env).map((p) => p.runtime)).toEqual(['claude-code', 'codex', 'gemini']);
    const checks = checkPlugins(repo, env);
    expect(checks.map((c) => c.status)).toEqual(['ok', 'ok', 'ok']);
    expect(checks[0]?.detail).toContain('this plugin records');

    // A settings registration too: it records, the plugin stays quiet.
    mkdirSync(join(repo, '.claude/hooks/forge-reflect'), { recursive: true });
    writeFileSync(join(repo, '.claude/hooks/forge-reflect/reflect-stop-hook.sh'), '');
    cpSync(join(KIT_ROOT, 'runtime/claude/settings.json'), join(repo, '.claude/settings.json'));
    expect(checkPlugins(repo, env)[0]?.detail).toContain('.claude/settings.json records');

    // A changed file fails, named.
    writeFileSync(join(claudePath, 'hooks/hooks.json'), '{"hooks": {}}\n');
    const broken = checkPlugins(repo, env)[0];
    expect(broken?.status).toBe('fail');
    expect(broken?.detail).toContain('hooks/hooks.json');
  });

  it('a disabled Claude Code plugin is listed as not recording; none at all gives no check', () => {
    const home = temp();
    const repo = join(home, 'repo');
    mkdirSync(repo, { recursive: true });
    expect(checkPlugins(repo, { HOME: home })).toEqual([]);
    const claudePath = join(home, 'cache');
    cpSync(join(KIT_ROOT, PLUGIN_DIRS['claude-code']), claudePath, { recursive: true });
    claudeHome(home, claudePath);
    writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ enabledPlugins: { 'forge-reflect@forge-reflect': false } }));
    const [check] = checkPlugins(repo, { HOME: home });
    expect(check?.detail).toContain('disabled');
  });

  it('which settings registration records, per runtime (the rule of forge_plugin_defers)', () => {
    const home = temp();
    const repo = join(home, 'repo');
    const env = { HOME: home };
    mkdirSync(join(repo, '.codex'), { recursive: true });
    cpSync(join(KIT_ROOT, 'runtime/codex/hooks.json'), join(repo, '.codex/hooks.json'));
    mkdirSync(join(repo, '.gemini'), { recursive: true });
    cpSync(join(KIT_ROOT, 'runtime/gemini/settings.json'), join(repo, '.gemini/settings.json'));
    // No vendored hooks: no registration can run.
    expect(settingsThatRecord('gemini', repo, env)).toBeNull();
    mkdirSync(join(repo, '.claude/hooks/forge-reflect'), { recursive: true });
    writeFileSync(join(repo, '.claude/hooks/forge-reflect/reflect-stop-hook.sh'), '');
    expect(settingsThatRecord('gemini', repo, env)).toBe('.gemini/settings.json');
    expect(settingsThatRecord('claude-code', repo, env)).toBeNull();
    // Codex: only once the project's Stop hook has a trusted hash.
    expect(settingsThatRecord('codex', repo, env)).toBeNull();
    mkdirSync(join(home, '.codex'), { recursive: true });
    writeFileSync(join(home, '.codex/config.toml'), `[hooks.state.${JSON.stringify(`${repo}/.codex/hooks.json:stop:0:0`)}]\ntrusted_hash = "sha256:x"\n`);
    expect(settingsThatRecord('codex', repo, env)).toBe('.codex/hooks.json');
  });
});
