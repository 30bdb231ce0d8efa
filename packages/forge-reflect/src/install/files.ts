/**
 * The file operations install and uninstall share: refusing symbolic links on the way into the
 * repo, and small lookups. (Atomic writes are in ../atomic-write.ts.)
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readFileSync, rmdirSync, unlinkSync, type Stats } from 'node:fs';
import { join, sep } from 'node:path';
import { UserError } from '../errors.js';

export function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw error;
  }
}

export function readOrNull(path: string): Buffer | null {
  const stats = lstatOrNull(path);
  return stats?.isFile() ? readFileSync(path) : null;
}

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Repo-relative, with `/`, for messages and the manifest. */
export function relPath(...parts: string[]): string {
  return parts.join('/').split(sep).join('/');
}

/** The folder of a repo-relative path. */
export function dirOf(rel: string): string {
  return rel.slice(0, rel.lastIndexOf('/'));
}

/**
 * Refuses when any existing folder or file from `repo` down to `repo/rel` is a symbolic link:
 * writing through one would change files outside the repository.
 */
export function refuseSymlinks(repo: string, rel: string, fix: string): void {
  let path = repo;
  for (const part of rel.split('/')) {
    path = join(path, part);
    const stats = lstatOrNull(path);
    if (stats === null) return;
    if (stats.isSymbolicLink()) throw new UserError(`${path} is a symbolic link; forge-reflect does not write through links: ${fix}`);
  }
}

/** The folders of `rel` (repo-relative) that do not exist yet, outermost first. */
export function missingDirs(repo: string, rel: string): string[] {
  const missing: string[] = [];
  const parts = rel.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const sub = parts.slice(0, i).join('/');
    const stats = lstatOrNull(join(repo, sub));
    if (stats === null) missing.push(sub);
    else if (!stats.isDirectory()) throw new UserError(`${join(repo, sub)} is not a folder; move it aside so install can create ${rel}/`);
  }
  return missing;
}

export function ensureDirs(repo: string, dirs: readonly string[]): void {
  for (const dir of dirs) mkdirSync(join(repo, dir), { recursive: true });
}

/** Removes a file; one already gone is fine. */
export function unlinkQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** Removes a folder when it is empty; true when it is gone. */
export function rmdirIfEmpty(path: string): boolean {
  try {
    rmdirSync(path);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
