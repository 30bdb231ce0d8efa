/**
 * P3: how many completed tasks get a machine-detectable outcome (a later event inside the window
 * that says the task was right or wrong). The board shapes read here, each detected per record:
 *
 *   generic task      {id, status, completed_at, events?: [{type, at, correct?}]}
 *   generic event     {task_id | task | task_ref, type | event, at, correct?}   (type: reopened,
 *                     revert/reverted, bug/linked_bug, outcome; a row with `correct` and no type is a
 *                     recorded `forge-reflect outcome`)
 *   GitHub issue      as the REST API returns it: {number, state, state_reason, closed_at, created_at,
 *                     title, body, labels, pull_request?}; pull requests are skipped. A bug-labelled
 *                     issue created in the window that mentions #N is a linked bug of issue N.
 *   GitHub event      {event: "reopened", created_at, issue: {number}} (the issue events API)
 *
 * A file is one JSON document (an array, or {tasks, events}) or JSON Lines. Pure.
 */
import type { BadRow } from './corpus-rows.js';
import type { Verdict } from './verdict.js';
import { markdownOpening } from './report-markdown.js';

export const BOARD_SHARE_KILL = 0.2;
export const BOARD_KILL_CONDITION =
  `KILL if fewer than ${BOARD_SHARE_KILL * 100}% of completed tasks get a machine-detectable outcome (reopened, a revert of its commits, ` +
  'a linked bug, a recorded forge-reflect outcome) inside the window after completion. INCONCLUSIVE with no completed tasks.';

export type OutcomeKind = 'reopened' | 'revert' | 'linked_bug' | 'outcome';

export interface BoardTask {
  id: string;
  /** Epoch ms. */
  completed_at: number;
}

export interface BoardEvent {
  task: string;
  kind: OutcomeKind;
  at: number;
  /** What the event says: reopened/revert/bug say wrong; an outcome says what it recorded. */
  correct: boolean;
}

export interface BoardData {
  tasks: BoardTask[];
  events: BoardEvent[];
  /** Tasks seen but not completed. */
  open: number;
  bad: BadRow[];
  shapes: Record<string, number>;
}

const DONE = new Set(['done', 'completed', 'complete', 'closed', 'resolved', 'merged', 'shipped', 'finished']);
export function isDone(status: unknown): boolean {
  return typeof status === 'string' && DONE.has(status.trim().toLowerCase());
}

function time(value: unknown): number | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const ms = typeof value === 'number' ? value : Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

function eventKind(type: unknown): OutcomeKind | undefined {
  if (typeof type !== 'string') return undefined;
  const t = type
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  if (t === 'reopened' || t === 'reopen') return 'reopened';
  if (t === 'revert' || t === 'reverted') return 'revert';
  if (t === 'bug' || t === 'linked_bug' || t === 'bug_linked') return 'linked_bug';
  if (t === 'outcome') return 'outcome';
  return undefined;
}

function correctOf(value: unknown): boolean | undefined {
  if (value === true || value === 1 || value === 'true') return true;
  if (value === false || value === 0 || value === 'false') return false;
  return undefined;
}

interface GithubIssue {
  number: number;
  created: number;
  text: string;
  bug: boolean;
}

/** Records of one file: a JSON array, {tasks, events}, one object, or JSON Lines. */
export function boardRecords(text: string): { records: Array<{ line: number; value: unknown }>; bad: BadRow[] } {
  const trimmed = text.trim();
  if (trimmed === '') return { records: [], bad: [] };
  try {
    const doc = JSON.parse(trimmed) as unknown;
    if (Array.isArray(doc)) return { records: doc.map((value, i) => ({ line: i + 1, value })), bad: [] };
    if (doc && typeof doc === 'object') {
      const o = doc as Record<string, unknown>;
      if (Array.isArray(o.tasks) || Array.isArray(o.events)) {
        const all = [...((o.tasks as unknown[]) ?? []), ...((o.events as unknown[]) ?? [])];
        return { records: all.map((value, i) => ({ line: i + 1, value })), bad: [] };
      }
      return { records: [{ line: 1, value: doc }], bad: [] };
    }
  } catch {
    // JSON Lines, below
  }
  const records: Array<{ line: number; value: unknown }> = [];
  const bad: BadRow[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    if (raw.trim() === '') return;
    try {
      records.push({ line: i + 1, value: JSON.parse(raw) });
    } catch {
      bad.push({ line: i + 1, reason: 'not JSON' });
    }
  });
  return { records, bad };
}

/** Reads board records of any of the shapes above into tasks and events. */
export function readBoard(text: string, data: BoardData = { tasks: [], events: [], open: 0, bad: [], shapes: {} }): BoardData {
  const { records, bad } = boardRecords(text);
  data.bad.push(...bad);
  const issues: GithubIssue[] = [];
  const shape = (s: string) => (data.shapes[s] = (data.shapes[s] ?? 0) + 1);
  for (const { line, value } of records) {
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      data.bad.push({ line, reason: 'not a JSON object' });
      continue;
    }
    const r = value as Record<string, unknown>;
    const issue = r.issue as Record<string, unknown> | undefined;
    if (typeof r.event === 'string' && issue && typeof issue.number === 'number') {
      shape('github_event');
      const at = time(r.created_at);
      if (r.event === 'reopened' && at !== undefined) data.events.push({ task: `#${issue.number}`, kind: 'reopened', at, correct: false });
      continue;
    }
    if (typeof r.number === 'number' && typeof r.state === 'string') {
      if (r.pull_request !== undefined) {
        shape('github_pull_request_skipped');
        continue;
      }
      shape('github_issue');
      const labels = Array.isArray(r.labels) ? r.labels.map((l) => (typeof l === 'string' ? l : String((l as { name?: unknown })?.name ?? ''))) : [];
      issues.push({
        number: r.number,
        created: time(r.created_at) ?? Number.NaN,
        text: `${String(r.title ?? '')}\n${String(r.body ?? '')}`,
        bug: labels.some((l) => /bug|regression|defect/i.test(l)),
      });
      const closed = time(r.closed_at);
      if (r.state === 'closed' && r.state_reason !== 'not_planned' && closed !== undefined) data.tasks.push({ id: `#${r.number}`, completed_at: closed });
      else data.open++;
      continue;
    }
    const taskRef = r.task_id ?? r.task ?? r.task_ref;
    if (typeof taskRef === 'string' || typeof taskRef === 'number') {
      const at = time(r.at ?? r.created_at);
      const kind = eventKind(r.type ?? r.event) ?? (r.correct !== undefined && r.type === undefined && r.event === undefined ? 'outcome' : undefined);
      const correct = kind === 'outcome' ? correctOf(r.correct) : false;
      if (at === undefined || kind === undefined || correct === undefined) {
        data.bad.push({ line, reason: 'an event needs a known type (reopened, revert, bug, outcome), an ISO time `at`, and `correct` for an outcome' });
        continue;
      }
      shape(r.source !== undefined && kind === 'outcome' ? 'forge_reflect_outcome' : 'generic_event');
      data.events.push({ task: String(taskRef), kind, at, correct });
      continue;
    }
    if ((typeof r.id === 'string' || typeof r.id === 'number') && (r.status !== undefined || r.completed_at !== undefined)) {
      shape('generic_task');
      const id = String(r.id);
      const completed = time(r.completed_at);
      if (completed !== undefined && (r.status === undefined || isDone(r.status))) data.tasks.push({ id, completed_at: completed });
      else data.open++;
      for (const e of Array.isArray(r.events) ? (r.events as Array<Record<string, unknown>>) : []) {
        const kind = eventKind(e?.type ?? e?.event);
        const at = time(e?.at ?? e?.created_at);
        const correct = kind === 'outcome' ? correctOf(e?.correct) : false;
        if (kind !== undefined && at !== undefined && correct !== undefined) data.events.push({ task: id, kind, at, correct });
      }
      continue;
    }
    data.bad.push({ line, reason: 'not a task, an outcome event, a GitHub issue or a GitHub issue event' });
  }
  // Linked bugs: a bug-labelled issue that mentions #N, filed after N was closed.
  for (const bug of issues.filter((i) => i.bug && Number.isFinite(i.created))) {
    for (const m of bug.text.matchAll(/(?:^|[^\w&])#(\d+)\b/g)) {
      const n = Number(m[1]);
      if (n !== bug.number) data.events.push({ task: `#${n}`, kind: 'linked_bug', at: bug.created, correct: false });
    }
  }
  return data;
}

export interface BoardReport {
  analysis: 'board-history';
  kill_condition: string;
  verdict: Verdict;
  reason: string;
  window_days: number;
  completed: number;
  open: number;
  with_signal: number;
  share: number | null;
  right: number;
  wrong: number;
  by_kind: Record<OutcomeKind, number>;
  shapes: Record<string, number>;
  examples: Array<{ task: string; kind: OutcomeKind; completed_at: string; at: string; correct: boolean }>;
  bad_rows: { count: number; lines: BadRow[] };
}

export function analyzeBoard(data: BoardData, windowMs: number): BoardReport {
  const byTask = new Map<string, BoardEvent[]>();
  for (const e of data.events) {
    let list = byTask.get(e.task);
    if (!list) byTask.set(e.task, (list = []));
    list.push(e);
  }
  const byKind: Record<OutcomeKind, number> = { reopened: 0, revert: 0, linked_bug: 0, outcome: 0 };
  let withSignal = 0;
  let right = 0;
  let wrong = 0;
  const examples: BoardReport['examples'] = [];
  // A task completed more than once counts once, at its first completion.
  const tasks = new Map<string, BoardTask>();
  for (const t of data.tasks) {
    const old = tasks.get(t.id);
    if (!old || t.completed_at < old.completed_at) tasks.set(t.id, t);
  }
  for (const t of tasks.values()) {
    const hits = (byTask.get(t.id) ?? []).filter((e) => e.at > t.completed_at && e.at <= t.completed_at + windowMs).sort((a, b) => a.at - b.at);
    const first = hits[0];
    if (!first) continue;
    withSignal++;
    byKind[first.kind]++;
    if (first.correct) right++;
    else wrong++;
    if (examples.length < 10) {
      examples.push({
        task: t.id,
        kind: first.kind,
        completed_at: new Date(t.completed_at).toISOString(),
        at: new Date(first.at).toISOString(),
        correct: first.correct,
      });
    }
  }
  const completed = tasks.size;
  const share = completed === 0 ? null : withSignal / completed;
  let verdict: Verdict;
  let reason: string;
  if (share === null) [verdict, reason] = ['INCONCLUSIVE', 'no completed tasks'];
  else if (share < BOARD_SHARE_KILL)
    [verdict, reason] = ['KILL', `${withSignal} of ${completed} completed tasks (${(share * 100).toFixed(1)}%) have a detectable outcome`];
  else [verdict, reason] = ['CONTINUE', `${withSignal} of ${completed} completed tasks (${(share * 100).toFixed(1)}%) have a detectable outcome`];
  return {
    analysis: 'board-history',
    kill_condition: BOARD_KILL_CONDITION,
    verdict,
    reason,
    window_days: windowMs / 86_400_000,
    completed,
    open: data.open,
    with_signal: withSignal,
    share,
    right,
    wrong,
    by_kind: byKind,
    shapes: data.shapes,
    examples,
    bad_rows: { count: data.bad.length, lines: data.bad.slice(0, 50) },
  };
}

export function renderBoardMarkdown(r: BoardReport): string {
  const lines = [
    ...markdownOpening('P3: machine-detectable outcomes of completed tasks', r),
    `| completed | with an outcome | share | right | wrong | reopened | revert | linked bug | recorded outcome |`,
    '|---|---|---|---|---|---|---|---|---|',
    `| ${r.completed} | ${r.with_signal} | ${r.share === null ? 'n/a' : `${(r.share * 100).toFixed(1)}%`} | ${r.right} | ${r.wrong} | ${r.by_kind.reopened} | ${r.by_kind.revert} | ${r.by_kind.linked_bug} | ${r.by_kind.outcome} |`,
    '',
    `Window: ${r.window_days} days. Records by shape: ${
      Object.entries(r.shapes)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none'
    }.`,
  ];
  if (r.bad_rows.count > 0) lines.push(`Skipped ${r.bad_rows.count} bad record(s): ${r.bad_rows.lines.map((b) => `line ${b.line} (${b.reason})`).join('; ')}`);
  return `${lines.join('\n')}\n`;
}
