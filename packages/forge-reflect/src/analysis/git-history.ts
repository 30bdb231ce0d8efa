/**
 * P2: failure signals in a git history (reverts; fixes that touch files a feature changed inside
 * the window), each put in the bucket of the gate that would have caught it (gates.ts), tallied,
 * and judged against the pre-registered kill condition. Pure over a list of commits.
 */
import { commitKind, parseConventional, parseRevert, subjectOf } from './commit-message.js';
import { classifyGate, GATES, type Gate } from './gates.js';
import type { Commit } from './git-log.js';
import type { Verdict } from './verdict.js';
import { markdownOpening } from './report-markdown.js';

export const SELF_SHARE_KILL = 0.1;
export const MIN_SIGNALS = 10;
export const EXAMPLES_PER_BUCKET = 5;

export const GIT_KILL_CONDITION =
  `KILL if fewer than ${SELF_SHARE_KILL * 100}% of the failure signals (reverts; fixes touching files a feature changed inside the window) ` +
  `fall in the only-self-reflection bucket (not caught by CI: tests, CI or build files, or a failing check named; not by human review: ` +
  `the fixed change touched a risk-floor needs_review surface). INCONCLUSIVE with fewer than ${MIN_SIGNALS} signals.`;

export interface Signal {
  kind: 'revert' | 'reapply' | 'fix';
  sha: string;
  subject: string;
  at: string;
  /** The reverted commit, or the most recent feature commit the fix follows. */
  fixes: string | null;
  /** Every feature commit the fix follows inside the window (fix signals only). */
  candidates: string[];
  delay_days: number | null;
  gate: Gate;
  rule: string;
}

export interface GitHistoryOptions {
  /** Epoch ms: signals at or after it count (commits before it still count as features). */
  since: number;
  windowMs: number;
}

export interface GitHistoryReport {
  analysis: 'git-history';
  kill_condition: string;
  verdict: Verdict;
  reason: string;
  mode: 'conventional' | 'keyword';
  commits: { read: number; in_range: number; merges: number; roots: number; renames: number };
  signals: { total: number; reverts: number; fixes: number };
  buckets: Record<Gate, { count: number; share: number | null; examples: Signal[] }>;
  list: Signal[];
}

/** `conventional` when at least half of the non-merge commits have a Conventional Commits header. */
export function detectMode(commits: readonly Commit[]): 'conventional' | 'keyword' {
  const plain = commits.filter((c) => c.parents.length < 2);
  if (plain.length === 0) return 'keyword';
  const conventional = plain.filter((c) => parseConventional(subjectOf(c.message)) !== null).length;
  return conventional * 2 >= plain.length ? 'conventional' : 'keyword';
}


export function analyzeGitHistory(input: readonly Commit[], options: GitHistoryOptions): GitHistoryReport {
  // Oldest first; git lists newest first, so equal times keep parents before children when reversed.
  const commits = input.map((c, i) => ({ c, i })).sort((a, b) => a.c.time - b.c.time || b.i - a.i).map((x) => x.c);
  const mode = detectMode(commits);
  const bySha = new Map<string, Commit>();
  const bySubject = new Map<string, Commit>();
  const fileId = new Map<string, number>();
  let nextId = 0;
  const idOf = (path: string) => {
    let id = fileId.get(path);
    if (id === undefined) {
      id = nextId++;
      fileId.set(path, id);
    }
    return id;
  };
  const features = new Map<number, Array<{ time: number; commit: Commit }>>();
  const signals: Signal[] = [];
  const counts = { read: commits.length, in_range: 0, merges: 0, roots: 0, renames: 0 };
  const sinceSec = options.since / 1000;
  const windowSec = options.windowMs / 1000;

  const findSha = (sha: string): Commit | undefined => {
    const exact = bySha.get(sha);
    if (exact || sha.length === 40) return exact;
    for (const [full, c] of bySha) if (full.startsWith(sha)) return c;
    return undefined;
  };

  for (const c of commits) {
    const isMerge = c.parents.length > 1;
    if (isMerge) counts.merges++;
    if (c.parents.length === 0) counts.roots++;
    const ids = new Set<number>();
    for (const f of c.files) {
      if (f.from !== undefined && f.status === 'R') {
        counts.renames++;
        const id = idOf(f.from);
        fileId.set(f.path, id); // the new path keeps the old path's history
        ids.add(id);
      } else ids.add(idOf(f.path));
    }
    const inRange = c.time >= sinceSec;
    if (inRange) counts.in_range++;
    const subject = subjectOf(c.message);
    const revert = isMerge ? null : parseRevert(c.message);
    const kind = isMerge ? 'merge' : commitKind(c.message, mode);
    const paths = c.files.map((f) => f.path);

    if (inRange && revert) {
      let target: Commit | undefined = revert.sha ? findSha(revert.sha) : undefined;
      if (!target && revert.quoted) target = bySubject.get(revert.kind === 'reapply' ? `Revert "${revert.quoted}"` : revert.quoted);
      const inducing = target ? target.files.map((f) => f.path) : paths;
      const gate = classifyGate({ fixFiles: paths, fixMessage: c.message, inducingFiles: inducing });
      signals.push({
        kind: revert.kind, sha: c.sha, subject, at: new Date(c.time * 1000).toISOString(), fixes: target?.sha ?? revert.sha,
        candidates: [], delay_days: target ? (c.time - target.time) / 86_400 : null, ...gate,
      });
    } else if (inRange && kind === 'fix') {
      const found = new Map<string, Commit>();
      for (const id of ids) {
        const list = features.get(id);
        if (!list) continue;
        for (let k = list.length - 1; k >= 0; k--) {
          const e = list[k] as { time: number; commit: Commit };
          if (e.time < c.time - windowSec) break;
          if (e.commit.sha !== c.sha) found.set(e.commit.sha, e.commit);
        }
      }
      if (found.size > 0) {
        const candidates = [...found.values()].sort((a, b) => b.time - a.time);
        const latest = candidates[0] as Commit;
        const inducing = [...new Set(candidates.flatMap((x) => x.files.map((f) => f.path)))];
        const gate = classifyGate({ fixFiles: paths, fixMessage: c.message, inducingFiles: inducing });
        signals.push({
          kind: 'fix', sha: c.sha, subject, at: new Date(c.time * 1000).toISOString(), fixes: latest.sha,
          candidates: candidates.map((x) => x.sha), delay_days: (c.time - latest.time) / 86_400, ...gate,
        });
      }
    }

    // A feature: a feature commit, or a merge that is not itself a fix (a "feature merge").
    const isFeature = kind === 'feature' || (isMerge && commitKind(c.message, 'keyword') !== 'fix');
    if (isFeature) {
      for (const id of ids) {
        let list = features.get(id);
        if (!list) features.set(id, (list = []));
        list.push({ time: c.time, commit: c });
      }
    }
    bySha.set(c.sha, c);
    bySubject.set(subject, c);
  }

  const total = signals.length;
  const buckets = Object.fromEntries(
    GATES.map((g) => {
      const inBucket = signals.filter((s) => s.gate === g);
      return [g, { count: inBucket.length, share: total === 0 ? null : inBucket.length / total, examples: inBucket.slice(0, EXAMPLES_PER_BUCKET) }];
    }),
  ) as GitHistoryReport['buckets'];
  const self = buckets.self_reflection.count;
  let verdict: Verdict;
  let reason: string;
  if (counts.in_range === 0) [verdict, reason] = ['INCONCLUSIVE', 'no commits in range'];
  else if (total === 0) [verdict, reason] = ['INCONCLUSIVE', `no failure signals in ${counts.in_range} commits`];
  else if (total < MIN_SIGNALS) [verdict, reason] = ['INCONCLUSIVE', `only ${total} failure signal(s); need ${MIN_SIGNALS}`];
  else if (self / total < SELF_SHARE_KILL) [verdict, reason] = ['KILL', `only ${self} of ${total} signals (${((self / total) * 100).toFixed(1)}%) were catchable by self-reflection alone`];
  else [verdict, reason] = ['CONTINUE', `${self} of ${total} signals (${((self / total) * 100).toFixed(1)}%) were catchable by self-reflection alone`];
  return {
    analysis: 'git-history',
    kill_condition: GIT_KILL_CONDITION,
    verdict,
    reason,
    mode,
    commits: counts,
    signals: { total, reverts: signals.filter((s) => s.kind !== 'fix').length, fixes: signals.filter((s) => s.kind === 'fix').length },
    buckets,
    list: signals,
  };
}

export function renderGitHistoryMarkdown(r: GitHistoryReport): string {
  const lines = [
    ...markdownOpening('P2: failure signals in git history, by the gate that would catch them', r),
    `Commits read ${r.commits.read}, in range ${r.commits.in_range} (merges ${r.commits.merges}, roots ${r.commits.roots}, renames ${r.commits.renames}); fix rule: ${r.mode}.`,
    `Signals: ${r.signals.total} (${r.signals.reverts} reverts, ${r.signals.fixes} fixes).`,
    '',
    '| gate | signals | share |',
    '|---|---|---|',
    ...GATES.map((g) => `| ${g} | ${r.buckets[g].count} | ${r.buckets[g].share === null ? 'n/a' : `${(r.buckets[g].share * 100).toFixed(1)}%`} |`),
    '',
  ];
  for (const g of GATES) {
    if (r.buckets[g].examples.length === 0) continue;
    lines.push(`## ${g}`, '');
    for (const s of r.buckets[g].examples) {
      const delay = s.delay_days === null ? '' : `, ${s.delay_days.toFixed(1)} d later`;
      lines.push(`- ${s.sha.slice(0, 10)} ${s.kind}: ${s.subject} (fixes ${s.fixes?.slice(0, 10) ?? 'unknown'}${delay}; ${s.rule})`);
    }
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}
