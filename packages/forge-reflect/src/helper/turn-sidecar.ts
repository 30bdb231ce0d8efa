import { closeSync, openSync, writeSync } from 'node:fs';
import type { ReflectionMode } from '@forge-reflect/reflection-types';
import { REFLECTION_MODES } from '@forge-reflect/reflection-types/constants';
import { DEFAULT_THRESHOLD, parseThresholdText } from '@forge-reflect/risk-floor';
import { buildSidecar, type BuiltSidecar } from '../sidecar/build.js';
import type { ChangedList } from './changed-files.js';
import type { Facts } from './facts.js';
import type { Chosen } from './self-report.js';

/** The turn's sidecar, from the facts, the chosen self-report and the changed files (null: git failed). */
export function buildTurnSidecar(env: Facts, chosen: Chosen, listed: ChangedList | null): BuiltSidecar {
  const mode = (REFLECTION_MODES as readonly string[]).includes(env.FORGE_H_MODE ?? '') ? (env.FORGE_H_MODE as ReflectionMode) : 'solo';
  const attempt = Number(env.FORGE_H_ATTEMPT);
  const built = buildSidecar({
    files: listed?.files ?? null,
    ...(listed?.incomplete ? { incompleteReason: listed.incomplete } : {}),
    ...(env.FORGE_H_LISTING_NOTE ? { listingNote: env.FORGE_H_LISTING_NOTE } : {}),
    ...(env.FORGE_H_BLIND ? { blindReason: env.FORGE_H_BLIND } : {}),
    selfReport: chosen.file,
    sessionId: env.FORGE_H_SESSION_ID || 'unknown',
    taskRef: env.FORGE_H_TASK_REF || 'unknown',
    agent: env.FORGE_H_AGENT || 'unknown',
    repo: env.FORGE_H_REPO || 'unknown',
    timestamp: env.FORGE_H_TIMESTAMP ?? new Date().toISOString(),
    mode,
    attempt: Number.isInteger(attempt) && attempt >= 1 ? attempt : 1,
    // (unset, nearly always: no regex is built to read it)
    threshold: (env.REFLECTION_RISK_THRESHOLD ? parseThresholdText(env.REFLECTION_RISK_THRESHOLD) : undefined) ?? DEFAULT_THRESHOLD,
  });
  // A turn cut short by a model error is degraded even with a self-report file: the agent wrote it
  // before the turn ended, not about the turn's end.
  if (chosen.errorEnd) built.sidecar.provenance.degraded = true;
  return built;
}

/** Writes the sidecar to its temp name `out`, created exclusively (0600). */
export function writeSidecar(out: string, built: BuiltSidecar): void {
  const fd = openSync(out, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(built.sidecar, null, 2)}\n`);
  } finally {
    closeSync(fd);
  }
}

/** A refused answer block, written to $FORGE_H_REJECTED_BLOCK for the hook to keep. */
export function keepRefusedBlock(env: Facts, chosen: Chosen, built: BuiltSidecar): void {
  if (built.selfReport === 'invalid' && chosen.source === 'answer' && chosen.refusedBlock !== undefined && env.FORGE_H_REJECTED_BLOCK) {
    try {
      const keep = openSync(env.FORGE_H_REJECTED_BLOCK, 'wx', 0o600);
      try {
        writeSync(keep, chosen.refusedBlock);
      } finally {
        closeSync(keep);
      }
    } catch {
      // kept only when it can be; the sidecar says it was refused either way
    }
  }
}

/** The status line for the hook: `<ok|absent|invalid> <answer|file|none> [reason]`. */
export function statusLine(chosen: Chosen, built: BuiltSidecar): string {
  // (no reason, nearly always: no regex is built for it)
  const reason = built.selfReportReason ? built.selfReportReason.replace(/[\r\n]+/g, ' ').slice(0, 500) : '';
  return `${built.selfReport} ${chosen.source}${reason ? ` ${reason}` : ''}\n`;
}
