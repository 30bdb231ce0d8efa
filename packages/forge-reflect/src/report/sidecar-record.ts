/**
 * One sidecar file as the report sees it: its fields when it is a valid reflection.v1, or the
 * reason it is not. Pure: the caller reads the file. Checked by the validator generated from the
 * committed schema (as the Stop hook checks what it writes): no zod on the report's path.
 */
import type { ReflectionV1Dto, ReviewSurface } from '@forge-reflect/reflection-types';
import { sidecarProblems } from '../sidecar/schema-check.js';

export interface SidecarRecord {
  path: string;
  valid: boolean;
  /** Why the file is not a valid sidecar (valid = false). */
  error: string | null;
  timestamp: string | null;
  task_ref: string | null;
  agent: string | null;
  session_id: string | null;
  repo: string | null;
  surface: ReviewSurface | null;
  score: number | null;
  needs_review: boolean | null;
  confidence: number | null;
  degraded: boolean | null;
  mode: string | null;
  attempt: number | null;
  files: string[];
}

function invalid(path: string, error: string): SidecarRecord {
  return {
    path,
    valid: false,
    error,
    timestamp: null,
    task_ref: null,
    agent: null,
    session_id: null,
    repo: null,
    surface: null,
    score: null,
    needs_review: null,
    confidence: null,
    degraded: null,
    mode: null,
    attempt: null,
    files: [],
  };
}

export function recordFromText(path: string, text: string): SidecarRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return invalid(path, `not JSON: ${(error as Error).message}`);
  }
  const problem = sidecarProblems(raw)[0];
  if (problem) return invalid(path, `not a valid reflection.v1: ${problem.path} ${problem.message}`);
  const s = raw as ReflectionV1Dto;
  return {
    path,
    valid: true,
    error: null,
    timestamp: s.timestamp,
    task_ref: s.task_ref,
    agent: s.agent,
    session_id: s.session_id,
    repo: s.repo,
    surface: s.risk.surface,
    score: s.risk.score,
    needs_review: s.risk.needs_review,
    confidence: s.confidence,
    degraded: s.provenance.degraded,
    mode: s.provenance.reflection_mode,
    attempt: s.provenance.reflection_attempt,
    files: s.files_changed,
  };
}
