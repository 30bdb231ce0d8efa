/** `forge-reflect bounce`: record a review, test or feedback check for a task and decide approve, bounce or escalate. */
import type { FeedbackV1, ReviewResultV1, TestResultV1 } from '@forge-reflect/reflection-types';
import { openDrainedLog } from '../log/drain.js';
import type { EventLog } from '../log/event-log.js';
import { usageError } from '../errors.js';
import { painter, useColour, writeJson } from '../output.js';
import { resolveStateDir } from '../state-dir.js';
import { writeAttemptFile } from '../loops/attempt-key.js';
import {
  type BounceDecision,
  decide,
  DEFAULT_POLICY,
  parsePolicy,
  renderFixBrief,
  summarizeFeedback,
  summarizeReview,
  summarizeTests,
  type CheckSummary,
  type LoopPolicy,
  type TaskHistory,
} from '../loops/bounce-core.js';
import { type RecordedCheck, recordCheck, taskHistory } from '../loops/bounce-store.js';
import { resolveNow } from '../loops/clock.js';
import { readJsonFile, readValidated } from '../loops/input-file.js';
import { insertLoopEvents, type LoopEvent } from '../loops/loop-events.js';
import { UserError } from '../errors.js';

export function taskArg(args: Record<string, unknown>): string {
  const task = args.task;
  if (Array.isArray(task)) throw usageError('--task was given more than once; give it once');
  if (typeof task !== 'string' || task.trim() === '') throw usageError('--task needs a task reference, e.g. --task acme#42');
  return task;
}

function readCheck(args: Record<string, unknown>): CheckSummary {
  const given = (['review', 'tests', 'feedback'] as const).filter((k) => args[k] !== undefined);
  if (given.length !== 1) throw usageError('give exactly one of --review FILE, --tests FILE or --feedback FILE');
  const kind = given[0] as 'review' | 'tests' | 'feedback';
  const file = String(args[kind]);
  if (kind === 'review') return summarizeReview(readValidated<ReviewResultV1>(file, 'review-result.v1', 'review'));
  if (kind === 'tests') return summarizeTests(readValidated<TestResultV1>(file, 'test-result.v1', 'test result'));
  return summarizeFeedback(readValidated<FeedbackV1>(file, 'feedback.v1', 'feedback'));
}

function readPolicy(file: unknown): LoopPolicy {
  if (file === undefined) return DEFAULT_POLICY;
  const parsed = parsePolicy(readJsonFile(String(file), 'policy'));
  if (typeof parsed === 'string')
    throw new UserError(`the policy file ${String(file)} is invalid: ${parsed}; e.g. {"max_bounces": {"review": 3, "testing": 2}}`);
  return parsed;
}

/** The task, the check and the policy, every input read and checked before anything is written. */
interface Request {
  task: string;
  now: number;
  json: boolean;
  check: CheckSummary;
  policy: LoopPolicy;
  stateDir: string;
}

/** The decision on the check, against the task's history, and what it writes to the log. */
interface Bounce extends Request {
  history: TaskHistory;
  decision: BounceDecision;
  events: LoopEvent[];
  /** The fix-mode brief, on a bounce. */
  brief: string | undefined;
}

/** What was written: the check's row, and the attempt the task's next reflection carries. */
interface Written {
  recorded: RecordedCheck;
  attempt: number;
  attemptFile: string;
}

export async function run(args: Record<string, unknown>): Promise<number> {
  const request = readRequest(args);
  const log = openDrainedLog(request.stateDir);
  let bounce: Bounce;
  let written: Written;
  try {
    bounce = decideCheck(log, request);
    written = recordBounce(log, bounce);
  } finally {
    log.close();
  }
  const output = bounceOutput(bounce, written);
  if (bounce.json) writeJson(output);
  else printDecision(bounce, output);
  return 0;
}

function readRequest(args: Record<string, unknown>): Request {
  const task = taskArg(args);
  const now = resolveNow(args);
  const check = readCheck(args);
  const policy = readPolicy(args.policy);
  return { task, now, json: Boolean(args.json), check, policy, stateDir: resolveStateDir() };
}

function decideCheck({ db }: EventLog, request: Request): Bounce {
  const { task, check, policy } = request;
  const history = taskHistory(db, task, check.phase);
  const decision = decide(check, history, policy);
  return {
    ...request,
    history,
    decision,
    events: decisionEvents(task, check, history, decision),
    brief: decision.decision === 'bounce' ? renderFixBrief(task, check.phase, decision, policy) : undefined,
  };
}

/** The loop events a decision raises, in this order: the bounce, diminishing returns, the escalation. */
function decisionEvents(task: string, check: CheckSummary, history: TaskHistory, decision: BounceDecision): LoopEvent[] {
  const events: LoopEvent[] = [];
  const base = { task_ref: task, phase: check.phase };
  if (decision.decision === 'bounce') {
    events.push({
      type: 'loop.phase_bounce',
      payload: {
        ...base,
        from: check.phase,
        to: 'implementation',
        bounce: decision.bounce_number,
        actionable: check.items.length,
        total: check.total,
        items: check.items.map((i) => i.id),
      },
    });
  }
  if (decision.rule === 'diminishing_returns') {
    events.push({
      type: 'loop.diminishing_returns',
      payload: { ...base, bounces: history.bounces, actionable: check.items.length, previous_actionable: history.last_actionable },
    });
  }
  if (decision.decision === 'escalate') {
    events.push({
      type: 'loop.escalated',
      payload: { ...base, rule: decision.rule, reason: decision.reason, bounces: history.bounces, regressions: decision.regressions },
    });
  }
  return events;
}

/** The check and its events into the log, then the attempt file for the Stop hook. */
function recordBounce(log: EventLog, { task, check, decision, events, now, stateDir }: Bounce): Written {
  const recorded = recordCheck(log.db, task, check, decision, now);
  insertLoopEvents(log, events, now);
  const attempt = recorded.task_bounces + 1;
  return { recorded, attempt, attemptFile: writeAttemptFile(stateDir, task, attempt) };
}

function bounceOutput({ task, check, policy, history, decision, brief }: Bounce, { recorded, attempt, attemptFile }: Written): Record<string, unknown> {
  return {
    task_ref: task,
    phase: check.phase,
    decision: decision.decision,
    rule: decision.rule,
    reason: decision.reason,
    bounce_number: decision.bounce_number ?? null,
    phase_bounces: decision.decision === 'bounce' ? (decision.bounce_number ?? 0) : history.bounces,
    max_bounces: policy.max_bounces[check.phase],
    task_bounces: recorded.task_bounces,
    next_reflection_attempt: attempt,
    attempt_file: attemptFile,
    total_items: check.total,
    actionable: check.items.length,
    items: decision.decision === 'bounce' ? decision.items : [],
    human_only: decision.human_only,
    regressions: decision.regressions,
    resolved_previous: recorded.closed_bounce ?? null,
    brief: brief ?? null,
  };
}

function printDecision({ task, check, brief }: Bounce, output: Record<string, unknown>): void {
  const paint = painter(useColour());
  const word = output.decision === 'approve' ? paint.ok('approve') : output.decision === 'bounce' ? paint.bold('bounce') : paint.bad('escalate');
  process.stdout.write(`${word} (${String(output.rule)}): ${String(output.reason)}\n`);
  process.stdout.write(
    paint.dim(
      `${task} · ${check.phase} bounces ${String(output.phase_bounces)}/${String(output.max_bounces)} · next reflection_attempt ${String(output.next_reflection_attempt)}\n`,
    ),
  );
  if (brief) process.stdout.write(`\n${brief}`);
}
