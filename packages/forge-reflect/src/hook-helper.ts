/**
 * The Stop hook's Node helper (bundled into hooks/lib/reflect-helper.cjs with its dependencies, so
 * the vendored hook needs no node_modules). The hook gathers the facts with git and bash, calls
 * this to evaluate the risk floor and check the self-report with the real schemas, and falls back
 * to its bash twin when node is missing, fails or is too slow.
 *
 * Input: environment variables FORGE_H_* (set by reflect-stop-hook.sh). Output: the sidecar JSON
 * written to $FORGE_H_OUT (created exclusively, 0600) and, with $FORGE_H_FINAL, linked to that name
 * when it is free (then the temp name is removed), and one status line on stdout:
 * `<ok|absent|invalid> <answer|file|none> [reason]`: what became of the self-report, and where it
 * came from (the final answer's `reflection` block, the self-report file, or neither). A refused
 * answer block is written to $FORGE_H_REJECTED_BLOCK for the hook to keep. With
 * $FORGE_H_REMOVE_INPUTS=1, the temp files it was given (payload, git status, committed list) are
 * removed once it has placed the sidecar under its final name, saving the hook an `rm`. Exit 0
 * only when the sidecar was written.
 */
import { closeSync, fstatSync, linkSync, openSync, readFileSync, readSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { REFLECTION_MODES, type ReflectionMode } from '@forge-reflect/reflection-types';
import { DEFAULT_THRESHOLD, parseThresholdText } from '@forge-reflect/risk-floor';
import { answerFromPayload, answerFromTranscriptTail, lastReflectionBlock } from './sidecar/answer-block.js';
import { buildSidecar, type SelfReportFile } from './sidecar/build.js';
import { changedFromStatus } from './sidecar/git-status.js';

const SELF_REPORT_MAX_BYTES = 256 * 1024;
/** How much of the transcript's end is read when the payload carries no final answer. */
const TRANSCRIPT_TAIL_BYTES = 1024 * 1024;

function readOrNull(path: string | undefined): string | null {
  if (!path) return null;
  try {
    // A Buffer decoded after the read: Node 20's readFileSync(path, 'utf8') took twice as long on
    // a 2.5 MB git status (20,000 changed files), ~40 ms against ~20.
    return readFileSync(path).toString('utf8');
  } catch {
    return null;
  }
}

function readSelfReportFile(path: string | undefined): SelfReportFile {
  if (!path) return { kind: 'absent' };
  let size: number;
  try {
    const stats = statSync(path);
    if (!stats.isFile()) return { kind: 'unreadable', reason: 'not a regular file' };
    size = stats.size;
  } catch {
    return { kind: 'absent' };
  }
  if (size > SELF_REPORT_MAX_BYTES) return { kind: 'unreadable', reason: `larger than ${SELF_REPORT_MAX_BYTES} bytes` };
  const text = readOrNull(path);
  return text === null ? { kind: 'unreadable', reason: 'cannot read' } : { kind: 'text', text };
}

/** The last `max` bytes of a regular file, or null. */
function readTail(path: string, max: number): string | null {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const stats = fstatSync(fd);
    if (!stats.isFile()) return null;
    const length = Math.min(max, stats.size);
    const buffer = Buffer.alloc(length);
    let read = 0;
    while (read < length) {
      const n = readSync(fd, buffer, read, length - read, stats.size - length + read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read).toString('utf8');
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The Stop payload from the hook's spool file: every byte after the envelope line. */
function readPayload(path: string | undefined): string | null {
  const text = readOrNull(path);
  if (text === null) return null;
  const newline = text.indexOf('\n');
  return newline < 0 ? null : text.slice(newline + 1);
}

function transcriptPath(payload: string): string | null {
  try {
    const raw = JSON.parse(payload) as Record<string, unknown>;
    const path = raw?.transcript_path;
    return typeof path === 'string' && path.startsWith('/') ? path : null;
  } catch {
    return null;
  }
}

type Chosen = { file: SelfReportFile; source: 'answer' | 'file' | 'none'; refusedBlock?: string };

/**
 * The self-report of this turn: the final answer's `reflection` block when there is one (from the
 * payload, else the transcript's tail), else the self-report file the hook took for this session.
 * A file that names no session and is older than the session's start is stale: refused.
 */
function chooseSelfReport(env: NodeJS.ProcessEnv): Chosen {
  const payload = readPayload(env.FORGE_H_PAYLOAD);
  let answer = payload === null ? null : answerFromPayload(payload);
  if (answer === null && payload !== null) {
    const transcript = transcriptPath(payload);
    const tail = transcript === null ? null : readTail(transcript, TRANSCRIPT_TAIL_BYTES);
    if (tail !== null) answer = answerFromTranscriptTail(tail);
  }
  const block = answer === null ? { kind: 'none' as const } : lastReflectionBlock(answer);
  if (block.kind === 'block') {
    if (Buffer.byteLength(block.text) > SELF_REPORT_MAX_BYTES) {
      return { file: { kind: 'unreadable', reason: `the reflection block is larger than ${SELF_REPORT_MAX_BYTES} bytes` }, source: 'answer', refusedBlock: block.text.slice(0, SELF_REPORT_MAX_BYTES) };
    }
    return { file: { kind: 'text', text: block.text }, source: 'answer', refusedBlock: block.text };
  }
  if (block.kind === 'unterminated') {
    return { file: { kind: 'unreadable', reason: 'the reflection block in the final answer is not closed with ```' }, source: 'answer', refusedBlock: block.text.slice(0, SELF_REPORT_MAX_BYTES) };
  }
  if (!env.FORGE_H_INPUT) return { file: { kind: 'absent' }, source: 'none' };
  const file = readSelfReportFile(env.FORGE_H_INPUT);
  const startedUs = Number(env.FORGE_H_SESSION_START_US);
  if (file.kind === 'text' && Number.isSafeInteger(startedUs) && startedUs > 0 && !namesSession(file.text)) {
    let writtenMs = Infinity;
    try {
      writtenMs = statSync(env.FORGE_H_INPUT).mtimeMs;
    } catch {
      // unreadable: judged by the schema below
    }
    if (writtenMs * 1000 < startedUs) {
      return { file: { kind: 'unreadable', reason: 'stale: written before this session started and names no session (forge-reflect self-report records the session id)' }, source: 'file' };
    }
  }
  return { file, source: 'file' };
}

function namesSession(text: string): boolean {
  try {
    const raw = JSON.parse(text) as Record<string, unknown>;
    return typeof raw?.session_id === 'string' && raw.session_id !== '';
  } catch {
    return false;
  }
}

/** The session's changed files, NUL-separated: from the hook's one `git status`, plus the commits since the base when there was no snapshot. */
function changedList(env: NodeJS.ProcessEnv): string | null {
  const status = readOrNull(env.FORGE_H_STATUS);
  if (status === null) return null;
  const { files } = changedFromStatus(status, env.FORGE_H_STATUS_BASE === 'snapshot' ? 'snapshot' : 'head');
  const committed = readOrNull(env.FORGE_H_COMMITTED);
  return committed === null ? files.join('\0') : `${files.join('\0')}\0${committed}`;
}

function main(env: NodeJS.ProcessEnv): number {
  const out = env.FORGE_H_OUT;
  if (!out) return 2;
  const mode = (REFLECTION_MODES as readonly string[]).includes(env.FORGE_H_MODE ?? '') ? (env.FORGE_H_MODE as ReflectionMode) : 'solo';
  const attempt = Number(env.FORGE_H_ATTEMPT);
  const gitOk = env.FORGE_H_GIT_OK === '1';
  const chosen = chooseSelfReport(env);
  const built = buildSidecar({
    changed: gitOk ? changedList(env) : null,
    untracked: gitOk ? '' : null,
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
    threshold: parseThresholdText(env.REFLECTION_RISK_THRESHOLD ?? '') ?? DEFAULT_THRESHOLD,
  });
  const fd = openSync(out, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(built.sidecar, null, 2)}\n`);
  } finally {
    closeSync(fd);
  }
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
  const reason = (built.selfReportReason ?? '').replace(/[\r\n]+/g, ' ').slice(0, 500);
  // The status goes out before the sidecar is placed: a helper stopped in between leaves the hook
  // a status and a sidecar still to place, never a placed sidecar without its status.
  writeSync(1, `${built.selfReport} ${chosen.source}${reason ? ` ${reason}` : ''}\n`);
  const placed = env.FORGE_H_FINAL ? placeSidecar(out, env.FORGE_H_FINAL) : false;
  // Last, and only once the sidecar stands under its final name: until then the hook's bash
  // fallback may still need these (a sidecar left at its temp name is the hook's to place).
  if (placed && env.FORGE_H_REMOVE_INPUTS === '1') for (const input of [env.FORGE_H_PAYLOAD, env.FORGE_H_STATUS, env.FORGE_H_COMMITTED]) removeQuietly(input);
  return 0;
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
 * Gives the written sidecar its final name, saving the hook an `mv`: a link that fails when the
 * name is taken (a file or a planted link is never replaced nor followed), then the temp name goes.
 * When links are refused (a file system without them), the temp file stays for the hook to move.
 */
function placeSidecar(temp: string, final: string): boolean {
  try {
    linkSync(temp, final);
  } catch {
    return false;
  }
  unlinkSync(temp);
  return true;
}

try {
  process.exitCode = main(process.env);
} catch (error) {
  process.stderr.write(`reflect-helper: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
