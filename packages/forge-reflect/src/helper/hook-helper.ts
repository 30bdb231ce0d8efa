/**
 * The Stop hook's Node helper (bundled into hooks/lib/reflect-helper.cjs with its dependencies, so
 * the vendored hook needs no node_modules). The hook gathers the facts with git and bash, calls
 * this to evaluate the risk floor and check the self-report with the real schemas, and falls back
 * to its bash twin when node is missing, fails or is too slow.
 *
 * The hook starts it first and sends the facts once git has answered, so node's own start overlaps
 * the hook's work: everything is loaded before stdin is read.
 *
 * Input: the facts FORGE_H_* as NUL-separated `NAME=value` records on stdin, read up to the end
 * record FORGE_H_END, or to stdin's end when none comes (an empty stdin: the hook gave up, nothing
 * is written; see parseFacts). Output: the sidecar JSON
 * written to $FORGE_H_OUT (created exclusively, 0600) and, with $FORGE_H_FINAL, linked to that name
 * when it is free (then the temp name is removed), and one status line on stdout:
 * `<ok|absent|invalid> <answer|file|none> [reason]`: what became of the self-report, and where it
 * came from (the final answer's `reflection` block, the self-report file, or neither). A refused
 * answer block is written to $FORGE_H_REJECTED_BLOCK for the hook to keep. Once the sidecar stands,
 * a self-report file that went into it is moved to $FORGE_H_INPUT_KEEP and the reflection.written
 * event is spooled (see spoolWritten). Before all that, and even when no other fact comes (the hook
 * stopped early or was killed), the Stop event the hook wrote to $FORGE_H_STOP_TMP is moved to
 * $FORGE_H_STOP_FINAL (the hook sends those two first, the rest once git has answered). With
 * $FORGE_H_REMOVE_INPUTS=1, the temp files it was given (payload, git status, committed list, and
 * on bash 3.2 the FIFO it reads the facts from, $FORGE_H_FIFO) are removed once it has placed the sidecar under its final name, saving the hook an `rm`; then the
 * session's count is written and its lock let go (finishTurn). After the end record the hook holds
 * stdin open until it exits: once stdin ends, the helper starts the drain the hook names
 * ($FORGE_H_DRAIN_CLI; see startDrain). Exit 0 only when the sidecar was written.
 */
import { closeSync, constants, fstatSync, ftruncateSync, linkSync, openSync, readSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import type { ReflectionMode } from '@forge-reflect/reflection-types';
import { REFLECTION_MODES } from '@forge-reflect/reflection-types/constants';
import { DEFAULT_THRESHOLD, parseThresholdText } from '@forge-reflect/risk-floor';
import { answerFromPayload, answerFromTranscriptTail, lastReflectionBlock } from '../sidecar/answer-block.js';
import { buildSidecar, type SelfReportFile } from '../sidecar/build.js';
import { changedFromStatus } from '../sidecar/git-status.js';
import { readRegularText } from '../regular-file.js';
import { copilotAnswerFromTail, isCopilotTranscript, type CopilotAnswer } from '../runtimes/copilot-transcript.js';
import { END_RECORD, parseFacts, type Facts as HookFacts } from './protocol.js';

/** The facts from the hook (protocol.ts), and the user's REFLECTION_RISK_THRESHOLD from the environment. */
type Facts = HookFacts & { REFLECTION_RISK_THRESHOLD?: string };

const SELF_REPORT_MAX_BYTES = 256 * 1024;
/** How much of the transcript's end is read when the payload carries no final answer. */
const TRANSCRIPT_TAIL_BYTES = 1024 * 1024;

/**
 * The text of a regular file, or its last `max` bytes; null when it is missing, not a regular file
 * or unreadable (regular-file.ts: open, fstat and read, which the helper's start has already run
 * once, not readFileSync, whose first call is costly in a fresh process; non-blocking, so
 * a FIFO planted at the path cannot hold the helper at the open).
 */
function readText(path: string | undefined, max = Infinity): string | null {
  if (!path) return null;
  try {
    return readRegularText(path, max);
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
  const text = readText(path);
  return text === null ? { kind: 'unreadable', reason: 'cannot read' } : { kind: 'text', text };
}

/** The Stop payload from the hook's spool file: every byte after the envelope line. */
function readPayload(path: string | undefined): string | null {
  const text = readText(path);
  if (text === null) return null;
  const newline = text.indexOf('\n');
  return newline < 0 ? null : text.slice(newline + 1);
}

/** One line of a payload's error text for a note: control characters dropped, cut to `max`. */
function errorText(value: unknown, max: number): string {
  let text = '';
  if (typeof value === 'string') text = value;
  else if (value !== null && typeof value === 'object') {
    // Cline's `{name, message, stack}`: the name and message (the stack names the client's files).
    const { name, message } = value as Record<string, unknown>;
    text = [name, message].filter((part) => typeof part === 'string' && part !== '').join(': ');
  }
  text = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * Why the turn has no final answer, when it ended on a model error: Claude Code's and Qwen Code's
 * StopFailure (its last_assistant_message is the API error's text, never the agent's answer),
 * Cline's TaskError (`hookName` agent_error), Copilot CLI's SessionEnd with reason "error" (no
 * Stop). Null for any other payload.
 */
function errorEndNote(payload: string): string | null {
  // Every Stop comes through here: its payload is parsed a second time only when it may be one.
  const opencodeIdle = payload.includes('"session.idle"') && payload.includes('"error"');
  if (!opencodeIdle && !payload.includes('"StopFailure"') && !payload.includes('"agent_error"') && !payload.includes('"SessionEnd"')) return null;
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(payload) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (raw === null || typeof raw !== 'object') return null;
  let what: string;
  if (raw.hook_event_name === 'StopFailure') what = 'StopFailure';
  else if (raw.hookName === 'agent_error') what = 'TaskError';
  else if (raw.hook_event_name === 'SessionEnd' && raw.reason === 'error') what = 'Copilot CLI: ErrorOccurred, then SessionEnd with reason "error", no Stop';
  // The kit's opencode plugin puts the session.error it saw into the session.idle it sends.
  else if (opencodeIdle && raw.hook_event_name === 'session.idle' && typeof raw.error === 'string') what = 'opencode: session.error, then session.idle';
  else return null;
  // StopFailure's details are optional; its last_assistant_message is then the error as shown.
  const details = errorText(raw.error_details, 300) || (what === 'StopFailure' ? errorText(raw.last_assistant_message, 300) : '');
  const error = [errorText(raw.error, 100), details].filter((part) => part !== '').join(': ');
  return `the turn ended on an error (${what}${error ? `: ${error}` : ''}): there is no final answer`;
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

/** How long the helper waits for Copilot CLI to write the turn's answer (its transcript can lag the Stop hook). */
const COPILOT_ANSWER_WAIT_MS = 1500;
const COPILOT_POLL_MS = 25;

/**
 * The final answer from Copilot CLI's events.jsonl, read again (bounded) until it is written; with
 * a note saying why there is none when there is none to take.
 */
function copilotAnswer(path: string): { answer: string | null; note?: string } {
  const until = Date.now() + COPILOT_ANSWER_WAIT_MS;
  let found: CopilotAnswer = { answer: null, final: false, recognised: false };
  let tail: string | null = null;
  for (;;) {
    tail = readText(path, TRANSCRIPT_TAIL_BYTES);
    if (tail !== null) {
      found = copilotAnswerFromTail(tail);
      if (found.final) return { answer: found.answer };
      // Lines, but none of Copilot's: a changed format does not appear by waiting.
      if (!found.recognised && tail.includes('\n')) break;
    }
    if (Date.now() >= until) break;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, COPILOT_POLL_MS);
  }
  if (tail === null) return { answer: null, note: 'the Copilot CLI transcript could not be read' };
  if (!found.recognised)
    return { answer: null, note: "the transcript holds no line of Copilot CLI's events.jsonl format (type and data): no self-report read" };
  return { answer: null, note: `the turn's final answer was not in the Copilot CLI transcript within ${COPILOT_ANSWER_WAIT_MS} ms` };
}

/** `errorEnd`: the turn ended on a model error (the note says which): its sidecar is degraded whatever the self-report. */
type Chosen = { file: SelfReportFile; source: 'answer' | 'file' | 'none'; refusedBlock?: string; note?: string; errorEnd?: boolean };

/**
 * The self-report of this turn: the final answer's `reflection` block when there is one (from the
 * payload, else the transcript's tail), else the self-report file the hook took for this session.
 * A file that names no session and is older than the session's start is stale: refused.
 */
function chooseSelfReport(env: Facts): Chosen {
  const payload = readPayload(env.FORGE_H_PAYLOAD);
  // An error end is read for its note only: neither its payload nor the transcript holds an answer.
  const errorNote = payload === null ? null : errorEndNote(payload);
  if (errorNote !== null) return { ...chooseSelfReportFile(env), note: errorNote, errorEnd: true };
  let answer = payload === null ? null : answerFromPayload(payload);
  let note: string | undefined;
  if (answer === null && payload !== null) {
    const transcript = transcriptPath(payload);
    if (transcript !== null && isCopilotTranscript(transcript)) {
      ({ answer, note } = copilotAnswer(transcript));
    } else {
      const tail = transcript === null ? null : readText(transcript, TRANSCRIPT_TAIL_BYTES);
      if (tail !== null) answer = answerFromTranscriptTail(tail);
    }
  }
  const block = answer === null ? { kind: 'none' as const } : lastReflectionBlock(answer);
  if (block.kind === 'block') {
    if (Buffer.byteLength(block.text) > SELF_REPORT_MAX_BYTES) {
      return {
        file: { kind: 'unreadable', reason: `the reflection block is larger than ${SELF_REPORT_MAX_BYTES} bytes` },
        source: 'answer',
        refusedBlock: block.text.slice(0, SELF_REPORT_MAX_BYTES),
      };
    }
    return { file: { kind: 'text', text: block.text }, source: 'answer', refusedBlock: block.text };
  }
  if (block.kind === 'unterminated') {
    return {
      file: { kind: 'unreadable', reason: 'the reflection block in the final answer is not closed with ```' },
      source: 'answer',
      refusedBlock: block.text.slice(0, SELF_REPORT_MAX_BYTES),
    };
  }
  const chosen = chooseSelfReportFile(env);
  return note && chosen.source === 'none' ? { ...chosen, note } : chosen;
}

/** The self-report file the hook took for this session, when the answer gave none. */
function chooseSelfReportFile(env: Facts): Chosen {
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
      return {
        file: {
          kind: 'unreadable',
          reason: 'stale: written before this session started and names no session (forge-reflect self-report records the session id)',
        },
        source: 'file',
      };
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

/**
 * The session's changed files: from the hook's one `git status`, plus the commits since the base
 * when there was no snapshot (a NUL-separated list). Kept as an array: joining many paths into one
 * text and splitting it again costs more than the list itself.
 */
function changedList(env: Facts): { files: string[]; incomplete?: string } | null {
  const status = readText(env.FORGE_H_STATUS);
  if (status === null) return null;
  const { files, untrackedDirs } = changedFromStatus(status, env.FORGE_H_STATUS_BASE === 'snapshot' ? 'snapshot' : 'head');
  const committed = readText(env.FORGE_H_COMMITTED);
  const all = committed === null ? files : files.concat(committed.split('\0'));
  if (untrackedDirs.length === 0) return { files: all };
  const listed = untrackedFiles(env, untrackedDirs);
  if (listed === null) {
    // The folders stand in for their files, and the floor, which did not see those, fails closed.
    return {
      files: all.concat(untrackedDirs),
      incomplete: `the files in ${untrackedDirs.length} new folder(s) could not be listed (git ls-files failed or ran out of the git budget), so the floor saw only the folders' names`,
    };
  }
  return { files: all.concat(listed) };
}

/**
 * The untracked, not ignored files in `dirs` (the `? dir/` records of a `git status` that did not
 * list them one by one), against the same index the status read ($FORGE_H_GIT_INDEX, the snapshot;
 * else the user's), within what is left of the hook's git budget ($FORGE_H_GIT_SECONDS). A nested
 * repository stays one `dir/` entry, as `git status -uall` gives it. null when git failed.
 * child_process is loaded only here: a turn that made no new folder never pays for it.
 */
function untrackedFiles(env: Facts, dirs: string[]): string[] | null {
  const root = env.FORGE_H_GIT_ROOT;
  const seconds = Number(env.FORGE_H_GIT_SECONDS);
  if (!root?.startsWith('/') || !(seconds >= 1)) return null;
  try {
    const { execFileSync } = require('node:child_process') as typeof import('node:child_process');
    const gitEnv: Record<string, string | undefined> = { ...process.env, GIT_LITERAL_PATHSPECS: '1' };
    if (env.FORGE_H_GIT_INDEX) gitEnv.GIT_INDEX_FILE = env.FORGE_H_GIT_INDEX;
    else delete gitEnv.GIT_INDEX_FILE;
    // Many folders: the whole tree's list, one argument, instead of an argument list past a limit.
    const pathspec = dirs.length > 1000 ? [] : dirs;
    const out = execFileSync('git', ['-C', root, 'ls-files', '-z', '--others', '--exclude-standard', '--', ...pathspec], {
      env: gitEnv,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: seconds * 1000,
      killSignal: 'SIGKILL',
      maxBuffer: 1 << 30,
    });
    return out.split('\0').filter((path) => path !== '');
  } catch {
    return null;
  }
}

function main(env: Facts): number {
  const out = env.FORGE_H_OUT;
  if (!out) return 2;
  const mode = (REFLECTION_MODES as readonly string[]).includes(env.FORGE_H_MODE ?? '') ? (env.FORGE_H_MODE as ReflectionMode) : 'solo';
  const attempt = Number(env.FORGE_H_ATTEMPT);
  const gitOk = env.FORGE_H_GIT_OK === '1';
  const chosen = chooseSelfReport(env);
  const listed = gitOk ? changedList(env) : null;
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
  // (no reason, nearly always: no regex is built for it)
  const reason = built.selfReportReason ? built.selfReportReason.replace(/[\r\n]+/g, ' ').slice(0, 500) : '';
  // The status goes out before the sidecar is placed: a helper stopped in between leaves the hook
  // a status and a sidecar still to place, never a placed sidecar without its status.
  writeSync(1, `${built.selfReport} ${chosen.source}${reason ? ` ${reason}` : ''}\n`);
  const placed = env.FORGE_H_FINAL ? placeFile(out, env.FORGE_H_FINAL) : false;
  if (placed && chosen.source === 'file' && built.selfReport === 'ok' && env.FORGE_H_INPUT && env.FORGE_H_INPUT_KEEP) {
    renameQuietly(env.FORGE_H_INPUT, env.FORGE_H_INPUT_KEEP);
  }
  if (placed && env.FORGE_H_FINAL) {
    spoolWritten(env, {
      sidecar: env.FORGE_H_FINAL,
      session_id: env.FORGE_H_SESSION_ID || 'unknown',
      task_ref: env.FORGE_H_TASK_REF || 'unknown',
      degraded: built.sidecar.provenance.degraded,
      self_report: built.selfReport,
      self_report_source: chosen.source,
      // Why the answer gave no self-report, when the reader can say (Copilot CLI's transcript, a
      // model error).
      ...(chosen.note ? { self_report_note: chosen.note } : {}),
    });
  }
  // Last, and only once the sidecar stands under its final name: until then the hook's bash
  // fallback may still need these (a sidecar left at its temp name is the hook's to place).
  if (placed && env.FORGE_H_REMOVE_INPUTS === '1')
    for (const input of [env.FORGE_H_PAYLOAD, env.FORGE_H_STATUS, env.FORGE_H_COMMITTED, env.FORGE_H_FIFO]) removeQuietly(input);
  if (placed) finishTurn(env);
  // Done with every file: the end of stdout tells the hook so now, not after node's own teardown,
  // which the hook does not wait for.
  if (env.FORGE_H_CLOSE_STDOUT === '1') closeSync(1);
  // What is left is the helper's own: starting the drain, and node's teardown. The hook sent its
  // facts with an end record and holds its end of stdin until it exits, so this waits for that and
  // neither competes with the hook's last steps for the CPU.
  if (stdinOpen) waitForEnd();
  startDrain(env);
  return 0;
}

/** Reads stdin to its end (the hook's exit); whatever comes after the end record is dropped. */
function waitForEnd(): void {
  const sink = Buffer.allocUnsafe(4096);
  try {
    while (readSync(0, sink, 0, sink.length, null) > 0) {
      // dropped
    }
  } catch {
    // stdin cannot be read (a non-blocking one): nothing to wait for
  }
}

/**
 * Starts the drain ($FORGE_H_DRAIN_CLI ingest, in $FORGE_H_DRAIN_CWD, FORGE_DIR=$FORGE_H_DRAIN_STATE)
 * in a session of its own, reading and writing nothing of ours, after the hook has exited: it costs
 * the hook nothing (a fork of the drain inside the hook was paid at every Stop). child_process is loaded
 * only now. A drain that cannot start is the next command's to do.
 */
function startDrain(env: Facts): void {
  const cli = env.FORGE_H_DRAIN_CLI;
  const cwd = env.FORGE_H_DRAIN_CWD;
  const state = env.FORGE_H_DRAIN_STATE;
  if (!cli?.startsWith('/') || !cwd?.startsWith('/') || !state?.startsWith('/')) return;
  try {
    // The require the bundle runs with (helper-code-cache.ts passes its own): the helper runs in a
    // vm script, where a dynamic import() is refused. Not createRequire: importing node:module
    // loads its source-map and ESM parts, which every Stop would pay.
    const { spawn } = require('node:child_process') as typeof import('node:child_process');
    const child = spawn(cli, ['ingest'], { cwd, detached: true, stdio: 'ignore', env: { ...process.env, FORGE_DIR: state } });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // not started: the next forge-reflect command drains
  }
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
function placeFile(temp: string, final: string): boolean {
  try {
    linkSync(temp, final);
  } catch {
    return false;
  }
  removeQuietly(temp); // placed either way; a temp name left over is swept by a later run
  return true;
}

/**
 * What the start (code-cache.ts) already read of stdin to find the code cache's folder, passed
 * in by its module wrapper; the rest is read here.
 */
declare const FORGE_STDIN_READ: Buffer | undefined;

/** Whether stdin is still open after the facts (they ended with END_RECORD, not with its end). */
let stdinOpen = false;

function endsWithEndRecord(data: Buffer): boolean {
  // Byte by byte: Buffer.from, subarray and equals would each pay their costly first call.
  const start = data.length - END_RECORD.length;
  if (start < 0 || (start > 0 && data[start - 1] !== 0)) return false;
  for (let i = 0; i < END_RECORD.length; i++) if (data[start + i] !== END_RECORD.charCodeAt(i)) return false;
  return true;
}

/** The facts: stdin up to the hook's end record, or to its end (a hook that gave up, or a test). */
function readFacts(): HookFacts {
  let data = (typeof FORGE_STDIN_READ === 'undefined' ? undefined : FORGE_STDIN_READ) ?? Buffer.alloc(0);
  try {
    while (!endsWithEndRecord(data)) {
      const chunk = Buffer.allocUnsafe(65536);
      const n = readSync(0, chunk, 0, chunk.length, null);
      if (n === 0) return parseFacts(data.toString('utf8'));
      data = data.length === 0 ? chunk.subarray(0, n) : Buffer.concat([data, chunk.subarray(0, n)]);
    }
  } catch {
    return parseFacts(data.toString('utf8'));
  }
  stdinOpen = true;
  return parseFacts(data.toString('utf8'));
}

const facts = readFacts();
// The Stop event first, whatever else comes: the hook sends its names as soon as the file is
// complete, so a hook killed after that still has it spooled once this helper has started.
if (facts.FORGE_H_STOP_TMP && facts.FORGE_H_STOP_FINAL) placeFile(facts.FORGE_H_STOP_TMP, facts.FORGE_H_STOP_FINAL);
try {
  process.exitCode = main({ REFLECTION_RISK_THRESHOLD: process.env.REFLECTION_RISK_THRESHOLD, ...facts });
} catch (error) {
  process.stderr.write(`reflect-helper: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
