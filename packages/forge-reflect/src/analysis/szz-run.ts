/**
 * The IO shell of P2's SZZ. One `git log -p -U0 -w -M --diff-merges=first-parent` pass (lockfiles,
 * minified files and source maps not diffed, by attribute) gives every candidate's diff and every
 * commit's hunk headers; the candidates' deleted lines are then traced back along first parents in
 * process (line-trace.ts), and only lines a merge brought in are handed to `git blame --porcelain -w`
 * at that merge, to name the branch commit that wrote them. Also what a shallow clone can reach.
 * The decisions are in git-history.ts and szz.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { parseDiffTree, unquotePath, type FileDiff } from './fix-diff.js';
import { RS, streamGitRecords, type Commit } from './git-log.js';
import { parseHunks, traceLines, type CommitHunks } from './line-trace.js';
import { planEvidence, screenCommits, type Evidence, type GitHistoryOptions, type ShallowInfo } from './git-history.js';
import type { PatchInfo } from './labels.js';
import { parseBlamePorcelain, toRanges, type BlameLineGroup } from './szz.js';

function run(repo: string, args: string[], input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('git', ['-C', repo, '-c', 'core.quotePath=false', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (t: string) => {
      if (stderr.length < 4000) stderr += t;
    });
    child.on('error', (error) => reject(new UserError(`cannot run git (${error.message}); install git and put it on PATH`)));
    child.on('close', (code) => resolvePromise({ code, stdout: Buffer.concat(out).toString('utf8'), stderr }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input ?? '');
  });
}

/**
 * Files whose diffs the patch pass skips (git's `-diff` attribute: "Binary files differ"): lockfiles,
 * minified bundles, source maps. Given through a temporary core.attributesFile, so the repository is
 * not touched; a pathspec would do the same but costs ~3x on a 10^5-commit history.
 */
export const NO_DIFF_ATTRIBUTES = ['*.lock', 'package-lock.json', 'npm-shrinkwrap.json', 'pnpm-lock.yaml', 'go.sum', '*.min.js', '*.min.css', '*.map']
  .map((p) => `${p} -diff`)
  .join('\n');

/** Streams the patch pass: full diffs for `wanted`, hunk headers for every commit. */
export async function readPatchLog(
  repo: string,
  wanted: ReadonlySet<string>,
  since?: string,
): Promise<{ diffs: Map<string, FileDiff[]>; hunks: Map<string, CommitHunks> }> {
  const dir = mkdtempSync(join(tmpdir(), 'forge-reflect-p2-'));
  const attributes = join(dir, 'attributes');
  writeFileSync(attributes, `${NO_DIFF_ATTRIBUTES}\n`);
  try {
    return await patchLog(repo, wanted, attributes, since);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function patchLog(
  repo: string,
  wanted: ReadonlySet<string>,
  attributes: string,
  since?: string,
): Promise<{ diffs: Map<string, FileDiff[]>; hunks: Map<string, CommitHunks> }> {
  const args = [
    '-c',
    `core.attributesFile=${attributes}`,
    'log',
    '-p',
    '-U0',
    '-w',
    '-M',
    '--no-color',
    '--no-ext-diff',
    '--no-textconv',
    `--format=${RS}%H`,
    '--diff-merges=first-parent',
  ];
  if (since) args.push(`--since=${since}`);
  const diffs = new Map<string, FileDiff[]>();
  const hunks = new Map<string, CommitHunks>();
  await streamGitRecords(repo, args, 'git log -p', (record) => {
    const nl = record.indexOf('\n');
    const sha = (nl < 0 ? record : record.slice(0, nl)).trim();
    const body = nl < 0 ? '' : record.slice(nl + 1);
    if (body.trim() === '') return;
    if (wanted.has(sha)) diffs.set(sha, parseDiffTree(`${sha}\n${body}`)[0]?.files ?? []);
    const h = parseHunks(body, unquotePath);
    if (h.size > 0) hunks.set(sha, h);
  });
  for (const s of wanted) if (!diffs.has(s)) diffs.set(s, []);
  return { diffs, hunks };
}

export interface MergeJob {
  fix: string;
  merge: string;
  path: string;
  lines: number[];
}

/** Asks git blame, at each merge, which commit of the merged branch wrote the lines the merge brought in. */
export async function blameMerges(
  repo: string,
  jobs: readonly MergeJob[],
  concurrency = Math.max(2, availableParallelism() * 2),
): Promise<Map<MergeJob, BlameLineGroup[]>> {
  const out = new Map<MergeJob, BlameLineGroup[]>();
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++] as MergeJob;
      const args = ['blame', '--porcelain', '-w', '--root'];
      for (const [a, b] of toRanges(job.lines)) args.push('-L', `${a},${b}`);
      args.push(job.merge, '--', job.path);
      const r = await run(repo, args);
      if (r.code === 0) out.set(job, parseBlamePorcelain(r.stdout));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, worker));
  return out;
}

/** What a shallow clone's blame can reach, or null for a full history. */
export async function readShallow(repo: string, commits: readonly Commit[]): Promise<ShallowInfo | null> {
  const r = await run(repo, ['rev-parse', '--is-shallow-repository', '--git-path', 'shallow']);
  const [flag, path] = r.stdout.trim().split('\n');
  if (flag !== 'true' || !path) return null;
  let shas: string[] = [];
  try {
    const full = path.startsWith('/') ? path : `${repo}/${path}`;
    shas = readFileSync(full, 'utf8')
      .split('\n')
      .filter((s) => /^[0-9a-f]{40}$/.test(s));
  } catch {
    return null;
  }
  const bySha = new Map(commits.map((c) => [c.sha, c]));
  const times = shas.map((s) => bySha.get(s)?.time).filter((t): t is number => t !== undefined);
  if (times.length === 0) return null;
  return { boundaryTime: Math.max(...times), boundaryCommits: shas.length, edges: shas };
}

/** Walk at most this many first-parent commits per traced file (a flagged cap). */
export const MAX_TRACE_STEPS = 20_000;

/** Gathers the diffs and blames analyzeGitHistory needs: one patch pass, in-process tracing, git blame for merges only. */
export async function collectEvidence(repo: string, commits: readonly Commit[], options: GitHistoryOptions, since?: string): Promise<Evidence> {
  const screened = screenCommits(commits, options);
  const { diffs, hunks } = await readPatchLog(repo, new Set(screened.candidates.map((c) => c.commit.sha)), since);
  const { plans } = planEvidence(screened, diffs);
  const windowSec = options.windowMs / 1000;
  const bySha = new Map(commits.map((c) => [c.sha, c]));
  const edges = new Set(options.shallow?.edges ?? []);
  const history = { parentOf: (s: string) => bySha.get(s)?.parents[0], timeOf: (s: string) => bySha.get(s)?.time, hunksOf: (s: string) => hunks.get(s) };
  const blames = new Map<string, BlameLineGroup[]>();
  const mergeJobs: MergeJob[] = [];
  const capped = new Set<string>();
  for (const cand of screened.candidates) {
    const plan = plans.get(cand.commit.sha);
    const parent = cand.commit.parents[0];
    if (!plan || !parent) continue;
    const groups: BlameLineGroup[] = [];
    for (const t of plan.targets) {
      const lines: number[] = [];
      for (const [a, b] of t.ranges) for (let n = a; n <= b; n++) lines.push(n);
      // The window runs back from when the fix was written; the walk compares committer dates, which
      // are never earlier than author dates as git-history.ts uses them, so it stops no sooner than it should.
      const stopBefore = (screened.written.get(cand.commit.sha) ?? cand.commit.time) - windowSec;
      const r = traceLines({ start: parent, path: t.path, lines, stopBefore, maxSteps: MAX_TRACE_STEPS }, history);
      if (r.capped) capped.add(cand.commit.sha);
      for (const a of r.attributed) {
        if ((bySha.get(a.sha)?.parents.length ?? 0) > 1) mergeJobs.push({ fix: cand.commit.sha, merge: a.sha, path: a.path, lines: a.lines });
        else groups.push({ sha: a.sha, lines: a.lines.length, boundary: edges.has(a.sha), path: a.path });
      }
    }
    blames.set(cand.commit.sha, groups);
  }
  for (const [job, groups] of await blameMerges(repo, mergeJobs)) {
    const list = blames.get(job.fix) ?? [];
    for (const g of groups) list.push({ ...g, boundary: g.boundary || edges.has(g.sha), via: job.merge });
    blames.set(job.fix, list);
  }
  return { diffs, blames, capped };
}

/** Cap on the patch text a labelling sheet carries per commit. */
export const SHEET_HUNK_CHARS = 3000;

/** Diff stats and (capped) patch text of each listed commit, for a labelling sheet. */
export async function readPatches(repo: string, shas: readonly string[]): Promise<Map<string, PatchInfo>> {
  const map = new Map<string, PatchInfo>();
  const unique = [...new Set(shas)];
  if (unique.length === 0) return map;
  const r = await run(repo, ['diff-tree', '--stdin', '-p', '-U3', '-M', '--root', '--no-color', '--no-ext-diff', '--no-textconv'], `${unique.join('\n')}\n`);
  if (r.code !== 0)
    throw new UserError(`git diff-tree failed in ${repo}: ${r.stderr.trim().split('\n')[0] ?? `exit ${r.code}`}; pass --repo a full git repository`);
  const parts = r.stdout.split(/^(?=[0-9a-f]{40}$)/m);
  for (const part of parts) {
    const sha = part.slice(0, 40);
    if (!/^[0-9a-f]{40}$/.test(sha)) continue;
    const [parsed] = parseDiffTree(part);
    const files = (parsed?.files ?? []).map((f) => ({ path: f.newPath ?? f.oldPath ?? '', added: f.added.length, deleted: f.deleted.length }));
    const body = part.slice(41);
    const hunks = body.length > SHEET_HUNK_CHARS ? `${body.slice(0, SHEET_HUNK_CHARS)}\n… (${body.length - SHEET_HUNK_CHARS} more characters)` : body;
    map.set(sha, { files, hunks });
  }
  return map;
}
