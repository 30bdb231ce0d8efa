/**
 * Blame inside the window without a process per file: the hunk headers of every commit's `-w -U0`
 * diff against its first parent (one `git log -p` pass), and a walk back along first parents that
 * carries each line number through those hunks until a commit wrote the line, the window's start
 * is passed, or the history ends. A line a merge brought in is the merge's here; the IO shell then
 * asks `git blame` which commit of the merged branch wrote it. Pure.
 */

export interface FileHunks {
  oldPath: string | null;
  newPath: string | null;
  /** Flat [oldStart, oldCount, newStart, newCount] per hunk, in order. */
  hunks: number[];
}

/** Per commit: its file changes keyed by the path after the commit (the old path for a deletion). */
export type CommitHunks = Map<string, FileHunks>;

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

function stripSide(p: string): string | null {
  if (p === '/dev/null') return null;
  return p.startsWith('a/') || p.startsWith('b/') ? p.slice(2) : p;
}

/** The hunk headers of one commit's patch text (the output after its header line). */
export function parseHunks(text: string, unquote: (s: string) => string = (s) => s): CommitHunks {
  const out: CommitHunks = new Map();
  let file: FileHunks | null = null;
  let inHunk = false;
  const close = () => {
    if (file) {
      const key = file.newPath ?? file.oldPath;
      if (key !== null) out.set(key, file);
    }
  };
  for (const line of text.split('\n')) {
    if (line.startsWith('diff --git ')) {
      close();
      const m = /^diff --git a\/(.+) b\/(.+)$/.exec(line);
      file = { oldPath: m ? (m[1] as string) : null, newPath: m ? (m[2] as string) : null, hunks: [] };
      inHunk = false;
      continue;
    }
    if (!file) continue;
    if (line.startsWith('@@')) {
      const h = HUNK.exec(line);
      if (h) {
        file.hunks.push(Number(h[1]), h[2] === undefined ? 1 : Number(h[2]), Number(h[3]), h[4] === undefined ? 1 : Number(h[4]));
        inHunk = true;
      }
      continue;
    }
    if (inHunk) continue;
    if (line.startsWith('--- ')) file.oldPath = stripSide(unquote(line.slice(4).replace(/\t$/, '')));
    else if (line.startsWith('+++ ')) file.newPath = stripSide(unquote(line.slice(4).replace(/\t$/, '')));
    else if (line.startsWith('new file mode')) file.oldPath = null;
    else if (line.startsWith('deleted file mode')) file.newPath = null;
    else if (line.startsWith('rename from ')) file.oldPath = unquote(line.slice(12));
    else if (line.startsWith('rename to ')) file.newPath = unquote(line.slice(10));
  }
  close();
  return out;
}

export interface TraceInput {
  /** The commit whose version of `path` the line numbers refer to (a fix's first parent). */
  start: string;
  path: string;
  lines: readonly number[];
  /** Seconds: stop at the first commit older than this (first parents are walked newest first). */
  stopBefore: number;
  maxSteps: number;
}

export interface TraceHistory {
  parentOf(sha: string): string | undefined;
  timeOf(sha: string): number | undefined;
  hunksOf(sha: string): CommitHunks | undefined;
}

export interface Attribution {
  sha: string;
  /** The path the lines had in that commit. */
  path: string;
  /** Line numbers in that commit's version. */
  lines: number[];
}

export interface TraceResult {
  attributed: Attribution[];
  capped: boolean;
}

/** Carries line numbers back through first-parent hunks until each is attributed or the window ends. */
export function traceLines(input: TraceInput, history: TraceHistory): TraceResult {
  let cur: string | undefined = input.start;
  let path: string | null = input.path;
  let lines = [...input.lines].sort((a, b) => a - b);
  const attributed: Attribution[] = [];
  let steps = 0;
  while (cur !== undefined && path !== null && lines.length > 0) {
    const time = history.timeOf(cur);
    if (time === undefined || time < input.stopBefore) break;
    if (++steps > input.maxSteps) return { attributed, capped: true };
    const f: FileHunks | undefined = history.hunksOf(cur)?.get(path);
    if (f) {
      if (f.oldPath === null) {
        // The commit created the file: every remaining line is its.
        attributed.push({ sha: cur, path, lines });
        lines = [];
        break;
      }
      const mine: number[] = [];
      const older: number[] = [];
      const h = f.hunks;
      let k = 0;
      let shift = 0;
      for (const n of lines) {
        // Hunks wholly before n shift it; a hunk whose new range holds n wrote it.
        while (k < h.length) {
          const b = h[k + 1] as number;
          const c = h[k + 2] as number;
          const d = h[k + 3] as number;
          const end = d > 0 ? c + d - 1 : c;
          if (end < n) {
            shift += b - d;
            k += 4;
          } else break;
        }
        const c = h[k + 2];
        const d = h[k + 3];
        if (c !== undefined && d !== undefined && d > 0 && n >= c && n <= c + d - 1) mine.push(n);
        else older.push(n + shift);
      }
      if (mine.length > 0) attributed.push({ sha: cur, path, lines: mine });
      lines = older;
      path = f.oldPath;
    }
    cur = history.parentOf(cur);
  }
  return { attributed, capped: false };
}
