/**
 * Registration by files (a runtime with no settings file: Cline runs executables named after the
 * event). install writes each file, records its sha256 in the manifest, and refuses to replace a
 * file that is not the one it wrote; uninstall removes a file only while it still has those bytes,
 * and the folders install created once they are empty. Plans only: the caller runs the writes.
 */
import { join } from 'node:path';
import { writeAtomic } from '../atomic-write.js';
import { UserError } from '../errors.js';
import type { HookFile } from '../runtimes/module.js';
import { dirOf, lstatOrNull, missingDirs, readOrNull, refuseSymlinks, sha256, unlinkQuiet } from './files.js';
import type { InstallManifest } from './manifest.js';
import type { Write } from './plan.js';
import type { Step } from './report.js';

/** Install: the steps and writes for `files`; `manifest` is updated (hook_files, created_dirs). */
export function planHookFiles(
  repo: string,
  files: readonly HookFile[],
  manifest: InstallManifest,
  previous: InstallManifest | null,
  fix: string,
): { steps: Step[]; writes: Write[]; newDirs: string[] } {
  const steps: Step[] = [];
  const writes: Write[] = [];
  const newDirs: string[] = [];
  const recorded = { ...(manifest.hook_files ?? {}) };
  for (const f of files) {
    refuseSymlinks(repo, f.rel, fix);
    for (const dir of missingDirs(repo, dirOf(f.rel))) if (!newDirs.includes(dir)) newDirs.push(dir);
    const dest = join(repo, f.rel);
    const stats = lstatOrNull(dest);
    const bytes = Buffer.from(f.text);
    if (stats && !stats.isFile()) throw new UserError(`${dest} is not a regular file; move it aside and run install again; nothing was changed`);
    const existing = stats ? readOrNull(dest) : null;
    recorded[f.rel] = sha256(bytes);
    if (existing !== null && existing.equals(bytes) && stats !== null && (stats.mode & 0o777) === f.mode) continue;
    if (existing !== null && !existing.equals(bytes) && previous?.hook_files?.[f.rel] !== sha256(existing)) {
      throw new UserError(
        `${dest} exists and is not forge-reflect's; rename it (the runtime runs every hook file of that name) and run install again; nothing was changed`,
      );
    }
    steps.push({
      action: existing === null ? 'create' : 'update',
      path: f.rel,
      detail: existing === null ? `hook file, mode ${f.mode.toString(8)}` : 'replaced with the kit’s version',
    });
    writes.push(() => writeAtomic(dest, bytes, f.mode));
  }
  manifest.hook_files = recorded;
  manifest.created_dirs = [...new Set([...manifest.created_dirs, ...newDirs])];
  return { steps, writes, newDirs };
}

/** Whether any of `files` is installed: present and with the bytes install recorded (or the kit's own). */
export function hookFilesInstalled(repo: string, files: readonly HookFile[], manifest: InstallManifest | null): boolean {
  return files.some((f) => {
    const bytes = readOrNull(join(repo, f.rel));
    return bytes !== null && (manifest?.hook_files?.[f.rel] === sha256(bytes) || bytes.equals(Buffer.from(f.text)));
  });
}

/**
 * Uninstall: removes each of `files` (and any other file the manifest recorded in their folders)
 * that still has the bytes install wrote; one changed since is kept, with a note. `gone` collects
 * the removed paths; the manifest entries go.
 */
export function unplanHookFiles(
  repo: string,
  files: readonly HookFile[],
  manifest: InstallManifest | null,
  gone: Set<string>,
): { steps: Step[]; writes: Write[]; notes: string[]; forgotten: string[] } {
  const steps: Step[] = [];
  const writes: Write[] = [];
  const notes: string[] = [];
  const dirs = new Set(files.map((f) => dirOf(f.rel)));
  const recorded = manifest?.hook_files ?? {};
  const rels = [...new Set([...files.map((f) => f.rel), ...Object.keys(recorded).filter((rel) => dirs.has(dirOf(rel)))])];
  const forgotten: string[] = [];
  for (const rel of rels) {
    const path = join(repo, rel);
    const bytes = readOrNull(path);
    if (recorded[rel] !== undefined) forgotten.push(rel);
    if (bytes === null) continue;
    const current = files.find((f) => f.rel === rel);
    const ours = recorded[rel] === sha256(bytes) || (recorded[rel] === undefined && current !== undefined && bytes.equals(Buffer.from(current.text)));
    if (!ours) {
      if (recorded[rel] !== undefined) notes.push(`kept ${rel}: it was changed after install`);
      continue;
    }
    steps.push({ action: 'remove', path: rel, detail: 'hook file install wrote' });
    gone.add(path);
    writes.push(() => unlinkQuiet(path));
  }
  return { steps, writes, notes, forgotten };
}
