/**
 * Where forge-reflect keeps its state (spool, event log, sidecars, config), the same rule as the
 * hooks' (hooks/lib/common.sh): `$FORGE_DIR`, else `<project>/.forge` where the project is
 * `$FORGE_PROJECT_DIR`, `$CLAUDE_PROJECT_DIR` or `$GEMINI_PROJECT_DIR` (the runtime's project
 * folder, which does not follow an agent's `cd`), else the git toplevel of the cwd, else the cwd.
 * The folder is created 0700 with a `.gitignore` of `*`, so nothing in it is ever committed.
 */
import { nodeChildProcess } from './lazy-builtins.js';
import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { UserError } from './errors.js';

export const STATE_DIR_NAME = '.forge';
/** Variables naming the project folder, in the order they are tried. */
export const PROJECT_DIR_VARIABLES = ['FORGE_PROJECT_DIR', 'CLAUDE_PROJECT_DIR', 'GEMINI_PROJECT_DIR'] as const;

export interface StateDirInput {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** The git toplevel of a folder, or undefined outside a work tree (default: asks git). */
  gitToplevel?: (cwd: string) => string | undefined;
}

/** `git rev-parse --show-toplevel` of a folder; undefined outside a work tree or without git. */
export function gitToplevel(cwd: string): string | undefined {
  const result = nodeChildProcess().spawnSync('git', ['rev-parse', '--show-toplevel'], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    timeout: 10_000,
  });
  if (result.status !== 0 || typeof result.stdout !== 'string') return undefined;
  const top = result.stdout.trim();
  return top === '' ? undefined : top;
}

/** The state folder for a working directory. Only asks git when `FORGE_DIR` is unset or empty. */
export function resolveStateDir(input: StateDirInput = {}): string {
  const env = input.env ?? process.env;
  const cwd = input.cwd ?? process.cwd();
  const fromEnv = env.FORGE_DIR;
  if (fromEnv !== undefined && fromEnv !== '') return resolve(cwd, fromEnv);
  const project = projectDirFromEnv(env);
  if (project !== undefined) return join(project, STATE_DIR_NAME);
  const top = (input.gitToplevel ?? gitToplevel)(cwd);
  return join(top ?? resolve(cwd), STATE_DIR_NAME);
}

/** The first of PROJECT_DIR_VARIABLES that names an existing absolute folder. */
export function projectDirFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  for (const name of PROJECT_DIR_VARIABLES) {
    const value = env[name];
    if (value === undefined || !isAbsolute(value)) continue;
    try {
      if (statSync(value).isDirectory()) return resolve(value);
    } catch {
      // not a folder: try the next
    }
  }
  return undefined;
}

export function spoolDirOf(stateDir: string): string {
  return join(stateDir, 'spool');
}

export function rejectedDirOf(stateDir: string): string {
  return join(stateDir, 'spool', 'rejected');
}

export function eventsDbPathOf(stateDir: string): string {
  return join(stateDir, 'events.db');
}

export function configPathOf(stateDir: string): string {
  return join(stateDir, 'config.json');
}

/**
 * Creates a private folder (0700 when this call creates it; an existing folder's mode is left
 * alone, since `FORGE_DIR` may point anywhere). Returns the folder.
 */
export function ensurePrivateDir(dir: string): string {
  const created = mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (created !== undefined) chmodSync(dir, 0o700); // the umask may have removed bits; make it exact
  return dir;
}

/**
 * Creates the state folder (0700) and its `.gitignore` of `*` when missing. Returns the folder.
 * Throws a UserError naming the folder when it cannot be created.
 */
export function ensureStateDir(stateDir: string): string {
  try {
    ensurePrivateDir(stateDir);
    try {
      writeFileSync(join(stateDir, '.gitignore'), '*\n', { flag: 'wx', mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new UserError(`cannot create the state folder ${stateDir} (${code}); fix its permissions or set FORGE_DIR to a writable folder`);
  }
  return stateDir;
}
