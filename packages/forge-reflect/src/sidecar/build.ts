/**
 * Builds a reflection.v1 sidecar from what the Stop hook gathered: git's lists of changed files,
 * the self-report (the final answer's block or the file, already chosen), and the ids. Pure: no
 * IO, no clock, no environment. Both the self-report and the sidecar are checked against their
 * committed JSON Schemas by generated validators (schema-check.ts): no zod on the hook's path.
 */
import type { ReflectionMode, ReflectionV1Dto, SelfReportInputDto } from '@forge-reflect/reflection-types';
import { evaluateRiskFloor } from '@forge-reflect/risk-floor';
import { redactText } from '../log/redact.js';
import { selfReportInputProblems, sidecarProblems } from './schema-check.js';

export interface SidecarFacts {
  /**
   * Every changed file git listed (in any order, repeats and empty names allowed), or null when
   * they could not be listed (git failed, or there is no repo).
   */
  files: readonly string[] | null;
  /** Why the list may hold more than the session's own changes (no snapshot), added to risk.reason. */
  listingNote?: string;
  /** Why the changed files could not be listed; the floor then fails closed (needs_review). */
  blindReason?: string;
  /** Why `files` may miss some changed files (it holds what was seen); the floor then fails closed too. */
  incompleteReason?: string;
  /** The self-report as read (the final answer's block or the file): absent, its text, or why it cannot be used. */
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
}

/**
 * The changed files as one sorted list, without repeats or empty names: sorted first, then each
 * name kept once (git lists them nearly in order, so the sort is close to one pass; a Set would
 * hash each name).
 */
export function sortedFiles(files: readonly string[]): string[] {
  const sorted = files.slice().sort();
  const out: string[] = [];
  let last = '';
  for (const file of sorted) {
    if (file !== last) out.push(file);
    last = file;
  }
  return out;
}

/** Longest self-report string kept (UTF-16 code units); a longer one is cut and marked. */
export const SELF_REPORT_STRING_MAX = 4096;
export const CUT_MARK = '… [cut]';
/** Keys that could reach an object's prototype: dropped from the self-report before it is checked. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** A UTF-16 code unit cleanText removes: C0 but tab and newline, DEL, C1, the bidi overrides. */
function isControl(c: number): boolean {
  return (c <= 0x1f && c !== 0x09 && c !== 0x0a) || (c >= 0x7f && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

/**
 * Control characters (C0 but tab and newline, DEL, C1, and the bidi overrides) removed, so a report
 * printed to a terminal cannot be steered by escape sequences; then cut to `max` with a mark.
 * A loop, not a regex: the Stop hook's helper runs this in a fresh process at every turn, where a
 * regex is compiled at its first use; a text without such a character comes back as it is.
 */
export function cleanText(text: string, max = SELF_REPORT_STRING_MAX): string {
  let clean = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    if (!isControl(text.charCodeAt(i))) continue;
    clean += text.slice(from, i);
    from = i + 1;
  }
  clean = from === 0 ? text : clean + text.slice(from);
  if (clean.length <= max) return clean;
  let end = max - CUT_MARK.length;
  const code = clean.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--; // never split a surrogate pair
  return `${clean.slice(0, end)}${CUT_MARK}`;
}

/**
 * A copy of the parsed self-report with the prototype keys dropped and every string cleaned and
 * capped, one level into `most_likely_wrong`. Deeper values are left for the schema to refuse;
 * nothing here recurses, so a depth bomb costs nothing.
 */
function sanitizeSelfReport(raw: unknown): unknown {
  const clean = (value: unknown, depth: number): unknown => {
    // Secrets the agent pasted (a key, a password=…) are redacted like the event log's, then capped.
    if (typeof value === 'string') return cleanText(redactText(value));
    if (depth > 0 || value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(value)) {
      if (PROTOTYPE_KEYS.has(key)) continue;
      out[key] = clean((value as Record<string, unknown>)[key], depth + 1);
    }
    return { ...out };
  };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(raw)) {
    if (PROTOTYPE_KEYS.has(key)) continue;
    out[key] = clean((raw as Record<string, unknown>)[key], 0);
  }
  return out;
}

function readSelfReport(file: SelfReportFile, sessionId: string): { status: SelfReportStatus; value?: SelfReportInputDto; reason?: string } {
  if (file.kind === 'absent') return { status: 'absent' };
  if (file.kind === 'unreadable') return { status: 'invalid', reason: file.reason };
  let raw: unknown;
  try {
    raw = JSON.parse(file.text);
  } catch (error) {
    return { status: 'invalid', reason: `not JSON: ${cleanText((error as Error).message, 300)}` };
  }
  const value = sanitizeSelfReport(raw);
  // Every problem, up to three, so one refusal says all there is to fix.
  const problems = selfReportInputProblems(value);
  if (problems.length > 0) {
    const said = problems.slice(0, 3).map((p) => `${cleanText(p.path, 200)}: ${cleanText(p.message, 300)}`);
    if (problems.length > 3) said.push(`and ${problems.length - 3} more`);
    return { status: 'invalid', reason: said.join('; ') };
  }
  const report = value as SelfReportInputDto;
  if (report.session_id !== undefined && report.session_id !== cleanText(sessionId, 256)) {
    return { status: 'invalid', reason: `written for session ${cleanText(report.session_id, 200)}, not ${cleanText(sessionId, 200)}` };
  }
  // In the schema's key order, whatever order the agent wrote them in.
  const { confidence, most_likely_wrong: wrong, known_not_in_diff: known } = report;
  return { status: 'ok', value: { confidence, most_likely_wrong: { surface: wrong.surface, description: wrong.description }, known_not_in_diff: known } };
}

export function buildSidecar(facts: SidecarFacts): BuiltSidecar {
  const gitOk = facts.files !== null;
  const files = sortedFiles(facts.files ?? []);
  const floor = evaluateRiskFloor({ filesChanged: files }, { threshold: facts.threshold });
  const risk = { ...floor };
  if (gitOk && facts.listingNote) risk.reason += `; ${cleanText(facts.listingNote, 500)}`;
  // A floor that could not see what changed cannot say "no review": it fails closed.
  if (!gitOk) {
    risk.needs_review = true;
    risk.reason += `; review: ${cleanText(facts.blindReason || 'the changed files could not be listed', 500)}`;
  } else if (facts.incompleteReason) {
    risk.needs_review = true;
    risk.reason += `; review: ${cleanText(facts.incompleteReason, 500)}`;
  }
  const report = readSelfReport(facts.selfReport, facts.sessionId);
  const sidecar: ReflectionV1Dto = {
    schema: 'reflection.v1',
    task_ref: cleanText(facts.taskRef, 512),
    agent: cleanText(facts.agent, 256),
    session_id: cleanText(facts.sessionId, 256),
    timestamp: facts.timestamp,
    repo: cleanText(facts.repo, 256),
    confidence: report.value?.confidence ?? null,
    most_likely_wrong: report.value?.most_likely_wrong ?? null,
    known_not_in_diff: report.value?.known_not_in_diff ?? null,
    risk,
    files_changed: files,
    provenance: {
      source: 'stop-hook',
      reflection_attempt: facts.attempt,
      degraded: !gitOk || facts.incompleteReason !== undefined || report.status !== 'ok',
      reflection_mode: facts.mode,
    },
  };
  // Built here from checked parts, and checked whole all the same: a sidecar that breaks the schema
  // is never written (the hook's bash fallback writes a degraded one instead).
  const broken = sidecarProblems(sidecar)[0];
  if (broken) throw new Error(`the sidecar breaks reflection.v1 at ${broken.path}: ${broken.message}`);
  return {
    sidecar,
    selfReport: report.status,
    ...(report.reason === undefined ? {} : { selfReportReason: report.reason }),
  };
}
