/**
 * The bounce decision: approve, bounce (back to the implementer, in fix mode) or escalate (to a
 * human). Pure: the caller passes the check and the task's history and records the result.
 *
 * Rules, first match wins:
 *   approve   review_approved        the review's decision is `approve`
 *   escalate  human_required         the review's decision is `require_human`
 *   approve   no_blocking_findings   the review has no error or critical finding
 *   approve   tests_passed           no test failed
 *   approve   feedback_complete      the feedback verdict is `complete`
 *   escalate  regression             a test that passed in an earlier run of this task fails now
 *   escalate  no_actionable          nothing can go back (no failure with a suggested fix and
 *                                    confidence > 0.7; no blocking issue or safe steering)
 *   escalate  max_bounces            this phase already bounced its maximum (review 3, testing 2, feedback 3)
 *   escalate  diminishing_returns    from the second bounce on: the actionable count did not go down
 *   bounce    actionable_items       everything else; only the actionable items go back
 */
import type { FeedbackV1, ReviewResultV1, Severity, TestResultV1 } from '@forge-reflect/reflection-types';

export const PHASES = ['review', 'testing', 'feedback'] as const;
export type Phase = (typeof PHASES)[number];
export type Decision = 'approve' | 'bounce' | 'escalate';
export type Rule =
  | 'review_approved'
  | 'human_required'
  | 'no_blocking_findings'
  | 'tests_passed'
  | 'feedback_complete'
  | 'regression'
  | 'no_actionable'
  | 'max_bounces'
  | 'diminishing_returns'
  | 'actionable_items';

/** A failure goes back only with a suggested fix and a confidence above this. */
export const ACTIONABLE_FAILURE_CONFIDENCE = 0.7;
const BLOCKING: ReadonlySet<Severity> = new Set(['error', 'critical']);

export interface LoopPolicy {
  max_bounces: Record<Phase, number>;
}

export const DEFAULT_POLICY: LoopPolicy = { max_bounces: { review: 3, testing: 2, feedback: 3 } };

/** One thing the implementer is asked to fix (or, for unsafe steering, shown for a human). */
export interface ActionItem {
  id: string;
  kind: 'finding' | 'failure' | 'issue' | 'steering';
  title: string;
  severity?: Severity;
  category?: string;
  file?: string;
  line?: number;
  detail?: string;
  suggested_fix?: string;
}

/** What one check says, before the history is taken into account. */
export interface CheckSummary {
  phase: Phase;
  /** Findings, failures or issues+steering in the input. */
  total: number;
  /** What would go back on a bounce. */
  items: ActionItem[];
  /** Shown but never offered to apply (unsafe steering). */
  human_only: ActionItem[];
  /** Set when the input alone decides. */
  verdict?: { decision: 'approve' | 'escalate'; rule: Rule };
  passed_tests?: string[];
  failed_tests?: string[];
}

export interface TaskHistory {
  /** Bounces already recorded for this task and phase. */
  bounces: number;
  /** The actionable count of the latest of them. */
  last_actionable?: number;
  /** Every test name that passed in an earlier run of this task. */
  previously_passed: ReadonlySet<string>;
}

export interface BounceDecision {
  decision: Decision;
  rule: Rule;
  reason: string;
  /** This bounce's number within the phase (set when decision = bounce). */
  bounce_number?: number;
  items: ActionItem[];
  human_only: ActionItem[];
  regressions: string[];
}

export function summarizeReview(review: ReviewResultV1): CheckSummary {
  const blocking = review.findings.filter((f) => BLOCKING.has(f.severity));
  const items: ActionItem[] = blocking.map((f) => ({
    id: f.id,
    kind: 'finding',
    title: f.message,
    severity: f.severity,
    category: f.category,
    ...(f.file !== undefined ? { file: f.file } : {}),
    ...(f.line !== undefined ? { line: f.line } : {}),
    ...(f.suggested_fix !== undefined ? { suggested_fix: f.suggested_fix.description } : {}),
  }));
  const summary: CheckSummary = { phase: 'review', total: review.findings.length, items, human_only: [] };
  if (review.decision === 'approve') summary.verdict = { decision: 'approve', rule: 'review_approved' };
  else if (review.decision === 'require_human') summary.verdict = { decision: 'escalate', rule: 'human_required' };
  else if (blocking.length === 0) summary.verdict = { decision: 'approve', rule: 'no_blocking_findings' };
  return summary;
}

export function summarizeTests(tests: TestResultV1): CheckSummary {
  const actionable = tests.failures.filter((f) => f.suggested_fix !== undefined && f.confidence > ACTIONABLE_FAILURE_CONFIDENCE);
  const items: ActionItem[] = actionable.map((f) => ({
    id: f.test_name,
    kind: 'failure',
    title: `Test \`${f.test_name}\` fails: ${f.error}`,
    detail: `root cause (${f.root_cause.type}): ${f.root_cause.description}`,
    ...(f.root_cause.file !== undefined ? { file: f.root_cause.file } : {}),
    ...(f.root_cause.line !== undefined ? { line: f.root_cause.line } : {}),
    ...(f.suggested_fix !== undefined ? { suggested_fix: f.suggested_fix.description } : {}),
  }));
  const summary: CheckSummary = {
    phase: 'testing',
    total: tests.failures.length,
    items,
    human_only: [],
    passed_tests: [...new Set(tests.passed_tests ?? [])].sort(),
    failed_tests: [...new Set(tests.failures.map((f) => f.test_name))].sort(),
  };
  if (tests.summary.failed === 0 && tests.failures.length === 0) summary.verdict = { decision: 'approve', rule: 'tests_passed' };
  return summary;
}

export function summarizeFeedback(feedback: FeedbackV1): CheckSummary {
  const issues: ActionItem[] = feedback.issues
    .filter((i) => BLOCKING.has(i.severity))
    .map((i) => ({
      id: i.id,
      kind: 'issue',
      title: i.message,
      severity: i.severity,
      category: i.type,
      ...(i.evidence !== undefined ? { detail: `evidence: ${i.evidence}` } : {}),
    }));
  const steering = (safe: boolean): ActionItem[] =>
    feedback.steering
      .filter((s) => s.safe === safe)
      .map((s) => ({
        id: s.id,
        kind: 'steering',
        title: s.description,
        category: s.type,
        ...(s.patch !== undefined
          ? { suggested_fix: `apply this patch:\n${s.patch}` }
          : s.command !== undefined
            ? { suggested_fix: `run \`${s.command}\`` }
            : {}),
      }));
  const summary: CheckSummary = {
    phase: 'feedback',
    total: feedback.issues.length + feedback.steering.length,
    items: [...issues, ...steering(true)],
    human_only: steering(false),
  };
  if (feedback.verdict === 'complete') summary.verdict = { decision: 'approve', rule: 'feedback_complete' };
  return summary;
}

const REASONS: Record<Rule, string> = {
  review_approved: 'the reviewer approved',
  human_required: 'the reviewer asks for a human',
  no_blocking_findings: 'no error or critical finding',
  tests_passed: 'no test failed',
  feedback_complete: 'the feedback verdict is complete',
  regression: 'a test that passed in an earlier attempt fails now',
  no_actionable: 'nothing can go back to the agent: no item is actionable',
  max_bounces: 'this phase reached its maximum number of bounces',
  diminishing_returns: 'the last bounce did not reduce the number of actionable items',
  actionable_items: 'actionable items go back to the implementer',
};

export function decide(check: CheckSummary, history: TaskHistory, policy: LoopPolicy = DEFAULT_POLICY): BounceDecision {
  const base = { items: check.items, human_only: check.human_only, regressions: [] as string[] };
  const result = (decision: Decision, rule: Rule, reason = REASONS[rule]): BounceDecision => ({ ...base, decision, rule, reason });
  if (check.verdict) return result(check.verdict.decision, check.verdict.rule);
  const regressions = (check.failed_tests ?? []).filter((t) => history.previously_passed.has(t));
  if (regressions.length > 0) {
    return { ...result('escalate', 'regression', `${REASONS.regression}: ${regressions.join(', ')}`), regressions };
  }
  if (check.items.length === 0) return result('escalate', 'no_actionable');
  const max = policy.max_bounces[check.phase];
  if (history.bounces >= max) return result('escalate', 'max_bounces', `${check.phase} already bounced ${history.bounces} time(s), the maximum is ${max}`);
  if (history.bounces >= 1 && history.last_actionable !== undefined && check.items.length >= history.last_actionable) {
    return result(
      'escalate',
      'diminishing_returns',
      `${check.items.length} actionable item(s) now, ${history.last_actionable} at the last bounce: fixes are not converging`,
    );
  }
  return { ...result('bounce', 'actionable_items', `${check.items.length} actionable item(s) go back to the implementer`), bounce_number: history.bounces + 1 };
}

/** Parses a policy file's value: `{ "max_bounces": { "review"?: n, "testing"?: n, "feedback"?: n } }`. */
export function parsePolicy(value: unknown): LoopPolicy | string {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(value)) return '/ must be an object';
  for (const key of Object.keys(value)) if (key !== 'max_bounces') return `/${key} is not allowed (unknown key)`;
  const policy: LoopPolicy = { max_bounces: { ...DEFAULT_POLICY.max_bounces } };
  const max = value.max_bounces;
  if (max === undefined) return policy;
  if (!isObject(max)) return '/max_bounces must be an object';
  for (const [phase, n] of Object.entries(max)) {
    if (!(PHASES as readonly string[]).includes(phase)) return `/max_bounces/${phase} is not allowed (phases: ${PHASES.join(', ')})`;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 100) return `/max_bounces/${phase} must be a whole number from 0 to 100`;
    policy.max_bounces[phase as Phase] = n;
  }
  return policy;
}

function where(item: ActionItem): string | undefined {
  if (item.file === undefined) return undefined;
  return item.line === undefined ? `\`${item.file}\`` : `\`${item.file}:${item.line}\``;
}

/** The fix-mode brief for the agent: the items, where they are, the suggested fixes; surgical changes only. */
export function renderFixBrief(task: string, phase: Phase, decision: BounceDecision, policy: LoopPolicy = DEFAULT_POLICY): string {
  const lines: string[] = [];
  const n = decision.bounce_number ?? 0;
  lines.push(`# Fix mode: ${phase} bounce ${n} of at most ${policy.max_bounces[phase]} for ${task}`, '');
  lines.push(
    'The work went back to you. Make surgical changes: fix exactly the items below, in the places named,',
    'and nothing else. Do not rewrite, reformat or refactor code the items do not mention, and do not add features.',
    '',
    `## ${decision.items.length} item(s) to fix`,
    '',
  );
  decision.items.forEach((item, i) => {
    const label = item.severity ? `${item.severity.toUpperCase()}${item.category ? ` (${item.category})` : ''}: ` : '';
    lines.push(`### ${i + 1}. ${label}${item.title}`);
    lines.push(`- id: ${item.id}`);
    const at = where(item);
    if (at) lines.push(`- where: ${at}`);
    if (item.detail) lines.push(`- ${item.detail}`);
    if (item.suggested_fix) lines.push(`- suggested fix: ${item.suggested_fix}`);
    lines.push('');
  });
  if (decision.human_only.length > 0) {
    lines.push('## Not yours to apply (marked unsafe; a human decides)', '');
    for (const item of decision.human_only) lines.push(`- ${item.id}: ${item.title}`);
    lines.push('');
  }
  lines.push(
    '## Then',
    '',
    '1. Fix each item with the smallest change that resolves it.',
    phase === 'testing'
      ? '2. Re-run the failing tests, then the whole suite: do not break a test that passes.'
      : '2. Run the type check and the tests for the files you touched.',
    '3. Do not introduce new issues; say in your reflection what you could not fix.',
    '',
  );
  return lines.join('\n');
}
