/**
 * Doctor's view of the kit installed as a runtime's own package: the Claude Code plugin
 * (installed_plugins.json, enabledPlugins), the Codex plugin (its cache folder and
 * `[plugins."forge-reflect@…"]` in config.toml) and the Gemini CLI extension
 * (~/.gemini/extensions/forge-reflect). Each found one is checked against the sums it was rendered
 * with (a changed file fails, named) and said to record or to stay quiet: a settings registration
 * of the same runtime in the project wins (hooks/lib/common.sh forge_plugin_defers, which this
 * mirrors), so one event is stored once and a turn has one sidecar.
 */
import { homedir } from 'node:os';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readRegularText } from '../regular-file.js';
import { VENDORED_DIR } from '../runtimes/module.js';
import { checkPluginDir, MARKETPLACE_NAME, PLUGIN_NAME, type PluginRuntime } from '../runtimes/plugins.js';
import type { Check } from '../runtimes/module.js';

const PLUGIN_ID = `${PLUGIN_NAME}@${MARKETPLACE_NAME}`;

export interface FoundPlugin {
  runtime: PluginRuntime;
  /** The folder the runtime runs the hooks from. */
  dir: string;
  /** How the runtime knows of it (for people). */
  source: string;
  enabled: boolean;
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readRegularText(path));
  } catch {
    return null;
  }
}

function readText(path: string): string {
  try {
    return readRegularText(path);
  } catch {
    return '';
  }
}

function homeOf(env: NodeJS.ProcessEnv): string {
  return env.HOME || homedir();
}

/** `enabledPlugins[id]` of a Claude settings file: true, false, or undefined when it says nothing. */
function claudeEnabled(path: string): boolean | undefined {
  const value = (readJson(path) as { enabledPlugins?: Record<string, unknown> } | null)?.enabledPlugins?.[PLUGIN_ID];
  return typeof value === 'boolean' ? value : undefined;
}

export function findPlugins(repo: string, env: NodeJS.ProcessEnv = process.env): FoundPlugin[] {
  const home = homeOf(env);
  const found: FoundPlugin[] = [];
  // Claude Code: every install of the plugin, each with its scope; the most local settings file that
  // names it decides whether it is enabled.
  const config = env.CLAUDE_CONFIG_DIR || join(home, '.claude');
  const installed = readJson(join(config, 'plugins', 'installed_plugins.json')) as { plugins?: Record<string, unknown> } | null;
  const entries = installed?.plugins?.[PLUGIN_ID];
  if (Array.isArray(entries)) {
    for (const e of entries as Array<{ scope?: unknown; installPath?: unknown; projectPath?: unknown }>) {
      if (typeof e?.installPath !== 'string') continue;
      if (typeof e.projectPath === 'string' && e.projectPath !== repo) continue;
      const says = [join(repo, '.claude', 'settings.local.json'), join(repo, '.claude', 'settings.json'), join(config, 'settings.json')]
        .map(claudeEnabled)
        .find((v) => v !== undefined);
      found.push({
        runtime: 'claude-code',
        dir: e.installPath,
        source: `${PLUGIN_ID} (${typeof e.scope === 'string' ? e.scope : 'user'} scope)`,
        enabled: says === true,
      });
    }
  }
  // Codex: the cached versions of the plugin, enabled in config.toml.
  const codexHome = env.CODEX_HOME || join(home, '.codex');
  const cache = join(codexHome, 'plugins', 'cache', MARKETPLACE_NAME, PLUGIN_NAME);
  let versions: string[] = [];
  try {
    versions = readdirSync(cache).sort();
  } catch {
    // not installed
  }
  if (versions.length > 0) {
    const toml = readText(join(codexHome, 'config.toml'));
    const table = new RegExp(`^\\[plugins\\."${PLUGIN_ID.replace(/[.]/g, '\\.')}"\\]\\s*$([\\s\\S]*?)(?=^\\[|(?![\\s\\S]))`, 'm').exec(toml);
    const enabled = table !== null && !/^\s*enabled\s*=\s*false/m.test(table[1] ?? '');
    found.push({
      runtime: 'codex',
      dir: join(cache, versions[versions.length - 1] as string),
      source: `${PLUGIN_ID} in ${join(codexHome, 'config.toml')}`,
      enabled,
    });
  }
  // Gemini CLI: the extension folder (a copy; `gemini extensions link` makes it a link).
  const ext = join(home, '.gemini', 'extensions', PLUGIN_NAME);
  if (existsSync(join(ext, 'gemini-extension.json'))) {
    // Installed from the repository's root (a git URL), the hooks are those of plugins/gemini/.
    const dir = existsSync(join(ext, 'plugins', 'gemini', 'gemini-extension.json')) ? join(ext, 'plugins', 'gemini') : ext;
    const enablement = readJson(join(home, '.gemini', 'extensions', 'extension-enablement.json')) as Record<string, { overrides?: unknown }> | null;
    const overrides = enablement?.[PLUGIN_NAME]?.overrides;
    const disabled =
      Array.isArray(overrides) &&
      overrides.some((o) => typeof o === 'string' && o.startsWith('!') && (o === '!/*' || repo.startsWith(o.slice(1).replace(/\*$/, ''))));
    found.push({ runtime: 'gemini', dir, source: `extension ${PLUGIN_NAME} in ${join(home, '.gemini', 'extensions')}`, enabled: !disabled });
  }
  return found;
}

/**
 * The project settings registration that records instead of a plugin of `runtime`, or null: the
 * same rule as forge_plugin_defers in hooks/lib/common.sh.
 */
export function settingsThatRecord(runtime: PluginRuntime, repo: string, env: NodeJS.ProcessEnv = process.env): string | null {
  if (!existsSync(join(repo, VENDORED_DIR, 'reflect-stop-hook.sh'))) return null;
  const home = homeOf(env);
  const stop = (text: string) => text.includes(`reflect-stop-hook.sh ${runtime}`) || text.includes(`reflect-stop-hook.sh\\" ${runtime}`);
  let files: string[];
  switch (runtime) {
    case 'claude-code':
      files = [
        join(repo, '.claude/settings.json'),
        join(repo, '.claude/settings.local.json'),
        join(env.CLAUDE_CONFIG_DIR || join(home, '.claude'), 'settings.json'),
      ];
      break;
    case 'codex': {
      const toml = readText(join(env.CODEX_HOME || join(home, '.codex'), 'config.toml'));
      if (!toml.includes(`${repo}/.codex/hooks.json:stop:`)) return null;
      files = [join(repo, '.codex/hooks.json')];
      break;
    }
    case 'gemini':
      files = [join(repo, '.gemini/settings.json'), join(home, '.gemini/settings.json')];
      break;
  }
  const hit = files.find((f) => stop(readText(f)));
  return hit === undefined ? null : hit.startsWith(`${repo}/`) ? hit.slice(repo.length + 1) : hit;
}

/** One line per plugin or extension found: intact or not (the file named), and whether it records. */
export function checkPlugins(repo: string, env: NodeJS.ProcessEnv = process.env): Check[] {
  const checks: Check[] = [];
  for (const p of findPlugins(repo, env)) {
    const name = `${p.runtime} plugin`;
    const integrity = checkPluginDir(p.dir);
    const reinstall =
      p.runtime === 'claude-code'
        ? `claude plugin uninstall ${PLUGIN_ID} && claude plugin install ${PLUGIN_ID}`
        : p.runtime === 'codex'
          ? `codex plugin remove ${PLUGIN_ID} && codex plugin add ${PLUGIN_ID}`
          : `gemini extensions uninstall ${PLUGIN_NAME} && gemini extensions install <the kit's plugins/gemini> --consent`;
    if (integrity.unlisted) {
      checks.push({
        name,
        status: 'fail',
        detail: `${p.dir}: no hooks/lib/SHA256SUMS, so its hooks cannot be checked (not rendered by the kit?)`,
        fix: reinstall,
      });
      continue;
    }
    const changed = [...integrity.modified, ...integrity.missing.map((m) => `${m} (missing)`)];
    if (changed.length > 0) {
      checks.push({ name, status: 'fail', detail: `${p.dir}: changed since it was built: ${changed.join(', ')}`, fix: reinstall });
      continue;
    }
    const settings = settingsThatRecord(p.runtime, repo, env);
    const version = integrity.version ? ` ${integrity.version}` : '';
    if (!p.enabled) {
      checks.push({ name, status: 'ok', detail: `${p.source}${version}: disabled, records nothing${settings ? ` (${settings} records)` : ''}` });
    } else if (settings) {
      checks.push({ name, status: 'ok', detail: `${p.source}${version}: ${settings} records; this plugin's hooks stay quiet (one event, one row)` });
    } else {
      checks.push({ name, status: 'ok', detail: `${p.source}${version}: this plugin records (${p.dir})` });
    }
  }
  return checks;
}

/** How to get the CLI, for a repository of any kind (never `npx` of a name the kit does not own). */
export const CLI_HOWTO =
  'npm install -g <a clone of the kit, or its packed .tgz> (a repository without package.json is fine), or npm install --prefix ~/.forge-reflect <same>, or as a devDependency (pnpm 10 builds better-sqlite3 only once approved: "pnpm": {"onlyBuiltDependencies": ["better-sqlite3"]} in package.json then pnpm install, or pnpm approve-builds --all)';

/**
 * The CLI the Stop hook would start to drain the spool, looked up as the hook does it
 * (reflect-stop-hook.sh forge_stop_find_cli, then common.sh forge_cli_elsewhere), or null.
 */
export function cliTheHooksFind(repo: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const isExec = (p: string) => {
    try {
      const stats = statSync(p);
      return stats.isFile() && (stats.mode & 0o111) !== 0;
    } catch {
      return false;
    }
  };
  const given = env.FORGE_REFLECT_CLI;
  if (given === 'off') return null;
  if (given) return isExec(given.startsWith('/') ? given : join(repo, given)) ? given : null;
  const home = homeOf(env);
  const candidates = [
    join(repo, 'node_modules', '.bin', 'forge-reflect'),
    ...(env.PATH ?? '')
      .split(':')
      .filter((d) => d.startsWith('/'))
      .map((d) => join(d, 'forge-reflect')),
    join(home, '.forge-reflect', 'node_modules', '.bin', 'forge-reflect'),
    join(home, '.forge-reflect', 'bin', 'forge-reflect'),
    ...(env.NPM_CONFIG_PREFIX ? [join(env.NPM_CONFIG_PREFIX, 'bin', 'forge-reflect')] : []),
    ...(env.PNPM_HOME ? [join(env.PNPM_HOME, 'forge-reflect')] : []),
  ];
  return candidates.find(isExec) ?? null;
}

export function checkCli(repo: string | null, env: NodeJS.ProcessEnv = process.env): Check {
  const name = 'CLI for the hooks';
  if (env.FORGE_REFLECT_CLI === 'off')
    return { name, status: 'ok', detail: 'FORGE_REFLECT_CLI=off: the hooks never drain; forge-reflect commands drain the spool when they run' };
  const found = repo === null ? null : cliTheHooksFind(repo, env);
  if (found) return { name, status: 'ok', detail: `the Stop hook drains the spool with ${found}` };
  return {
    name,
    status: 'warn',
    detail:
      'the hooks find no forge-reflect CLI (project node_modules/.bin, PATH, ~/.forge-reflect): events wait in the spool until a forge-reflect command drains them',
    fix: CLI_HOWTO,
  };
}
