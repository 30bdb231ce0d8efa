/**
 * Parsing `git diff-tree --stdin -p -U0 -w -M --root` output: per commit, per file, the old and new
 * path and the lines the commit deleted (with their line numbers in the parent) and added. Pure.
 */

export interface DeletedLine {
  /** Line number in the parent's version of the file. */
  line: number;
  text: string;
}

export interface FileDiff {
  /** Path in the parent (null for an added file). */
  oldPath: string | null;
  /** Path in the commit (null for a deleted file). */
  newPath: string | null;
  deleted: DeletedLine[];
  added: string[];
  binary: boolean;
}

export interface CommitDiff {
  sha: string;
  files: FileDiff[];
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@/;

/** Undoes git's C-style quoting of a path ("a/t\303\251st" → a/tést). */
export function unquotePath(text: string): string {
  if (!text.startsWith('"')) return text;
  const bytes: number[] = [];
  const body = text.slice(1, text.endsWith('"') ? -1 : undefined);
  const escapes: Record<string, number> = { n: 10, t: 9, '"': 34, '\\': 92, a: 7, b: 8, f: 12, r: 13, v: 11 };
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (ch !== '\\') {
      bytes.push(...Buffer.from(ch, 'utf8'));
      continue;
    }
    const next = body[i + 1] ?? '';
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      bytes.push(escapes[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function sidePath(text: string, prefix: 'a/' | 'b/'): string | null {
  const raw = unquotePath(text.replace(/\t$/, ''));
  if (raw === '/dev/null') return null;
  return raw.startsWith(prefix) ? raw.slice(2) : raw;
}

/** Splits diff-tree --stdin output (a bare sha line before each commit's patch) into commits. */
export function parseDiffTree(text: string): CommitDiff[] {
  const out: CommitDiff[] = [];
  let commit: CommitDiff | null = null;
  let file: FileDiff | null = null;
  let oldLine = 0;
  let inHunk = false;
  for (const line of text.split('\n')) {
    if (/^[0-9a-f]{40}$/.test(line)) {
      commit = { sha: line, files: [] };
      out.push(commit);
      file = null;
      inHunk = false;
      continue;
    }
    if (!commit) continue;
    if (line.startsWith('diff --git ')) {
      const m = /^diff --git a\/(.+) b\/(.+)$/.exec(line);
      file = { oldPath: m ? (m[1] as string) : null, newPath: m ? (m[2] as string) : null, deleted: [], added: [], binary: false };
      commit.files.push(file);
      inHunk = false;
      continue;
    }
    if (!file) continue;
    if (!inHunk) {
      if (line.startsWith('--- ')) file.oldPath = sidePath(line.slice(4), 'a/');
      else if (line.startsWith('+++ ')) file.newPath = sidePath(line.slice(4), 'b/');
      else if (line.startsWith('new file mode')) file.oldPath = null;
      else if (line.startsWith('deleted file mode')) file.newPath = null;
      else if (line.startsWith('rename from ')) file.oldPath = unquotePath(line.slice(12));
      else if (line.startsWith('rename to ')) file.newPath = unquotePath(line.slice(10));
      else if (line.startsWith('Binary files ')) file.binary = true;
    }
    const hunk = HUNK.exec(line);
    if (hunk) {
      inHunk = true;
      oldLine = Number(hunk[1]);
      if (hunk[2] === '0') oldLine += 1; // "-5,0": nothing deleted; numbering irrelevant
      continue;
    }
    if (!inHunk) continue;
    if (line.startsWith('-')) file.deleted.push({ line: oldLine++, text: line.slice(1) });
    else if (line.startsWith('+')) file.added.push(line.slice(1));
    else if (line.startsWith('\\')) continue;
    else if (line.startsWith(' ')) oldLine++;
  }
  return out;
}
