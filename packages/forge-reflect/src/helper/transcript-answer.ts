import { answerFromTranscriptTail } from '../sidecar/answer-block.js';
import { copilotAnswerFromTail, isCopilotTranscript, type CopilotAnswer } from '../runtimes/copilot-transcript.js';
import { readText } from './read-text.js';

/** How much of the transcript's end is read when the payload carries no final answer. */
const TRANSCRIPT_TAIL_BYTES = 1024 * 1024;

/**
 * The final answer from the transcript the payload names, when the payload carries none: Copilot
 * CLI's events.jsonl (see copilotAnswer), else the transcript's tail; with Copilot's note when it
 * gives none.
 */
export function answerFromTranscript(payload: string): { answer: string | null; note?: string } {
  const transcript = transcriptPath(payload);
  if (transcript !== null && isCopilotTranscript(transcript)) return copilotAnswer(transcript);
  const tail = transcript === null ? null : readText(transcript, TRANSCRIPT_TAIL_BYTES);
  return { answer: tail === null ? null : answerFromTranscriptTail(tail) };
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
