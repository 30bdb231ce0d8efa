/**
 * Builds a reflection.v1 sidecar from what the Stop hook gathered: git's lists of changed files,
 * the optional self-report text, and the ids. Pure: no IO, no clock, no environment.
 */
import {
  reflectionV1Schema,
  selfReportInputSchema,
  type ReflectionMode,
  type ReflectionV1Dto,
  type SelfReportInputDto,
} from '@forge-reflect/reflection-types';
import { evaluateRiskFloor } from '@forge-reflect/risk-floor';

export interface SidecarFacts {
  /** `git diff --numstat -z --no-renames <base>` output, or null when git failed or there is no repo. */
  numstat: string | null;
  /** `git ls-files --others --exclude-standard -z` output, or null when git failed. */
  untracked: string | null;
  /** The self-report file as read: absent, its text, or why it could not be read. */
  selfReport: SelfReportFile;
  sessionId: string;
  taskRef: string;
  agent: string;
  repo: string;
  timestamp: string;
  mode: ReflectionMode;
  attempt: number;
  threshold: number;
}

export type SelfReportStatus = 'ok' | 'absent' | 'invalid';

export type SelfReportFile = { kind: 'absent' } | { kind: 'text'; text: string } | { kind: 'unreadable'; reason: string };

export interface BuiltSidecar {
  sidecar: ReflectionV1Dto;
  selfReport: SelfReportStatus;
  /** Why the self-report was refused, when it was. */
  selfReportReason?: string;
  insertions: number;
  deletions: number;
}

export interface ChangedFiles {
  files: string[];
  insertions: number;
  deletions: number;
}

/** Tracked changes (numstat) and untracked files, as one sorted list without repeats. */
export function parseChangedFiles(numstat: string, untracked: string): ChangedFiles {
  const files = new Set<string>();
  let insertions = 0;
  let deletions = 0;
  for (const record of numstat.split('\0')) {
    if (record === '') continue;
    const first = record.indexOf('\t');
    const second = record.indexOf('\t', first + 1);
    if (first < 0 || second < 0) continue;
    const added = Number(record.slice(0, first));
    const removed = Number(record.slice(first + 1, second));
    if (Number.isInteger(added)) insertions += added;
    if (Number.isInteger(removed)) deletions += removed;
    const path = record.slice(second + 1).replace(/^\n/, '');
    if (path !== '') files.add(path);
  }
  for (const path of untracked.split('\0')) if (path !== '') files.add(path);
  return { files: [...files].sort(), insertions, deletions };
}

function readSelfReport(
  file: SelfReportFile,
  sessionId: string,
): { status: SelfReportStatus; value?: SelfReportInputDto; reason?: string } {
  if (file.kind === 'absent') return { status: 'absent' };
  if (file.kind === 'unreadable') return { status: 'invalid', reason: file.reason };
  let raw: unknown;
  try {
    raw = JSON.parse(file.text);
  } catch (error) {
    return { status: 'invalid', reason: `not JSON: ${(error as Error).message}` };
  }
  const parsed = selfReportInputSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `/${issue.path.join('/')}` : '/';
    return { status: 'invalid', reason: `${where}: ${issue?.message ?? 'invalid'}` };
  }
  if (parsed.data.session_id !== undefined && parsed.data.session_id !== sessionId) {
    return { status: 'invalid', reason: `written for session ${parsed.data.session_id}, not ${sessionId}` };
  }
  return { status: 'ok', value: parsed.data };
}

export function buildSidecar(facts: SidecarFacts): BuiltSidecar {
  const gitOk = facts.numstat !== null && facts.untracked !== null;
  const changed = parseChangedFiles(facts.numstat ?? '', facts.untracked ?? '');
  const risk = evaluateRiskFloor(
    { filesChanged: changed.files, insertions: changed.insertions, deletions: changed.deletions },
    { threshold: facts.threshold },
  );
  const report = readSelfReport(facts.selfReport, facts.sessionId);
  const sidecar: ReflectionV1Dto = reflectionV1Schema.parse({
    schema: 'reflection.v1',
    task_ref: facts.taskRef,
    agent: facts.agent,
    session_id: facts.sessionId,
    timestamp: facts.timestamp,
    repo: facts.repo,
    confidence: report.value?.confidence ?? null,
    most_likely_wrong: report.value?.most_likely_wrong ?? null,
    known_not_in_diff: report.value?.known_not_in_diff ?? null,
    risk,
    files_changed: changed.files,
    provenance: {
      source: 'stop-hook',
      reflection_attempt: facts.attempt,
      degraded: !gitOk || report.status !== 'ok',
      reflection_mode: facts.mode,
    },
  });
  return {
    sidecar,
    selfReport: report.status,
    ...(report.reason === undefined ? {} : { selfReportReason: report.reason }),
    insertions: changed.insertions,
    deletions: changed.deletions,
  };
}
