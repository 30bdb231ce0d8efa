/**
 * One streaming `git log` pass: NUL/record-separated fields, `--name-status -M` for renames, and
 * merges diffed against their first parent (what the merge brought in). stdout is parsed as it
 * arrives, so a 100,000-commit history never has to sit in memory as text.
 */
import { spawn } from 'node:child_process';
import { UserError } from '../errors.js';

export interface FileChange {
  status: string;
  path: string;
  /** The old path of a rename or copy. */
  from?: string;
}

export interface Commit {
  sha: string;
  parents: string[];
  /** Committer time, seconds since the epoch: the order of the history (a rebase resets it). */
  time: number;
  /**
   * Author time, seconds since the epoch: when the change was written (a rebase keeps it). null
   * when git gave no usable author date (an empty or unparseable field, or 0); absent when unknown.
   */
  authorTime?: number | null;
  message: string;
  files: FileChange[];
  /** `Name <email>` of the author (dependency bots are recognised by it). */
  author?: string;
}

/** The record separator that starts each commit in the formats the analyses ask git for. */
export const RS = '\u001e';
const US = '\u001f';
export const LOG_FORMAT = `${RS}%H${US}%P${US}%ct${US}%at${US}%aN <%aE>${US}%B${US}`;

/** `%at` as seconds, or null when git printed nothing usable (a missing or malformed author date prints "" or 0). */
function parseEpoch(text: string): number | null {
  const t = text.trim();
  if (!/^\d{1,15}$/.test(t)) return null;
  const n = Number(t);
  return n > 0 ? n : null;
}

/** Which date a commit's "written" time comes from. */
export type DateSource = 'author' | 'missing' | 'later';

/**
 * When the change was written: the author date, or the committer date where the author date is
 * missing (`missing`) or later than the committer date (`later`: a clock set wrong, or a date made
 * up). Delays are measured on it, since a rebase or an import resets committer dates but keeps
 * author dates.
 */
export function writtenAt(c: Pick<Commit, 'time' | 'authorTime'>): { time: number; source: DateSource } {
  const a = c.authorTime;
  if (a === null || a === undefined || !Number.isFinite(a)) return { time: c.time, source: 'missing' };
  if (a > c.time) return { time: c.time, source: 'later' };
  return { time: a, source: 'author' };
}

/** One record (the text between two record separators). Returns null when malformed. */
export function parseRecord(record: string): Commit | null {
  const parts = record.split(US);
  if (parts.length < 7) return null;
  const [sha, parents, time, authorTime, author, message] = parts as [string, string, string, string, string, string];
  const rest = parts.slice(6).join(US);
  const tokens = rest.split('\0').map((t) => t.replace(/^\n+/, ''));
  const files: FileChange[] = [];
  let i = 0;
  while (i < tokens.length) {
    const status = (tokens[i] as string).trim();
    i++;
    if (status === '') continue;
    if (/^[RC]/.test(status)) {
      const from = tokens[i];
      const to = tokens[i + 1];
      i += 2;
      if (from !== undefined && to !== undefined) files.push({ status: status[0] as string, path: to, from });
    } else {
      const path = tokens[i];
      i++;
      if (path !== undefined) files.push({ status: status[0] as string, path });
    }
  }
  return {
    sha: sha.trim(),
    parents: parents.trim() === '' ? [] : parents.trim().split(' '),
    time: Number(time),
    authorTime: parseEpoch(authorTime),
    message: message.replace(/\n+$/, ''),
    files,
    author,
  };
}

/** Splits a stream of text into records as it arrives. */
export class RecordSplitter {
  private buffer = '';
  constructor(private readonly onRecord: (record: string) => void) {}
  push(chunk: string): void {
    this.buffer += chunk;
    let start = this.buffer.indexOf(RS);
    if (start < 0) return;
    let next = this.buffer.indexOf(RS, start + 1);
    while (next >= 0) {
      this.onRecord(this.buffer.slice(start + 1, next));
      start = next;
      next = this.buffer.indexOf(RS, start + 1);
    }
    this.buffer = this.buffer.slice(start);
  }
  end(): void {
    if (this.buffer.startsWith(RS) && this.buffer.length > 1) this.onRecord(this.buffer.slice(1));
    this.buffer = '';
  }
}

export interface ReadLogOptions {
  repo: string;
  /** ISO instant: only commits at or after it (committer date). */
  since?: string;
}

/**
 * Runs `git ARGS` and hands each RS-separated record of its output to `onRecord` as it streams.
 * Resolves when git succeeds (also on a repository without commits); otherwise one UserError
 * naming `what` and git's first line of complaint.
 */
export function streamGitRecords(repo: string, args: readonly string[], what: string, onRecord: (record: string) => void): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('git', ['-C', repo, '-c', 'core.quotePath=false', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const splitter = new RecordSplitter(onRecord);
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => splitter.push(chunk));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < 4000) stderr += chunk;
    });
    child.on('error', (error) => reject(new UserError(`cannot run git (${error.message}); install git and put it on PATH`)));
    child.on('close', (code) => {
      splitter.end();
      if (code === 0 || /does not have any commits/.test(stderr)) resolvePromise();
      else reject(new UserError(`${what} failed in ${repo}: ${stderr.trim().split('\n')[0] ?? `exit ${code}`}; pass --repo a git repository`));
    });
  });
}

/** Runs `git log` once and returns the commits, newest first as git lists them. */
export async function readGitLog(options: ReadLogOptions, onCommit?: (c: Commit) => void): Promise<Commit[]> {
  const args = ['log', '-z', `--format=${LOG_FORMAT}`, '--name-status', '-M', '--diff-merges=first-parent'];
  if (options.since) args.push(`--since=${options.since}`);
  const commits: Commit[] = [];
  await streamGitRecords(options.repo, args, 'git log', (record) => {
    const c = parseRecord(record);
    if (c) {
      commits.push(c);
      onCommit?.(c);
    }
  });
  return commits;
}
