import { statSync } from 'node:fs';
import { answerFromPayload, lastReflectionBlock } from '../sidecar/answer-block.js';
import type { SelfReportFile } from '../sidecar/build.js';
import { errorEndNote } from './error-end.js';
import type { Facts } from './facts.js';
import { readText } from './read-text.js';
import { answerFromTranscript } from './transcript-answer.js';

const SELF_REPORT_MAX_BYTES = 256 * 1024;

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

/** `errorEnd`: the turn ended on a model error (the note says which): its sidecar is degraded whatever the self-report. */
export type Chosen = { file: SelfReportFile; source: 'answer' | 'file' | 'none'; refusedBlock?: string; note?: string; errorEnd?: boolean };

/**
 * The self-report of this turn: the final answer's `reflection` block when there is one (from the
 * payload, else the transcript's tail), else the self-report file the hook took for this session.
 * A file that names no session and is older than the session's start is stale: refused.
 */
export function chooseSelfReport(env: Facts): Chosen {
  const payload = readPayload(env.FORGE_H_PAYLOAD);
  // An error end is read for its note only: neither its payload nor the transcript holds an answer.
  const errorNote = payload === null ? null : errorEndNote(payload);
  if (errorNote !== null) return { ...chooseSelfReportFile(env), note: errorNote, errorEnd: true };
  let answer = payload === null ? null : answerFromPayload(payload);
  let note: string | undefined;
  if (answer === null && payload !== null) ({ answer, note } = answerFromTranscript(payload));
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
