import { changedFromStatus } from '../sidecar/git-status.js';
import type { Facts } from './facts.js';
import { readText } from './read-text.js';

/** The changed files, and why the list is incomplete when it is. */
export type ChangedList = { files: string[]; incomplete?: string };

/**
 * The session's changed files: from the hook's one `git status`, plus the commits since the base
 * when there was no snapshot (a NUL-separated list). Kept as an array: joining many paths into one
 * text and splitting it again costs more than the list itself.
 */
export function changedList(env: Facts): ChangedList | null {
  const status = readText(env.FORGE_H_STATUS);
  if (status === null) return null;
  const { files, untrackedDirs } = changedFromStatus(status, env.FORGE_H_STATUS_BASE === 'snapshot' ? 'snapshot' : 'head');
  const committed = readText(env.FORGE_H_COMMITTED);
  const all = committed === null ? files : files.concat(committed.split('\0'));
  if (untrackedDirs.length === 0) return { files: all };
  const listed = untrackedFiles(env, untrackedDirs);
  if (listed === null) {
    // The folders stand in for their files, and the floor, which did not see those, fails closed.
    return {
      files: all.concat(untrackedDirs),
      incomplete: `the files in ${untrackedDirs.length} new folder(s) could not be listed (git ls-files failed or ran out of the git budget), so the floor saw only the folders' names`,
    };
  }
  return { files: all.concat(listed) };
}

/**
 * The untracked, not ignored files in `dirs` (the `? dir/` records of a `git status` that did not
 * list them one by one), against the same index the status read ($FORGE_H_GIT_INDEX, the snapshot;
 * else the user's), within what is left of the hook's git budget ($FORGE_H_GIT_SECONDS). A nested
 * repository stays one `dir/` entry, as `git status -uall` gives it. null when git failed.
 * child_process is loaded only here: a turn that made no new folder never pays for it.
 */
function untrackedFiles(env: Facts, dirs: string[]): string[] | null {
  const root = env.FORGE_H_GIT_ROOT;
  const seconds = Number(env.FORGE_H_GIT_SECONDS);
  if (!root?.startsWith('/') || !(seconds >= 1)) return null;
  try {
    const { execFileSync } = require('node:child_process') as typeof import('node:child_process');
    const gitEnv: Record<string, string | undefined> = { ...process.env, GIT_LITERAL_PATHSPECS: '1' };
    if (env.FORGE_H_GIT_INDEX) gitEnv.GIT_INDEX_FILE = env.FORGE_H_GIT_INDEX;
    else delete gitEnv.GIT_INDEX_FILE;
    // Many folders: the whole tree's list, one argument, instead of an argument list past a limit.
    const pathspec = dirs.length > 1000 ? [] : dirs;
    const out = execFileSync('git', ['-C', root, 'ls-files', '-z', '--others', '--exclude-standard', '--', ...pathspec], {
      env: gitEnv,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: seconds * 1000,
      killSignal: 'SIGKILL',
      maxBuffer: 1 << 30,
    });
    return out.split('\0').filter((path) => path !== '');
  } catch {
    return null;
  }
}
