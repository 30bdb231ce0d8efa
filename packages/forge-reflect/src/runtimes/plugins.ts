/**
 * The kit as each runtime's own package: a Claude Code plugin (this repository is also its
 * marketplace), a Codex plugin (with Codex's marketplace file) and a Gemini CLI extension. Each
 * is a folder under plugins/ that carries its hooks/hooks.json, rendered from the hook map
 * (hook-map.ts) with the same handlers as the settings registrations, and a copy of the hooks
 * themselves (bash, the generated risk table, the bundled node helper): a runtime copies a plugin
 * into its own cache, so nothing outside the folder is reachable, and no node_modules is there.
 *
 * Format rules the runtimes hold to (../shared/reference/research-runtimes.md):
 * - hooks/hooks.json wraps the events in a top-level `hooks` object; the manifest never names
 *   `hooks` (Claude Code loads the default file twice when it does, Codex's validator rejects it).
 * - A Codex plugin has nothing but `.codex-plugin/plugin.json` for a manifest: a `plugin.json` at
 *   its root silently disables its hooks. Its hooks.json has no top-level `description`.
 * - Gemini installs from a git URL only at the repository's root, so the root also holds a
 *   gemini-extension.json whose hooks/hooks.json runs the scripts of plugins/gemini/.
 *
 * Every plugin command sets FORGE_PLUGIN: a hook that runs from a plugin stays quiet when the
 * project registers the kit in its settings too (hooks/lib/common.sh forge_plugin_defers).
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonObject } from './module.js';
import { bindingsFor, KIT_SCRIPTS, type KitHook, type RuntimeId } from './hook-map.js';
import { claudeCode, STOP_FAILURE_DETACH } from './claude-code.js';
import { codex } from './codex.js';
import { gemini } from './gemini.js';
import type { RuntimeModule } from './module.js';

export const PLUGIN_NAME = 'forge-reflect';
export const MARKETPLACE_NAME = 'forge-reflect';
export const PLUGIN_RUNTIMES = ['claude-code', 'codex', 'gemini'] as const;
export type PluginRuntime = (typeof PLUGIN_RUNTIMES)[number];
export const PLUGIN_DIRS: Readonly<Record<PluginRuntime, string>> = { 'claude-code': 'plugins/claude-code', codex: 'plugins/codex', gemini: 'plugins/gemini' };
/** The file in every plugin's hooks/lib/ listing the sha256 of each file the plugin was built with. */
export const SUMS_FILE = 'hooks/lib/SHA256SUMS';
const DESCRIPTION =
  'Fail-closed reflection hooks: a reflection.v1 sidecar at the end of every agent turn and a local SQLite log of every event (REFLECTION_MODE=solo turns it on).';

const MODULES: Readonly<Record<PluginRuntime, RuntimeModule>> = { 'claude-code': claudeCode, codex, gemini };

/**
 * The shell command a plugin registers for one event. `base` is how the command names the folder
 * that holds reflect-*-hook.sh: each runtime's plugin-root variable.
 */
export function pluginCommand(runtime: PluginRuntime, hook: KitHook, event: string, base?: string): string {
  const args = hook === 'event' ? `${event} ${runtime}` : runtime;
  const script = KIT_SCRIPTS[hook];
  switch (runtime) {
    case 'claude-code': {
      // As the settings command (claude-code.ts): the mode checked by `sh` first, bash only when on.
      const locale = hook === 'event' ? 'LC_ALL=C ' : '';
      const detach = event === 'StopFailure' ? STOP_FAILURE_DETACH : '';
      return `case "$REFLECTION_MODE" in solo|orchestrated) ${detach}${locale}BASH_ENV= FORGE_PLUGIN=1 exec ${detach ? '$S ' : ''}bash "${base ?? '${CLAUDE_PLUGIN_ROOT}/hooks'}"/${script} ${args};; esac`;
    }
    case 'codex': {
      // Codex sets PLUGIN_ROOT (and CLAUDE_PLUGIN_ROOT) for a plugin's hooks; the project is found
      // by the hook from the session's cwd (Codex has no project-dir variable).
      const path = `"${base ?? '$PLUGIN_ROOT/hooks'}/${script}"`;
      return `[ -f ${path} ] && FORGE_PLUGIN=1 bash ${path} ${args}; exit 0`;
    }
    case 'gemini': {
      // ${extensionPath} is Gemini's own substitution; $GEMINI_PROJECT_DIR stays bare (Gemini
      // rewrites it shell-quoted). Exit 0 and no output when the script is missing: Gemini takes
      // exit >= 2 with output as a deny.
      const path = `"${base ?? '${extensionPath}/hooks'}/${script}"`;
      return `[ -f ${path} ] && FORGE_PLUGIN=1 FORGE_PROJECT_DIR=$GEMINI_PROJECT_DIR bash ${path} ${args}; exit 0`;
    }
  }
}

/** A plugin's hooks/hooks.json: the runtime's own handlers (timeout unit, name, env) with the plugin command. */
export function pluginHooks(runtime: PluginRuntime, base?: string): JsonObject {
  const module = MODULES[runtime];
  const hooks: JsonObject = {};
  for (const b of bindingsFor(runtime as RuntimeId)) {
    const group: JsonObject = {};
    if (b.tool) group.matcher = '*';
    const handler: JsonObject = { ...module.handler(b.hook, b.event, b.timeoutSeconds), command: pluginCommand(runtime, b.hook, b.event, base) };
    // Gemini fills an extension's `${name}` from its own variables only (extensionPath, …), never
    // from the environment: the settings registration's "${REFLECTION_MODE:-off}" would arrive
    // as that literal text, which the hooks take for off. The hook reads the mode it inherits.
    if (runtime === 'gemini') delete handler.env;
    group.hooks = [handler];
    hooks[b.event] = [group];
  }
  return runtime === 'claude-code' ? { description: `${PLUGIN_NAME}: ${DESCRIPTION}`, hooks } : { hooks };
}

export interface RenderedFile {
  /** Repo-relative, with `/`. */
  rel: string;
  bytes: Buffer;
  mode: number;
}

const json = (value: unknown): Buffer => Buffer.from(`${JSON.stringify(value, null, 2)}\n`);

function pluginReadme(runtime: PluginRuntime): string {
  const label = MODULES[runtime].label;
  return [
    `# forge-reflect for ${label}`,
    '',
    'This folder is rendered by `node scripts/build/render-plugins.mjs` from the kit; do not edit it',
    '(`forge-reflect doctor` fails on a changed file). docs/plugins.md has the whole story.',
    '',
    'The hooks here need bash, git and node only. They do nothing until `REFLECTION_MODE=solo` (or',
    '`orchestrated`) is set where the agent is started. Each turn leaves a sidecar in',
    '`<repo>/.forge/reflections/` and spools its events in `<repo>/.forge/spool/`.',
    '',
    'The CLI that drains the spool into `.forge/events.db` and reads it (`report`, `events`, `doctor`)',
    'is not in the plugin (it needs better-sqlite3). The hooks find it, in this order: `FORGE_REFLECT_CLI`,',
    "the project's `node_modules/.bin/forge-reflect`, `forge-reflect` on PATH, `~/.forge-reflect`.",
    'Without one the spool waits, and the first `forge-reflect` command drains it. Get it from a clone',
    'of the kit: `npm install -g <clone or packed .tgz>` (or as a devDependency; pnpm 10 asks',
    '`pnpm approve-builds` for better-sqlite3). Never `npx forge-reflect`: that name is not ours.',
    '',
  ].join('\n');
}

/** The files of the kit's hooks, as install vendors them (kit.ts), relative to hooks/. */
function hookFiles(kitRoot: string): Array<{ rel: string; bytes: Buffer; mode: number }> {
  const out: Array<{ rel: string; bytes: Buffer; mode: number }> = [];
  for (const name of Object.values(KIT_SCRIPTS)) out.push({ rel: name, bytes: readFileSync(join(kitRoot, 'hooks', name)), mode: 0o755 });
  const lib = join(kitRoot, 'hooks', 'lib');
  const names = readdirSync(lib, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name !== 'SHA256SUMS')
    .map((e) => e.name)
    .sort();
  for (const name of ['risk-table.sh', 'reflect-helper.cjs']) {
    if (!names.includes(name)) throw new Error(`hooks/lib/${name} is missing: run \`npm run build\` first`);
  }
  for (const name of names) out.push({ rel: `lib/${name}`, bytes: readFileSync(join(lib, name)), mode: 0o644 });
  return out;
}

export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** `<sha256>  <path>` lines, sorted by path (sha256sum's format). */
export function sumsText(files: ReadonlyArray<{ rel: string; bytes: Buffer }>): string {
  return [...files]
    .sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0))
    .map((f) => `${sha256(f.bytes)}  ${f.rel}\n`)
    .join('');
}

export function parseSums(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]{64}) {2}(\S.*)$/.exec(line);
    if (m) out.set(m[2] as string, m[1] as string);
  }
  return out;
}

/** Every file of plugins/, the marketplace files and the root Gemini manifest, rendered from the kit at `kitRoot`. */
export function renderPlugins(kitRoot: string): RenderedFile[] {
  const pkg = JSON.parse(readFileSync(join(kitRoot, 'package.json'), 'utf8')) as { version: string; license?: string };
  const version = pkg.version;
  const hooks = hookFiles(kitRoot);
  const out: RenderedFile[] = [];
  const author = { name: 'forge-reflect' };
  const manifests: Record<PluginRuntime, Array<{ rel: string; bytes: Buffer }>> = {
    'claude-code': [
      { rel: '.claude-plugin/plugin.json', bytes: json({ name: PLUGIN_NAME, version, description: DESCRIPTION, author, license: pkg.license ?? 'MIT' }) },
    ],
    codex: [
      {
        rel: '.codex-plugin/plugin.json',
        bytes: json({
          name: PLUGIN_NAME,
          version,
          description: DESCRIPTION,
          author,
          license: pkg.license ?? 'MIT',
          interface: { displayName: 'forge-reflect', shortDescription: 'Reflection sidecars and an event log for every turn', category: 'Productivity' },
        }),
      },
    ],
    gemini: [{ rel: 'gemini-extension.json', bytes: json({ name: PLUGIN_NAME, version, description: DESCRIPTION }) }],
  };
  for (const runtime of PLUGIN_RUNTIMES) {
    const dir = PLUGIN_DIRS[runtime];
    const files: Array<{ rel: string; bytes: Buffer; mode: number }> = [
      ...manifests[runtime].map((m) => ({ ...m, mode: 0o644 })),
      { rel: 'hooks/hooks.json', bytes: json(pluginHooks(runtime)), mode: 0o644 },
      ...hooks.map((h) => ({ ...h, rel: `hooks/${h.rel}` })),
      { rel: 'README.md', bytes: Buffer.from(pluginReadme(runtime)), mode: 0o644 },
    ];
    if (runtime === 'claude-code')
      files.push({ rel: 'commands/reflect.md', bytes: readFileSync(join(kitRoot, 'runtime', 'claude', 'commands', 'reflect.md')), mode: 0o644 });
    files.push({ rel: SUMS_FILE, bytes: Buffer.from(sumsText(files)), mode: 0o644 });
    for (const f of files) out.push({ rel: `${dir}/${f.rel}`, bytes: f.bytes, mode: f.mode });
  }
  out.push({
    rel: '.claude-plugin/marketplace.json',
    bytes: json({
      name: MARKETPLACE_NAME,
      owner: author,
      metadata: { description: 'forge-reflect, the reflection hook kit, as a Claude Code plugin' },
      plugins: [{ name: PLUGIN_NAME, source: `./${PLUGIN_DIRS['claude-code']}`, description: DESCRIPTION, version }],
    }),
    mode: 0o644,
  });
  out.push({
    rel: '.agents/plugins/marketplace.json',
    bytes: json({
      name: MARKETPLACE_NAME,
      interface: { displayName: 'forge-reflect' },
      plugins: [
        {
          name: PLUGIN_NAME,
          source: { source: 'local', path: `./${PLUGIN_DIRS.codex}` },
          policy: { installation: 'AVAILABLE', authentication: 'ON_INSTALL' },
          category: 'Productivity',
        },
      ],
    }),
    mode: 0o644,
  });
  // `gemini extensions install <git URL>` takes the repository's root as the extension.
  out.push({ rel: 'gemini-extension.json', bytes: json({ name: PLUGIN_NAME, version, description: DESCRIPTION }), mode: 0o644 });
  out.push({ rel: 'hooks/hooks.json', bytes: json(pluginHooks('gemini', `\${extensionPath}/${PLUGIN_DIRS.gemini}/hooks`)), mode: 0o644 });
  return out;
}

export interface PluginIntegrity {
  /** Files whose bytes differ from the plugin's SHA256SUMS, or that are missing. */
  modified: string[];
  missing: string[];
  /** No SHA256SUMS (or an unreadable one): nothing can be checked. */
  unlisted: boolean;
  version: string | null;
}

/** Checks an installed plugin folder against the sums it was rendered with. */
export function checkPluginDir(dir: string): PluginIntegrity {
  let sums: Map<string, string>;
  try {
    sums = parseSums(readFileSync(join(dir, SUMS_FILE), 'utf8'));
  } catch {
    return { modified: [], missing: [], unlisted: true, version: null };
  }
  const modified: string[] = [];
  const missing: string[] = [];
  for (const [rel, want] of sums) {
    let bytes: Buffer;
    try {
      if (!statSync(join(dir, rel)).isFile()) throw new Error('not a file');
      bytes = readFileSync(join(dir, rel));
    } catch {
      missing.push(rel);
      continue;
    }
    if (sha256(bytes) !== want) modified.push(rel);
  }
  let version: string | null = null;
  for (const manifest of ['.claude-plugin/plugin.json', '.codex-plugin/plugin.json', 'gemini-extension.json']) {
    try {
      const v = (JSON.parse(readFileSync(join(dir, manifest), 'utf8')) as { version?: unknown }).version;
      if (typeof v === 'string') version = v;
      break;
    } catch {
      // not this runtime's manifest
    }
  }
  return { modified, missing, unlisted: sums.size === 0, version };
}
