import { closeSync, constants, fstatSync, ftruncateSync, linkSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import type { BuiltSidecar } from '../sidecar/build.js';
import type { Facts } from './facts.js';
import { readText } from './read-text.js';
import type { Chosen } from './self-report.js';

/**
 * Once the sidecar stands under its final name: the self-report file that went into it kept, the
 * reflection.written event spooled, the temp files given removed ($FORGE_H_REMOVE_INPUTS=1), then
 * the count written and the lock let go, in that order.
 */
export function settleTurn(env: Facts, final: string, chosen: Chosen, built: BuiltSidecar): void {
  if (chosen.source === 'file' && built.selfReport === 'ok' && env.FORGE_H_INPUT && env.FORGE_H_INPUT_KEEP) {
    renameQuietly(env.FORGE_H_INPUT, env.FORGE_H_INPUT_KEEP);
  }
  spoolWritten(env, {
    sidecar: final,
    session_id: env.FORGE_H_SESSION_ID || 'unknown',
    task_ref: env.FORGE_H_TASK_REF || 'unknown',
    degraded: built.sidecar.provenance.degraded,
    self_report: built.selfReport,
    self_report_source: chosen.source,
    // Why the answer gave no self-report, when the reader can say (Copilot CLI's transcript, a
    // model error).
    ...(chosen.note ? { self_report_note: chosen.note } : {}),
  });
  // Not before: until the sidecar stands, the hook's bash fallback may still need these (a sidecar
  // left at its temp name is the hook's to place).
  if (env.FORGE_H_REMOVE_INPUTS === '1')
    for (const input of [env.FORGE_H_PAYLOAD, env.FORGE_H_STATUS, env.FORGE_H_COMMITTED, env.FORGE_H_FIFO]) removeQuietly(input);
  finishTurn(env);
}

/**
 * Once the sidecar stands: the session's sidecar count ($FORGE_H_COUNT into $FORGE_H_COUNT_FILE,
 * rewritten in place, never through a link), then the session's lock let go ($FORGE_H_LOCK, only
 * while it still holds $FORGE_H_LOCK_OWNER), in that order, so the next Stop of the session counts
 * on. Saves the hook the `rm` of its lock; whatever fails here is the hook's to do (it sees that the
 * lock still names it).
 */
function finishTurn(env: Facts): void {
  const count = env.FORGE_H_COUNT ?? '';
  if (env.FORGE_H_COUNT_FILE && isCount(count)) {
    try {
      // Written over the old bytes, then cut to length: no O_TRUNC, which frees the file's block and
      // costs far more than a write in place. Cut only when the old text was longer (a count only
      // grows), so the truncate's costly first call is seldom paid.
      const fd = openSync(env.FORGE_H_COUNT_FILE, constants.O_WRONLY | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0), 0o600);
      try {
        const text = `${count}\n`;
        writeSync(fd, text, 0);
        if (fstatSync(fd).size > text.length) ftruncateSync(fd, text.length);
      } finally {
        closeSync(fd);
      }
    } catch {
      return; // the lock stays: the hook writes the count
    }
  }
  const lock = env.FORGE_H_LOCK;
  if (!lock || !env.FORGE_H_LOCK_OWNER) return;
  try {
    if (readText(lock) === `${env.FORGE_H_LOCK_OWNER}\n`) unlinkSync(lock);
  } catch {
    // gone, or not ours: nothing to let go
  }
}

/** A session count as the hook writes it: 1 to 999,999,999, no leading zero (a loop: no regex to compile). */
function isCount(text: string): boolean {
  if (text.length === 0 || text.length > 9 || text[0] === '0') return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** The self-report file that went into the sidecar, kept beside it (the hook's mv otherwise). */
function renameQuietly(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch {
    // still at its temp name: the hook moves it
  }
}

/**
 * Spools the reflection.written event, saving the hook an `mv`: the spool file is written under the
 * fresh temp name the hook chose ($FORGE_H_WRITTEN_TMP, never replaced), as the hook's envelope line
 * ($FORGE_H_WRITTEN_ENVELOPE) and the payload line, then renamed to $FORGE_H_WRITTEN_FINAL.
 * Anything short of that is the hook's to finish: it removes a half-written file and spools anew.
 */
function spoolWritten(env: Facts, payload: Record<string, unknown>): void {
  const temp = env.FORGE_H_WRITTEN_TMP;
  const final = env.FORGE_H_WRITTEN_FINAL;
  const envelope = env.FORGE_H_WRITTEN_ENVELOPE;
  if (!temp || !final || !envelope?.endsWith('\n')) return;
  try {
    const fd = openSync(temp, 'wx', 0o600);
    try {
      writeSync(fd, `${envelope}${JSON.stringify(payload)}\n`);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, final);
  } catch {
    // left for the hook
  }
}

function removeQuietly(path: string | undefined): void {
  if (!path) return;
  try {
    unlinkSync(path);
  } catch {
    // not there (no commits were listed, say): nothing to remove
  }
}

/**
 * Gives a complete file (the sidecar, the Stop event) its final name, saving the hook an `mv`: a
 * link that fails when the name is taken (a file or a planted link is never replaced nor followed),
 * then the temp name goes. When links are refused (a file system without them), or the file is gone
 * (the hook moved it first), the temp name is left to the hook.
 */
export function placeFile(temp: string, final: string): boolean {
  try {
    linkSync(temp, final);
  } catch {
    return false;
  }
  removeQuietly(temp); // placed either way; a temp name left over is swept by a later run
  return true;
}
