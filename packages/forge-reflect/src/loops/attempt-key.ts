/**
 * The reflection-attempt hand-off between `forge-reflect bounce` and the Stop hook (orchestrated
 * mode): after each bounce decision, `<state dir>/attempts/<key>.attempt` holds the decimal
 * integer `bounces + 1` for the task and a newline, so the task's next sidecar carries
 * `reflection_attempt = bounces + 1`.
 *
 * key = the task_ref's UTF-8 bytes, each byte outside [A-Za-z0-9-] written as `_` plus two
 * lowercase hex digits (`acme#42` → `acme_2342`), truncated to 200 characters.
 */
import { writeAtomic } from '../atomic-write.js';
import { join } from 'node:path';
import { ensurePrivateDir } from '../state-dir.js';

export const ATTEMPT_KEY_MAX = 200;
export const ATTEMPT_SUFFIX = '.attempt';

export function attemptKey(taskRef: string): string {
  let key = '';
  for (const byte of Buffer.from(taskRef, 'utf8')) {
    const keep = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || byte === 0x2d;
    key += keep ? String.fromCharCode(byte) : `_${byte.toString(16).padStart(2, '0')}`;
    if (key.length >= ATTEMPT_KEY_MAX) break;
  }
  return key.slice(0, ATTEMPT_KEY_MAX);
}

export function attemptsDirOf(stateDir: string): string {
  return join(stateDir, 'attempts');
}

export function attemptFileOf(stateDir: string, taskRef: string): string {
  return join(attemptsDirOf(stateDir), `${attemptKey(taskRef)}${ATTEMPT_SUFFIX}`);
}

/** Writes the attempt file atomically (temp file in the same folder, 0600, then rename; folder 0700). */
export function writeAttemptFile(stateDir: string, taskRef: string, attempt: number): string {
  ensurePrivateDir(attemptsDirOf(stateDir));
  const target = attemptFileOf(stateDir, taskRef);
  writeAtomic(target, `${attempt}\n`, 0o600);
  return target;
}
