/**
 * SZZ by blame, the pure part: which lines of a fix to blame, and what the blame says.
 *
 * A fix's deleted or modified lines (the `-` lines of `git diff -w -U0` against its first parent)
 * are blamed at that parent; the commits that last touched them are the bug-introducing candidates,
 * of any type. Set aside first (documented in docs/analysis.md): tests, lockfiles, generated files,
 * documentation, binary files, and lines that are blank or only a comment; whitespace-only changes
 * never reach here (`-w`). The work per fix is capped; a capped fix is flagged.
 */
import { LOCKFILE_PATH } from './dependency-bumps.js';
import type { FileDiff } from './fix-diff.js';
import { ciPathKind } from './gates.js';

export const MAX_BLAME_FILES = 20;
export const MAX_BLAME_LINES = 400;

const GENERATED_PATH = [
  /(^|\/)(dist|build|out|coverage|vendor|node_modules|__generated__|generated)\//i,
  /\.(min\.js|min\.css|map|snap|pb\.go|lock)$/i,
  /(^|\/)__snapshots__\//i,
  /(^|\/)changelog(\.[a-z]+)?$/i,
  /\.generated\.[^/]+$/i,
  /_pb2\.py$/i,
];
const DOC_PATH = [/\.(md|mdx|markdown|rst|adoc)$/i, /(^|\/)docs?\//i, /(^|\/)(license|licence|authors|contributors)(\.[a-z]+)?$/i];
const COMMENT_LINE = /^\s*(\/\/|\/\*|\*\/?|#(?!!|include|define|if|endif|else|pragma)|<!--|--\s|;)/;

export type SetAside = 'tests' | 'lockfiles' | 'generated' | 'docs' | 'binary';

/** Why a file's lines are not blamed, or null when they are. */
export function setAsidePath(path: string): SetAside | null {
  const p = path.replace(/\\/g, '/');
  if (ciPathKind(p) === 'tests' || /(^|\/)(__)?(fixtures?|mocks?)(__)?\//i.test(p)) return 'tests';
  if (LOCKFILE_PATH.test(p)) return 'lockfiles';
  if (GENERATED_PATH.some((re) => re.test(p))) return 'generated';
  if (DOC_PATH.some((re) => re.test(p))) return 'docs';
  return null;
}

/** A blank line or a line that is only a comment carries no behaviour. */
export function isCosmetic(text: string): boolean {
  const t = text.trim();
  return t === '' || COMMENT_LINE.test(t);
}

export interface BlameTarget {
  /** The path in the fix's parent. */
  path: string;
  /** Inclusive 1-based line ranges, ascending, merged. */
  ranges: Array<[number, number]>;
  lines: number;
}

export interface BlamePlan {
  targets: BlameTarget[];
  /** Lines deleted or modified in files that were set aside, per reason. */
  setAside: Record<SetAside | 'cosmetic', number>;
  /** Lines the fix deleted or modified that are blamed. */
  lines: number;
  /** Lines added (a fix with deleted lines = 0 and added > 0 only adds). */
  added: number;
  capped: boolean;
}

export function planBlame(files: readonly FileDiff[], caps = { files: MAX_BLAME_FILES, lines: MAX_BLAME_LINES }): BlamePlan {
  const setAside: BlamePlan['setAside'] = { tests: 0, lockfiles: 0, generated: 0, docs: 0, binary: 0, cosmetic: 0 };
  const targets: BlameTarget[] = [];
  let lines = 0;
  let added = 0;
  let capped = false;
  for (const f of files) {
    const path = f.oldPath ?? f.newPath ?? '';
    const why = f.binary ? 'binary' : (setAsidePath(path) ?? (f.newPath ? setAsidePath(f.newPath) : null));
    if (why) {
      setAside[why] += f.deleted.length || (f.binary ? 1 : 0);
      continue;
    }
    added += f.added.filter((a) => !isCosmetic(a)).length;
    if (f.oldPath === null) continue;
    const kept = f.deleted.filter((d) => {
      if (isCosmetic(d.text)) {
        setAside.cosmetic++;
        return false;
      }
      return true;
    });
    if (kept.length === 0) continue;
    if (targets.length >= caps.files || lines >= caps.lines) {
      capped = true;
      continue;
    }
    const room = caps.lines - lines;
    const take = kept.slice(0, room);
    if (take.length < kept.length) capped = true;
    targets.push({ path: f.oldPath, ranges: toRanges(take.map((x) => x.line)), lines: take.length });
    lines += take.length;
  }
  return { targets, setAside, lines, added, capped };
}

export interface BlameLineGroup {
  sha: string;
  lines: number;
  /** The commit is a blame boundary: older than --since, or a shallow clone's edge. */
  boundary: boolean;
  /** The path the line had in that commit. */
  path: string;
  /** The merge that brought the line into the fix's first-parent history, when blame went into its branch. */
  via?: string;
}

/** Counts `git blame --porcelain` output per commit. */
export function parseBlamePorcelain(text: string): BlameLineGroup[] {
  const groups = new Map<string, BlameLineGroup>();
  let current: BlameLineGroup | null = null;
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]{40}) \d+ \d+(?: \d+)?$/.exec(line);
    if (head) {
      const sha = head[1] as string;
      let g = groups.get(sha);
      if (!g) groups.set(sha, (g = { sha, lines: 0, boundary: false, path: '' }));
      g.lines++;
      current = g;
      continue;
    }
    if (!current) continue;
    if (line === 'boundary') current.boundary = true;
    else if (line.startsWith('filename ')) current.path = line.slice(9);
  }
  return [...groups.values()];
}

/** Line numbers as inclusive runs of consecutive lines ([3, 4, 5, 9] → [[3, 5], [9, 9]]), in order. */
export function toRanges(lines: readonly number[]): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  for (const n of [...lines].sort((a, b) => a - b)) {
    const last = ranges[ranges.length - 1];
    if (last && n <= last[1] + 1) last[1] = Math.max(last[1], n);
    else ranges.push([n, n]);
  }
  return ranges;
}
