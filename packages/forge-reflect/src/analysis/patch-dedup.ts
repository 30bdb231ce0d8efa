/**
 * Histories imported twice: the same patches under two dates, the copy often under another
 * folder. A patch's fingerprint is its changed lines with each path reduced to its base name (what
 * survives a move into a subfolder), so `git patch-id`'s full paths do not keep the pair apart. Pure.
 */
import { createHash } from 'node:crypto';
import type { FileDiff } from './fix-diff.js';

function baseName(path: string | null): string {
  if (path === null) return '';
  const i = path.lastIndexOf('/');
  return i < 0 ? path : path.slice(i + 1);
}

/** The fingerprint of a patch, or null when it changes no text line (nothing to compare). */
export function patchFingerprint(files: readonly FileDiff[]): string | null {
  const parts = files
    .filter((f) => f.deleted.length + f.added.length > 0)
    .map((f) => `${baseName(f.oldPath)}>${baseName(f.newPath)}\n${f.deleted.map((d) => `-${d.text}`).join('\n')}\n${f.added.map((a) => `+${a}`).join('\n')}`)
    .sort();
  if (parts.length === 0) return null;
  return createHash('sha1').update(parts.join('\n\u0000')).digest('hex');
}

/**
 * Given commits oldest first with their fingerprints, maps each later copy to the first commit
 * with the same fingerprint and the same subject-free patch. git-history.ts orders them by when they
 * were written and decides which copy of each group stays (the first that keeps a cause).
 */
export function findDuplicates(items: ReadonlyArray<{ sha: string; fingerprint: string | null }>): Map<string, string> {
  const first = new Map<string, string>();
  const dupOf = new Map<string, string>();
  for (const it of items) {
    if (it.fingerprint === null) continue;
    const seen = first.get(it.fingerprint);
    if (seen) dupOf.set(it.sha, seen);
    else first.set(it.fingerprint, it.sha);
  }
  return dupOf;
}
