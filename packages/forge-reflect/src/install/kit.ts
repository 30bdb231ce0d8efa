/**
 * What install vendors and where it goes: the kit's sources (hooks, the canonical registration,
 * the slash command), the repo-relative targets, and reading a target repo's settings file with
 * every refusal (symlink, not a file, not valid JSON, a `hooks` that is not an object) made once.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UserError } from '../errors.js';
import { kitPath } from '../paths.js';
import { gitToplevel } from '../state-dir.js';
import { lstatOrNull } from './files.js';
import { SETTINGS_LOCAL, SETTINGS_SHARED } from '../runtimes/claude-code.js';
import { registrationOf, VENDORED_DIR, type JsonObject, type Registration } from '../runtimes/module.js';
import { runtimeModule, type RuntimeId } from '../runtimes/index.js';
import { DEFAULT_FORMAT, parseSettingsText, type JsonFormat } from './settings-merge.js';

export { SETTINGS_LOCAL, SETTINGS_SHARED };
export const SLASH_COMMAND = '.claude/commands/reflect.md';
export const STATE_DIR = '.forge';
export { VENDORED_DIR };

/** The two hook scripts Claude Code runs directly (they must stay executable). */
const ENTRY_SCRIPTS = ['reflect-stop-hook.sh', 'reflect-event-hook.sh'] as const;
/** Files the hooks cannot work without; all other files of hooks/lib/ are vendored as well. */
const REQUIRED_LIB = ['common.sh', 'fallback-sidecar.sh', 'risk-table.sh', 'reflect-helper.cjs'] as const;

export function settingsFileFor(local: boolean): string {
  return local ? SETTINGS_LOCAL : SETTINGS_SHARED;
}

export function backupPathOf(settingsRel: string): string {
  return `${settingsRel}.forge-reflect.bak`;
}

/** The repository to work on: `--repo` as given, else the git top level of the cwd. */
export function resolveRepo(flag: unknown, cwd: string = process.cwd()): string {
  if (flag !== undefined && flag !== '') {
    const repo = resolve(cwd, String(flag));
    let isDir = false;
    try {
      isDir = statSync(repo).isDirectory();
    } catch {
      // reported below
    }
    if (!isDir) throw new UserError(`--repo ${repo} is not a folder; pass the repository's folder`);
    return repo;
  }
  const top = gitToplevel(cwd);
  if (top === undefined) throw new UserError(`${cwd} is not inside a git work tree; run this inside the repository or pass --repo DIR`);
  return top;
}

export interface KitFile {
  source: string;
  /** Relative to the vendored folder, with `/`. */
  rel: string;
  mode: number;
  bytes: Buffer;
}

/** The files to vendor, read from the kit; a missing generated file means the kit was not built. */
export function kitFiles(): KitFile[] {
  const files: KitFile[] = [];
  const add = (source: string, rel: string, entry: boolean) => {
    let mode: number;
    let bytes: Buffer;
    try {
      mode = statSync(source).mode & 0o777;
      bytes = readFileSync(source);
    } catch {
      throw new UserError(`the kit's ${source} is missing; run \`npm run build\` in the forge-reflect kit, then install again`);
    }
    // Entry scripts are run by path: executable wherever they are readable, like `chmod +x`.
    if (entry) mode |= (mode & 0o444) >> 2;
    files.push({ source, rel, mode, bytes });
  };
  for (const name of ENTRY_SCRIPTS) add(kitPath('hooks', name), name, true);
  const libDir = kitPath('hooks', 'lib');
  let names: string[] = [];
  try {
    names = readdirSync(libDir, { withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => e.name)
      .sort();
  } catch {
    // each required file is reported below
  }
  for (const name of REQUIRED_LIB) if (!names.includes(name)) add(join(libDir, name), `lib/${name}`, false);
  for (const name of names) add(join(libDir, name), `lib/${name}`, false);
  return files;
}

/**
 * A runtime's registration, generated from the hook map (runtimes/hook-map.ts) by its module.
 * (runtime/<runtime>/ holds the renderings, kept for readers and drift-tested.)
 */
export function loadRegistration(runtime: RuntimeId = 'claude-code'): Registration {
  return registrationOf(runtimeModule(runtime));
}

export function slashCommandSource(): Buffer {
  return readFileSync(kitPath('runtime', 'claude', 'commands', 'reflect.md'));
}

export function claudeMdSnippet(): string {
  return readFileSync(kitPath('runtime', 'claude', 'CLAUDE.md.snippet'), 'utf8');
}

export interface SettingsFile {
  rel: string;
  path: string;
  exists: boolean;
  /** The bytes as read (null when the file does not exist). */
  bytes: Buffer | null;
  value: JsonObject;
  format: JsonFormat;
  mode: number;
}

/**
 * Reads a settings file for changing it. Refuses (exit 1, nothing changed) a symlink, anything but
 * a regular file, and text that is not a JSON object with an object `hooks`.
 */
export function readSettingsFile(repo: string, rel: string, command: 'install' | 'uninstall'): SettingsFile {
  const path = join(repo, rel);
  const stats = lstatOrNull(path);
  if (stats === null) return { rel, path, exists: false, bytes: null, value: {}, format: DEFAULT_FORMAT, mode: 0o644 };
  if (stats.isSymbolicLink()) {
    throw new UserError(
      `${path} is a symbolic link; ${command} does not write through links: replace it with a regular file (a copy of its target) and run ${command} again`,
    );
  }
  if (!stats.isFile()) throw new UserError(`${path} is not a regular file; move it aside and run ${command} again`);
  const bytes = readFileSync(path);
  const parsed = parseSettingsText(bytes.toString('utf8'));
  if (!parsed.ok) {
    throw new UserError(`${path}: ${parsed.problem}; fix the file (or move it aside) and run ${command} again; nothing was changed`);
  }
  return { rel, path, exists: true, bytes, value: parsed.value, format: parsed.format, mode: stats.mode & 0o777 };
}
