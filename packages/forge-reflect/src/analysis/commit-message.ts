/**
 * Reading commit messages: Conventional Commits headers, the reverts git and GitHub write (and the
 * squash bodies that only quote them), and the keyword rule for fixes in repositories that do not use Conventional Commits. Pure.
 */

export interface ConventionalHeader {
  type: string;
  scope: string | null;
  breaking: boolean;
  description: string;
}

const HEADER = /^([A-Za-z]+)(?:\(([^()\r\n]+)\))?(!)?: (.+)$/;

export function parseConventional(subject: string): ConventionalHeader | null {
  const m = HEADER.exec(subject);
  if (!m) return null;
  return { type: (m[1] as string).toLowerCase(), scope: m[2] ?? null, breaking: m[3] === '!', description: m[4] as string };
}

export interface RevertInfo {
  /** `revert`: a `Revert "…"` subject, a `revert:` header or only the body line; `reapply`: `Reapply "…"`. */
  kind: 'revert' | 'reapply';
  /** The reverted commit's sha (7–40 hex) from `This reverts commit …` or a `Refs:` footer. */
  sha: string | null;
  /** The subject quoted in `Revert "…"` / `Reapply "…"` (one level unwrapped). */
  quoted: string | null;
}

const QUOTED = /^(Revert|Reapply) "(.+)"(?: \(#\d+\))?$/;
const BODY_SHA = /This reverts commit ([0-9a-f]{7,40})\b/i;
const REFS = /^Refs:\s*([0-9a-f]{7,40})\b/im;

export function subjectOf(message: string): string {
  return (message.split('\n', 1)[0] ?? '').trim();
}

/** The revert a message describes, or null. */
export function parseRevert(message: string): RevertInfo | null {
  const subject = subjectOf(message);
  const body = BODY_SHA.exec(message);
  const quoted = QUOTED.exec(subject);
  const conventional = parseConventional(subject);
  const isConventionalRevert = conventional?.type === 'revert';
  if (!quoted && !body && !isConventionalRevert) return null;
  const kind = quoted?.[1] === 'Reapply' ? 'reapply' : 'revert';
  const sha = body?.[1] ?? (isConventionalRevert ? (REFS.exec(message)?.[1] ?? null) : null);
  return { kind, sha: sha === null ? null : sha.toLowerCase(), quoted: quoted ? (quoted[2] as string) : null };
}

/** A list of squashed commits in a body (GitHub writes `* subject` per squashed commit). */
const SQUASH_ITEM = /^[*-] \S/m;
const BODY_LINE = /^This reverts commit [0-9a-f]{7,40}\b/gim;
const BODY_ANY = /This reverts commit [0-9a-f]{7,40}\b/gi;

/**
 * The revert a commit itself is, or null: its subject is a revert (`Revert "…"`, `Reapply "…"`,
 * optionally with GitHub's ` (#123)`, or a `revert:` header), or its body holds exactly one
 * `This reverts commit <sha>` line of its own (at a line start) and no list of squashed commits.
 * A squash commit whose body quotes the reverts of the branch it squashed is not a revert.
 */
export function ownRevert(message: string): RevertInfo | null {
  const info = parseRevert(message);
  if (!info) return null;
  const subject = subjectOf(message);
  if (QUOTED.test(subject) || parseConventional(subject)?.type === 'revert') return info;
  const body = message.slice(subject.length);
  const own = body.match(BODY_LINE) ?? [];
  const any = body.match(BODY_ANY) ?? [];
  if (own.length === 1 && any.length === 1 && !SQUASH_ITEM.test(body)) return info;
  return null;
}

export type CommitKind = 'revert' | 'fix' | 'feature' | 'other';

/** Śliwerski et al.'s fix keywords, plus hotfix. */
const FIX_KEYWORDS = /\b(fix(e[ds]|ing)?|hotfix(es)?|bugs?|bugfix(es)?|defects?|patch(ed)?)\b/i;
const FIX_TYPES = new Set(['fix', 'hotfix', 'bugfix']);
const FEATURE_TYPES = new Set(['feat', 'feature']);

/**
 * The kind of a non-merge commit. `conventional`: fix = a fix/hotfix/bugfix header, feature = a
 * feat header, anything else (docs, chore, ci, refactor, …, and non-conventional subjects) is other.
 * `keyword`: fix = a fix keyword in the subject, every other commit is a feature.
 */
export function commitKind(message: string, mode: 'conventional' | 'keyword'): CommitKind {
  if (ownRevert(message)) return 'revert';
  const subject = subjectOf(message);
  if (mode === 'conventional') {
    const header = parseConventional(subject);
    if (header && FIX_TYPES.has(header.type)) return 'fix';
    if (header && FEATURE_TYPES.has(header.type)) return 'feature';
    return 'other';
  }
  return FIX_KEYWORDS.test(subject) ? 'fix' : 'feature';
}

/** A message that names a failing build or test (one of the CI-bucket rules). */
const FAILING = /\b(fail\w*|broke|broken|breaks?|breaking|red|flaky|flakes?)\b/i;
const CHECKS = /\b(build|builds|ci|tests?|specs?|pipeline|lint|typecheck|type-check|compile|compilation|checks?)\b/i;

export function namesFailingCheck(message: string): boolean {
  return FAILING.test(message) && CHECKS.test(message);
}
