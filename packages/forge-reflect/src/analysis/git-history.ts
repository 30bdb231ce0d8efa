/**
 * P2: failure signals in a git history, each put in the bucket of the gate that would have caught
 * the change that introduced it (gates.ts), tallied, and judged against the pre-registered kill
 * condition. Pure over the commits and the evidence the IO shell gathered (szz-run.ts): each
 * candidate's `-w -U0` diff and the blame of its deleted lines.
 *
 * Signals: a real revert (its own subject or `This reverts commit` paragraph; the cause is the
 * reverted commit), and a fix whose blamed lines were last touched inside the window (SZZ; the
 * causes are those commits, of any type, written before the fix). Not failures, counted apart:
 * dependency bumps, reverts only quoted in a squash body, reverts of reverts, the other copies of a
 * patch seen more than once, signals written together with their cause (delay 0) or before all their
 * causes, fixes that only add lines, fixes with nothing left to blame, fixes whose blamed lines all
 * predate the window.
 *
 * Time is when a change was written: its author date, which a rebase or an import keeps, with the
 * committer date only where the author date is missing or later (git-log.ts `writtenAt`). Delays and
 * the window are measured on it; the committer date orders the history and bounds the walk.
 */
import { commitKind, ownRevert, parseConventional, parseRevert, subjectOf, type RevertInfo } from './commit-message.js';
import { against, wilson, type Proportion } from './agreement.js';
import { dependencyBump } from './dependency-bumps.js';
import type { FileDiff } from './fix-diff.js';
import { classifyGate, GATES, type Gate, type GateResult } from './gates.js';
import { writtenAt, type Commit, type DateSource } from './git-log.js';
import { findDuplicates, patchFingerprint } from './patch-dedup.js';
import { markdownOpening } from './report-markdown.js';
import { planBlame, type BlameLineGroup, type BlamePlan } from './szz.js';
import type { Verdict } from './verdict.js';

export const SELF_SHARE_KILL = 0.1;
export const MIN_SIGNALS = 10;
export const EXAMPLES_PER_BUCKET = 5;
/**
 * A signal written this close to its cause (seconds, by author date) was written with it: a fix
 * squashed into or amended onto its own change. Committer dates are not used for this, since a
 * rebase or an import gives a feature and its fix the same committer date.
 */
export const DELAY_ZERO_SECONDS = 60;

export const GIT_KILL_CONDITION =
  `KILL if the 95% Wilson interval of the share of failure signals (real reverts; fixes whose deleted lines blame to a commit inside the window) ` +
  `that fall in the only-self-reflection bucket lies entirely below ${SELF_SHARE_KILL * 100}% (not caught by CI: a test in the fix, a failing check named, ` +
  `a defect in CI/build files; not by human review: the introducing change touched a risk-floor needs_review surface); CONTINUE if it lies at or above; ` +
  `INCONCLUSIVE if it straddles ${SELF_SHARE_KILL * 100}%, with fewer than ${MIN_SIGNALS} signals, or when a shallow clone cannot blame back as far as the window needs. ` +
  `With a labelled sample (--labels), the same rule on the share estimated from the labels.`;

export interface Cause {
  sha: string;
  subject: string;
  /** When it was written: its author date (the committer date where that is missing or later). */
  at: string;
  committed_at: string;
  /** Blamed lines last touched by it (null for a revert's target). */
  lines: number | null;
  type: string;
}

export interface Signal {
  kind: 'revert' | 'fix';
  sha: string;
  subject: string;
  /** When it was written: its author date (the committer date where that is missing or later). */
  at: string;
  committed_at: string;
  /** The primary cause: the reverted commit, or the most recent blamed commit inside the window. */
  fixes: string | null;
  /** Every blamed commit inside the window, most recent first (fix signals). */
  candidates: string[];
  causes: Cause[];
  /** From the cause's `at` to the fix's `at` (author dates, so a rebase does not reset it). */
  delay_days: number | null;
  gate: Gate;
  rule: string;
  /** The blame of this fix was cut at the per-fix cap: its causes may be incomplete. */
  capped: boolean;
}

export type ExclusionReason =
  | 'dependency_bump'
  | 'quoted_revert'
  | 'revert_of_revert'
  | 'duplicate'
  | 'delay_zero'
  | 'cause_after_fix'
  | 'add_only'
  | 'nothing_to_blame'
  | 'cause_before_window';

export const EXCLUSIONS: readonly ExclusionReason[] = [
  'dependency_bump',
  'quoted_revert',
  'revert_of_revert',
  'duplicate',
  'delay_zero',
  'cause_after_fix',
  'add_only',
  'nothing_to_blame',
  'cause_before_window',
];

export interface SetAsideSignal {
  kind: 'revert' | 'fix';
  sha: string;
  subject: string;
  at: string;
  reason: ExclusionReason;
  detail: string;
  /** For a duplicate, the copy that stays; for a delay-0 or cause-after-fix signal, its cause. */
  of: string | null;
}

/** Which dates the delays were measured on, and where the author date could not be used. */
export interface DateBasis {
  /** `author` when every commit read has a usable author date; `committer` when none has. */
  by: 'author' | 'author_and_committer' | 'committer';
  /** Commits read whose author date was used. */
  author: number;
  /** Commits read with no usable author date (an empty or unparseable field): committer date used. */
  missing: number;
  /** Commits read whose author date is later than the committer date: committer date used. */
  later: number;
  note: string;
}

export interface ShallowInfo {
  /** Committer time (s) of the newest shallow boundary commit: blame reaches no further back. */
  boundaryTime: number;
  boundaryCommits: number;
  /** The boundary commits' shas (lines they seem to add are older than the clone). */
  edges?: string[];
}

export interface GitHistoryOptions {
  /** Epoch ms: signals at or after it count (commits before it still count as causes). */
  since: number;
  windowMs: number;
  /** The repository's name, removed from paths before the risk-floor match. */
  repoName?: string | null;
  shallow?: ShallowInfo | null;
}

export interface Evidence {
  /** `-w -U0` diff of each candidate against its first parent. */
  diffs: ReadonlyMap<string, readonly FileDiff[]>;
  /** Blame of each fix's planned lines at its parent, merged over files. */
  blames: ReadonlyMap<string, readonly BlameLineGroup[]>;
  /** Fixes whose tracing hit the per-fix cap. */
  capped?: ReadonlySet<string>;
}

export interface GitHistoryReport {
  analysis: 'git-history';
  kill_condition: string;
  verdict: Verdict;
  reason: string;
  /** What the verdict rests on. */
  evidence: 'heuristic' | 'labels';
  mode: 'conventional' | 'keyword';
  commits: { read: number; in_range: number; merges: number; roots: number; renames: number };
  dates: DateBasis;
  signals: { total: number; reverts: number; fixes: number; capped: number };
  self_share: Proportion;
  excluded: Record<ExclusionReason, number>;
  blame: { fixes_blamed: number; lines_blamed: number; set_aside_lines: Record<string, number>; depth: string };
  buckets: Record<Gate, { count: number; share: number | null; examples: Signal[] }>;
  list: Signal[];
  set_aside: SetAsideSignal[];
}

/** `conventional` when at least half of the non-merge commits have a Conventional Commits header. */
export function detectMode(commits: readonly Commit[]): 'conventional' | 'keyword' {
  const plain = commits.filter((c) => c.parents.length < 2);
  if (plain.length === 0) return 'keyword';
  const conventional = plain.filter((c) => parseConventional(subjectOf(c.message)) !== null).length;
  return conventional * 2 >= plain.length ? 'conventional' : 'keyword';
}

export interface Candidate {
  commit: Commit;
  kind: 'revert' | 'fix';
  revert: RevertInfo | null;
}

export interface Screened {
  mode: 'conventional' | 'keyword';
  /** Oldest first. */
  commits: Commit[];
  bySha: Map<string, Commit>;
  candidates: Candidate[];
  early: SetAsideSignal[];
  counts: GitHistoryReport['commits'];
  /** Each commit's written time (seconds): author date, else committer date. */
  written: Map<string, number>;
  dates: DateBasis;
}

const iso = (t: number) => new Date(t * 1000).toISOString();

/** The report's account of the dates it measured on. */
export function dateBasis(sources: Record<DateSource, number>): DateBasis {
  const { author, missing, later } = sources;
  const fallback = missing + later;
  const parts = [
    missing > 0 ? `${missing} with no usable author date (an empty or unparseable field)` : null,
    later > 0 ? `${later} whose author date is later than the committer date` : null,
  ].filter((x): x is string => x !== null);
  let by: DateBasis['by'];
  let note: string;
  if (author === 0 && fallback > 0) {
    by = 'committer';
    note = `no commit has a usable author date (${parts.join('; ')}): delays fall back to committer dates, which a rebase or an import resets, so a rebased fix and its cause can look written together and be set aside as delay 0`;
  } else if (fallback > 0) {
    by = 'author_and_committer';
    note = `delays by author date (when each change was written); committer date for ${fallback} of ${author + fallback} commits: ${parts.join('; ')}`;
  } else {
    by = 'author';
    note = 'delays by author date (when each change was written), which a rebase or an import keeps';
  }
  return { by, author, missing, later, note };
}

/** Stage 1: the commits that may be signals (fixes and real reverts in range), and the early exclusions. */
export function screenCommits(input: readonly Commit[], options: Pick<GitHistoryOptions, 'since'>): Screened {
  // Oldest first; git lists newest first, so equal times keep parents before children when reversed.
  const commits = input
    .map((c, i) => ({ c, i }))
    .sort((a, b) => a.c.time - b.c.time || b.i - a.i)
    .map((x) => x.c);
  const mode = detectMode(commits);
  const bySha = new Map<string, Commit>();
  const counts = { read: commits.length, in_range: 0, merges: 0, roots: 0, renames: 0 };
  const candidates: Candidate[] = [];
  const early: SetAsideSignal[] = [];
  const sinceSec = options.since / 1000;
  const written = new Map<string, number>();
  const sources: Record<DateSource, number> = { author: 0, missing: 0, later: 0 };
  for (const c of commits) {
    bySha.set(c.sha, c);
    const w = writtenAt(c);
    written.set(c.sha, w.time);
    sources[w.source]++;
    const isMerge = c.parents.length > 1;
    if (isMerge) counts.merges++;
    if (c.parents.length === 0) counts.roots++;
    counts.renames += c.files.filter((f) => f.status === 'R').length;
    // In range by when it was written (never after its committer date, so git log --since still reads it).
    if (w.time < sinceSec) continue;
    counts.in_range++;
    if (isMerge) continue; // merges are never signals themselves
    const subject = subjectOf(c.message);
    const base = { sha: c.sha, subject, at: iso(w.time), of: null };
    const own = ownRevert(c.message);
    const kind = own ? 'revert' : commitKind(c.message, mode);
    const quoted = !own && Boolean(parseRevert(c.message));
    if (quoted && kind !== 'fix') {
      early.push({
        ...base,
        kind: 'revert',
        reason: 'quoted_revert',
        detail: 'a squash body quoting reverts of other commits; the commit itself is no revert',
      });
      continue;
    }
    if (kind !== 'revert' && kind !== 'fix') continue;
    // A revert is judged as a revert (reverting a bump is a failure of the bump); bumps are fixes that only move versions.
    const bump = own ? null : dependencyBump({ author: c.author ?? '', message: c.message, files: c.files.map((f) => f.path) });
    if (bump) {
      early.push({ ...base, kind: 'fix', reason: 'dependency_bump', detail: bump });
      continue;
    }
    if (quoted)
      early.push({ ...base, kind: 'revert', reason: 'quoted_revert', detail: 'a squash body quoting reverts of other commits; counted as the fix it is' });
    candidates.push({ commit: c, kind: kind === 'revert' ? 'revert' : 'fix', revert: own });
  }
  return { mode, commits, bySha, candidates, early, counts, written, dates: dateBasis(sources) };
}

/**
 * Stage 2 (pure): the copies of each patch (a history imported twice, a cherry-pick), and what to
 * blame for each fix. Every copy is blamed, so the copy that stays can be the one that keeps a cause.
 */
export function planEvidence(screened: Screened, diffs: Evidence['diffs']): { copies: Map<string, string[]>; plans: Map<string, BlamePlan> } {
  const at = (c: Candidate) => screened.written.get(c.commit.sha) ?? c.commit.time;
  // Oldest written first (the original before its copies), then oldest committed, then history order.
  const ordered = screened.candidates
    .map((c, i) => ({ c, i }))
    .sort((a, b) => at(a.c) - at(b.c) || a.c.commit.time - b.c.commit.time || a.i - b.i)
    .map((x) => x.c);
  const dupOf = findDuplicates(ordered.map((c) => ({ sha: c.commit.sha, fingerprint: patchFingerprint(diffs.get(c.commit.sha) ?? []) })));
  const copies = new Map<string, string[]>();
  for (const c of ordered) {
    const first = dupOf.get(c.commit.sha);
    if (first === undefined) continue;
    let group = copies.get(first);
    if (!group) copies.set(first, (group = [first]));
    group.push(c.commit.sha);
  }
  const plans = new Map<string, BlamePlan>();
  for (const c of screened.candidates) if (c.kind === 'fix') plans.set(c.commit.sha, planBlame(diffs.get(c.commit.sha) ?? []));
  return { copies, plans };
}

function findSha(bySha: Map<string, Commit>, sha: string): Commit | undefined {
  const exact = bySha.get(sha);
  if (exact || sha.length === 40) return exact;
  for (const [full, c] of bySha) if (full.startsWith(sha)) return c;
  return undefined;
}

type Judged =
  | { signal: Signal; setAside?: undefined; lines: number; blamed: boolean }
  | { signal?: undefined; setAside: SetAsideSignal; lines: number; blamed: boolean };

export function analyzeGitHistory(input: readonly Commit[], options: GitHistoryOptions, evidence: Evidence): GitHistoryReport {
  const screened = screenCommits(input, options);
  const { copies, plans } = planEvidence(screened, evidence.diffs);
  const history = historyOf(screened, options, plans, evidence);
  const judged = new Map(screened.candidates.map((cand) => [cand.commit.sha, judgeCandidate(history, cand)]));
  const outcomes = collectOutcomes(history, screened, judged, duplicatesOf(copies, judged));
  return assembleReport(screened, options, outcomes);
}

/** What judging a candidate reads. */
interface History {
  mode: Screened['mode'];
  bySha: Map<string, Commit>;
  /** The oldest commit of each subject. */
  bySubject: Map<string, Commit>;
  /** When a commit was written (seconds). */
  at: (c: Commit) => number;
  windowSec: number;
  repoName: string | null;
  plans: Map<string, BlamePlan>;
  evidence: Evidence;
}

function historyOf(screened: Screened, options: GitHistoryOptions, plans: Map<string, BlamePlan>, evidence: Evidence): History {
  const { written } = screened;
  const bySubject = new Map<string, Commit>();
  for (const c of screened.commits) if (!bySubject.has(subjectOf(c.message))) bySubject.set(subjectOf(c.message), c);
  return {
    mode: screened.mode,
    bySha: screened.bySha,
    bySubject,
    at: (c) => written.get(c.sha) ?? c.time,
    windowSec: options.windowMs / 1000,
    repoName: options.repoName ?? null,
    plans,
    evidence,
  };
}

function judgeCandidate(h: History, cand: Candidate): Judged {
  return cand.kind === 'revert' ? judgeRevert(h, cand) : judgeFix(h, cand);
}

/** A real revert: its cause is the commit it reverts. */
function judgeRevert(h: History, cand: Candidate): Judged {
  const c = cand.commit;
  const r = cand.revert as RevertInfo;
  const target = revertTarget(h, c, r);
  const ofRevert = r.kind === 'reapply' || (r.quoted !== null && /^Revert "/.test(r.quoted)) || (target !== undefined && ownRevert(target.message) !== null);
  if (ofRevert) return setAsideAs(h, cand, 'revert_of_revert', 'restores a reverted change; the first revert is the failure signal', target?.sha ?? r.sha);
  const none = target ? noDelay(h, c, target, 'the reverted commit') : null;
  if (target && none) return setAsideAs(h, cand, none.reason, none.detail, target.sha);
  const inducing = (target ?? c).files.map((f) => f.path);
  const gate = gateOf(h, c, inducing, inducing);
  return {
    signal: {
      ...entryBase(h, cand),
      committed_at: iso(c.time),
      fixes: target?.sha ?? r.sha,
      candidates: target ? [target.sha] : [],
      causes: target ? [causeOf(h, target, null)] : [],
      delay_days: target ? (h.at(c) - h.at(target)) / 86_400 : null,
      ...gate,
      capped: false,
    },
    lines: 0,
    blamed: false,
  };
}

/** The reverted commit: by its sha, else by its quoted subject. */
function revertTarget(h: History, revert: Commit, r: RevertInfo): Commit | undefined {
  let target = r.sha ? findSha(h.bySha, r.sha) : undefined;
  if (!target && r.quoted) target = h.bySubject.get(r.kind === 'reapply' ? `Revert "${r.quoted}"` : r.quoted);
  if (target && target.time > revert.time) return undefined; // committed after the revert: not its target
  return target;
}

/** A fix (SZZ): its causes are the commits inside the window that last touched its blamed lines. */
function judgeFix(h: History, cand: Candidate): Judged {
  const c = cand.commit;
  const plan = h.plans.get(c.sha) as BlamePlan;
  if (plan.lines === 0) {
    if (plan.added > 0)
      return setAsideAs(h, cand, 'add_only', 'no blamed cause: the fix only adds lines (outside tests, docs, lockfiles and generated files)', null);
    return setAsideAs(
      h,
      cand,
      'nothing_to_blame',
      'no blamed cause: the fix changes only tests, docs, lockfiles, generated files, comments or blank lines',
      null,
    );
  }
  const { lines, paths, after } = blameInWindow(h, c);
  if (lines.size === 0 && after.size > 0) {
    // Every cause in reach was written after the fix: the nearest says by how much.
    const nearest = [...after].map((s) => h.bySha.get(s) as Commit).sort((a, b) => h.at(a) - h.at(b) || a.time - b.time)[0] as Commit;
    const none = noDelay(h, c, nearest, after.size === 1 ? 'its cause' : `the nearest of its ${after.size} causes`);
    if (none) return setAsideAs(h, cand, none.reason, none.detail, nearest.sha, plan.lines, true);
  }
  if (lines.size === 0)
    return setAsideAs(h, cand, 'cause_before_window', `its ${plan.lines} blamed line(s) were last touched before the window`, null, plan.lines, true);
  const causes = rankCauses(h, lines);
  const primary = causes[0] as Commit;
  const none = noDelay(h, c, primary, 'its cause');
  if (none) return setAsideAs(h, cand, none.reason, none.detail, primary.sha, plan.lines, true);
  const gate = gateOf(
    h,
    c,
    primary.files.map((f) => f.path),
    [...(paths.get(primary.sha) ?? [])],
  );
  return {
    signal: {
      ...entryBase(h, cand),
      committed_at: iso(c.time),
      fixes: primary.sha,
      candidates: causes.map((x) => x.sha),
      causes: causes.map((x) => causeOf(h, x, lines.get(x.sha) ?? 0)),
      delay_days: (h.at(c) - h.at(primary)) / 86_400,
      ...gate,
      capped: plan.capped || (h.evidence.capped?.has(c.sha) ?? false),
    },
    lines: plan.lines,
    blamed: true,
  };
}

interface BlameInWindow {
  /** Blamed lines per cause. */
  lines: Map<string, number>;
  /** The paths of those lines, per cause. */
  paths: Map<string, Set<string>>;
  /** Blamed commits inside the window but written after the fix. */
  after: Set<string>;
}

/** A fix's blamed lines, by the commit inside its window that last touched them. */
function blameInWindow(h: History, fix: Commit): BlameInWindow {
  const start = h.at(fix) - h.windowSec;
  const lines = new Map<string, number>();
  const paths = new Map<string, Set<string>>();
  // Blamed commits written after the fix (more than DELAY_ZERO_SECONDS): outside the window, which
  // runs back from the fix, so never causes (as B-SZZ drops candidates later than the bug report).
  // A fix written on a branch and rebased over such a change keeps its earlier causes.
  const after = new Set<string>();
  for (const raw of h.evidence.blames.get(fix.sha) ?? []) {
    // A branch commit older than the window, brought in by a merge inside it: the merge is the cause.
    const viaMerge = raw.via ? h.bySha.get(raw.via) : undefined;
    const writer = h.bySha.get(raw.sha);
    const early = (writer ? h.at(writer) : 0) < start;
    const g = early && viaMerge && h.at(viaMerge) >= start ? { ...raw, sha: viaMerge.sha } : raw;
    const cause = h.bySha.get(g.sha);
    if (g.boundary || !cause || h.at(cause) < start || cause.sha === fix.sha) continue;
    if (h.at(cause) - h.at(fix) > DELAY_ZERO_SECONDS) {
      after.add(cause.sha);
      continue;
    }
    lines.set(g.sha, (lines.get(g.sha) ?? 0) + g.lines);
    if (!paths.has(g.sha)) paths.set(g.sha, new Set());
    paths.get(g.sha)?.add(g.path);
  }
  return { lines, paths, after };
}

/** Most recently written first (R-SZZ); committer order, then blamed lines, break ties. */
function rankCauses(h: History, lines: ReadonlyMap<string, number>): Commit[] {
  return [...lines.keys()]
    .map((s) => h.bySha.get(s) as Commit)
    .sort((a, b) => h.at(b) - h.at(a) || b.time - a.time || (lines.get(b.sha) ?? 0) - (lines.get(a.sha) ?? 0));
}

function causeOf(h: History, c: Commit, lines: number | null): Cause {
  const header = parseConventional(subjectOf(c.message));
  const type = c.parents.length > 1 ? 'merge' : header ? header.type : commitKind(c.message, h.mode);
  return { sha: c.sha, subject: subjectOf(c.message), at: iso(h.at(c)), committed_at: iso(c.time), lines, type };
}

function gateOf(h: History, fix: Commit, inducing: readonly string[], defect: readonly string[]): GateResult {
  return classifyGate({
    fixFiles: fix.files.map((f) => f.path),
    fixMessage: fix.message,
    inducingFiles: inducing,
    defectFiles: defect,
    repoName: h.repoName,
  });
}

function datedBy(c: Commit): string {
  return writtenAt(c).source === 'author' ? 'author date' : 'committer date';
}

/** Why a signal has no delay to count: written together with its cause, or before it. Null when it has one. */
function noDelay(h: History, fix: Commit, cause: Commit, what: string): { reason: ExclusionReason; detail: string } | null {
  const delay = h.at(fix) - h.at(cause);
  if (delay > DELAY_ZERO_SECONDS) return null;
  const by = datedBy(fix) === datedBy(cause) ? `by ${datedBy(fix)}` : `the fix by ${datedBy(fix)}, the cause by ${datedBy(cause)}`;
  if (delay < -DELAY_ZERO_SECONDS) {
    return {
      reason: 'cause_after_fix',
      detail: `${what} ${cause.sha.slice(0, 10)} was written ${(-delay / 86_400).toFixed(2)} d after the fix (${by}): a squashed or re-dated cause, no delay to measure`,
    };
  }
  return {
    reason: 'delay_zero',
    detail: `${what} ${cause.sha.slice(0, 10)} was written at the same time (${by}, within ${DELAY_ZERO_SECONDS} s): fixed with its cause, not found later`,
  };
}

/** The fields a candidate's signal and set-aside entry open with. */
function entryBase(h: History, cand: Candidate): Pick<SetAsideSignal, 'kind' | 'sha' | 'subject' | 'at'> {
  const c = cand.commit;
  return { kind: cand.kind, sha: c.sha, subject: subjectOf(c.message), at: iso(h.at(c)) };
}

function setAsideEntry(h: History, cand: Candidate, reason: ExclusionReason, detail: string, of: string | null): SetAsideSignal {
  return { ...entryBase(h, cand), reason, detail, of };
}

function setAsideAs(h: History, cand: Candidate, reason: ExclusionReason, detail: string, of: string | null, lines = 0, blamed = false): Judged {
  return { setAside: setAsideEntry(h, cand, reason, detail, of), lines, blamed };
}

/**
 * Each duplicate's sha → the copy that stays. Of the copies of one patch, the one that stays is the
 * earliest that keeps a cause (a signal), else the earliest. An imported copy can be the one with a
 * cause when the original's own history was rewritten.
 */
function duplicatesOf(copies: ReadonlyMap<string, readonly string[]>, judged: ReadonlyMap<string, Judged>): Map<string, string> {
  const duplicateOf = new Map<string, string>();
  for (const group of copies.values()) {
    const stays = group.find((s) => judged.get(s)?.signal) ?? (group[0] as string);
    for (const s of group) if (s !== stays) duplicateOf.set(s, stays);
  }
  return duplicateOf;
}

interface Outcomes {
  signals: Signal[];
  setAside: SetAsideSignal[];
  setAsideLines: Record<string, number>;
  fixesBlamed: number;
  linesBlamed: number;
}

/** The candidates, in history order, as signals or set aside (after the early exclusions), and what their blame counted. */
function collectOutcomes(h: History, screened: Screened, judged: ReadonlyMap<string, Judged>, duplicateOf: ReadonlyMap<string, string>): Outcomes {
  const signals: Signal[] = [];
  const setAside: SetAsideSignal[] = [...screened.early];
  const setAsideLines: Record<string, number> = {};
  let fixesBlamed = 0;
  let linesBlamed = 0;
  for (const cand of screened.candidates) {
    const c = cand.commit;
    const stays = duplicateOf.get(c.sha);
    if (stays) {
      setAside.push(setAsideEntry(h, cand, 'duplicate', `the same patch (paths reduced to base names) as ${stays.slice(0, 10)}, the copy that stays`, stays));
      continue;
    }
    const plan = h.plans.get(c.sha);
    if (plan) for (const [k, v] of Object.entries(plan.setAside)) setAsideLines[k] = (setAsideLines[k] ?? 0) + v;
    const j = judged.get(c.sha) as Judged;
    if (j.blamed) {
      fixesBlamed++;
      linesBlamed += j.lines;
    }
    if (j.signal) signals.push(j.signal);
    else setAside.push(j.setAside);
  }
  return { signals, setAside, setAsideLines, fixesBlamed, linesBlamed };
}

function assembleReport(screened: Screened, options: GitHistoryOptions, outcomes: Outcomes): GitHistoryReport {
  const { signals, setAside } = outcomes;
  const total = signals.length;
  const buckets = bucketsOf(signals);
  const self = buckets.self_reflection.count;
  const selfShare = wilson(self, total);
  const depth = depthNote(options, screened.commits);
  const [verdict, reason] = heuristicVerdict(screened.counts.in_range, depth, self, selfShare, total);
  return {
    analysis: 'git-history',
    kill_condition: GIT_KILL_CONDITION,
    verdict,
    reason,
    evidence: 'heuristic',
    mode: screened.mode,
    commits: screened.counts,
    dates: screened.dates,
    signals: {
      total,
      reverts: signals.filter((s) => s.kind === 'revert').length,
      fixes: signals.filter((s) => s.kind === 'fix').length,
      capped: signals.filter((s) => s.capped).length,
    },
    self_share: selfShare,
    excluded: exclusionCounts(setAside),
    blame: { fixes_blamed: outcomes.fixesBlamed, lines_blamed: outcomes.linesBlamed, set_aside_lines: outcomes.setAsideLines, depth: depth.text },
    buckets,
    list: signals,
    set_aside: setAside.sort((a, b) => a.at.localeCompare(b.at) || a.sha.localeCompare(b.sha)),
  };
}

/** The signals by gate: how many, their share, the first few. */
function bucketsOf(signals: readonly Signal[]): GitHistoryReport['buckets'] {
  const total = signals.length;
  return Object.fromEntries(
    GATES.map((g) => {
      const inBucket = signals.filter((s) => s.gate === g);
      return [g, { count: inBucket.length, share: total === 0 ? null : inBucket.length / total, examples: inBucket.slice(0, EXAMPLES_PER_BUCKET) }];
    }),
  ) as GitHistoryReport['buckets'];
}

function exclusionCounts(setAside: readonly SetAsideSignal[]): Record<ExclusionReason, number> {
  return Object.fromEntries(EXCLUSIONS.map((e) => [e, setAside.filter((s) => s.reason === e).length])) as Record<ExclusionReason, number>;
}

/** The verdict on the heuristic's signals: inconclusive without enough history or signals, else the share's. */
function heuristicVerdict(inRange: number, depth: { short: boolean; text: string }, self: number, selfShare: Proportion, total: number): [Verdict, string] {
  if (inRange === 0) return ['INCONCLUSIVE', 'no commits in range'];
  if (depth.short) return ['INCONCLUSIVE', depth.text];
  if (total === 0) return ['INCONCLUSIVE', `no failure signals in ${inRange} commits`];
  if (total < MIN_SIGNALS) return ['INCONCLUSIVE', `only ${total} failure signal(s); need ${MIN_SIGNALS}`];
  return shareVerdict(selfShare, `${self} of ${total} signals`, 'by the heuristic alone');
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** The pre-registered decision on a share with its interval. */
export function shareVerdict(share: Proportion, what: string, basis: string): [Verdict, string] {
  const ci = share.ci as [number, number];
  const text = `${what} (${pct(share.p ?? 0)}, 95% CI ${pct(ci[0])}–${pct(ci[1])}) only self-reflection could catch, ${basis}`;
  const side = against(share.ci, SELF_SHARE_KILL);
  if (side === 'below') return ['KILL', `${text}: the interval lies below ${pct(SELF_SHARE_KILL)}`];
  if (side === 'above') return ['CONTINUE', `${text}: the interval lies at or above ${pct(SELF_SHARE_KILL)}`];
  return ['INCONCLUSIVE', `${text}: the interval straddles ${pct(SELF_SHARE_KILL)}`];
}

/** How far back blame can reach, and whether the window needs more (a shallow clone). */
export function depthNote(options: GitHistoryOptions, commits: readonly Commit[]): { short: boolean; text: string } {
  if (!options.shallow) return { short: false, text: 'full history: blame reaches the root' };
  const edge = options.shallow.boundaryTime;
  const windowSec = options.windowMs / 1000;
  // The earliest commit that may be a signal needs its window; in a shallow clone that is at least the edge.
  const earliest = commits.reduce((m, c) => {
    const t = writtenAt(c).time;
    return t >= options.since / 1000 ? Math.min(m, t) : m;
  }, Infinity);
  const needs = (earliest === Infinity ? options.since / 1000 : earliest) - windowSec;
  const base = `shallow clone: blame reaches back to ${iso(edge)} (${options.shallow.boundaryCommits} boundary commit(s))`;
  if (needs < edge)
    return { short: true, text: `${base}; the window needs ${iso(Math.max(0, needs))}; fetch more history (git fetch --unshallow, or --shallow-since)` };
  return { short: false, text: `${base}; enough for the window` };
}

export function renderGitHistoryMarkdown(r: GitHistoryReport): string {
  const lines = [
    ...markdownOpening('P2: failure signals in git history, by the gate that would catch them', r),
    `Evidence: ${r.evidence === 'labels' ? 'a labelled sample' : 'the heuristic alone (no labels)'}.`,
    `Commits read ${r.commits.read}, in range ${r.commits.in_range} (merges ${r.commits.merges}, roots ${r.commits.roots}, renames ${r.commits.renames}); fix rule: ${r.mode}.`,
    `Dates: ${r.dates.note}.`,
    `Signals: ${r.signals.total} (${r.signals.reverts} reverts, ${r.signals.fixes} fixes by blame; ${r.signals.capped} capped). Blame: ${r.blame.fixes_blamed} fixes, ${r.blame.lines_blamed} lines; ${r.blame.depth}.`,
    `Not counted: ${EXCLUSIONS.map((e) => `${e.replace(/_/g, ' ')} ${r.excluded[e]}`).join(', ')}.`,
    '',
    '| gate | signals | share |',
    '|---|---|---|',
    ...GATES.map((g) => `| ${g} | ${r.buckets[g].count} | ${r.buckets[g].share === null ? 'n/a' : pct(r.buckets[g].share)} |`),
    '',
  ];
  for (const g of GATES) {
    if (r.buckets[g].examples.length === 0) continue;
    lines.push(`## ${g}`, '');
    for (const s of r.buckets[g].examples) {
      const delay = s.delay_days === null ? '' : `, ${s.delay_days.toFixed(1)} d later`;
      lines.push(`- ${s.sha.slice(0, 10)} ${s.kind}: ${s.subject} (cause ${s.fixes?.slice(0, 10) ?? 'unknown'}${delay}; ${s.rule})`);
    }
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}
