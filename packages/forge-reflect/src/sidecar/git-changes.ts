/**
 * The files a working tree has changed: everything since a base revision (commits, staged and
 * unstaged changes, with renames split into the old and the new path) plus untracked files that
 * are not ignored. Paths are repo-relative with `/`.
 */
import { execFileSync } from 'node:child_process';
import { UserError } from '../errors.js';

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 });
}

function nulList(text: string): string[] {
  return text.split('\0').filter((s) => s.length > 0);
}

export function repoRoot(cwd: string): string {
  try {
    return git(cwd, ['rev-parse', '--show-toplevel']).trim();
  } catch {
    throw new UserError(`${cwd} is not inside a git work tree; run it in a repository or pass the paths yourself`);
  }
}

export function changedFiles(cwd: string, base = 'HEAD'): string[] {
  const root = repoRoot(cwd);
  const hasHead = (() => {
    try {
      git(root, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
      return true;
    } catch {
      return false;
    }
  })();
  let tracked: string[] = [];
  if (hasHead || base !== 'HEAD') {
    try {
      git(root, ['rev-parse', '--verify', '--quiet', `${base}^{commit}`]);
    } catch {
      throw new UserError(`unknown revision ${JSON.stringify(base)}; pass a commit, branch or tag, e.g. --base HEAD~1`);
    }
    tracked = nulList(git(root, ['diff', '--name-only', '--no-renames', '-z', base, '--']));
  } else {
    // A repository without commits: everything in the index is new.
    tracked = nulList(git(root, ['diff', '--cached', '--name-only', '--no-renames', '-z', '--root', '--']));
    if (tracked.length === 0) tracked = nulList(git(root, ['ls-files', '-z']));
  }
  const untracked = nulList(git(root, ['ls-files', '--others', '--exclude-standard', '-z']));
  return [...new Set([...tracked, ...untracked])].sort();
}
