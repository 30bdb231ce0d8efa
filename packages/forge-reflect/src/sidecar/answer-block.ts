/**
 * The self-report that travels with the turn: the agent's final answer ends with a fenced block
 * whose info string is `reflection`, holding a reflection-input.v1 JSON object. This module finds
 * that block in the Stop payload (Claude Code and Codex: `last_assistant_message`; Gemini CLI:
 * `prompt_response`; Cline: `turn.outputText`) or, when the payload has no answer, in the tail of the runtime's JSON Lines
 * transcript. Pure: text in, text out.
 */

export type AnswerBlock =
  | { kind: 'none' }
  | { kind: 'block'; text: string }
  /** A `reflection` fence was opened but never closed: the answer was cut or malformed. */
  | { kind: 'unterminated'; text: string };

/** Payload fields that hold the final answer, in the order they are tried. */
export const ANSWER_FIELDS = ['last_assistant_message', 'prompt_response'] as const;

/**
 * The fence of a line that opens a `reflection` block, or null: at most 3 blanks (space or tab),
 * 3 or more backticks or tildes, blanks, `reflection`, blanks, the end. Read character by character,
 * not with a regex: V8 compiles a regex at its first use, and this runs once at every Stop, in a
 * fresh process, where that compile is paid every time. The test holds it to the regex it replaces.
 */
function openingFence(line: string): string | null {
  const start = blanks(line, 0, 3);
  const char = line[start];
  if (char !== '`' && char !== '~') return null;
  let i = start;
  while (line[i] === char) i++;
  if (i - start < 3) return null;
  const fence = line.slice(start, i);
  i = blanks(line, i);
  if (!line.startsWith('reflection', i)) return null;
  return blanks(line, i + 'reflection'.length) === line.length ? fence : null;
}

/** Whether `line` closes a block opened with `fence`: at most 3 blanks, as many or more of its character, blanks. */
function closesFence(line: string, fence: string): boolean {
  const start = blanks(line, 0, 3);
  let i = start;
  while (line[i] === fence[0]) i++;
  return i - start >= fence.length && blanks(line, i) === line.length;
}

/** The index after the blanks (spaces and tabs, at most `max`) of `line` from `from`. */
function blanks(line: string, from: number, max = Infinity): number {
  let i = from;
  while (i - from < max && (line[i] === ' ' || line[i] === '\t')) i++;
  return i;
}

/** The lines of `text`, split at `\n` or `\r\n`. */
function splitLines(text: string): string[] {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length - 1; i++) {
    const line = lines[i] as string;
    if (line.endsWith('\r')) lines[i] = line.slice(0, -1);
  }
  return lines;
}

/** The last ```reflection block of `answer` (its body, without the fences). */
export function lastReflectionBlock(answer: string): AnswerBlock {
  if (!answer.includes('reflection')) return { kind: 'none' };
  const lines = splitLines(answer);
  let found: AnswerBlock = { kind: 'none' };
  for (let i = 0; i < lines.length; i++) {
    const fence = openingFence(lines[i] as string);
    if (fence === null) continue;
    let end = -1;
    for (let j = i + 1; j < lines.length; j++) {
      if (closesFence(lines[j] as string, fence)) {
        end = j;
        break;
      }
    }
    if (end < 0) return { kind: 'unterminated', text: lines.slice(i + 1).join('\n') };
    found = { kind: 'block', text: lines.slice(i + 1, end).join('\n') };
    i = end;
  }
  return found;
}

/** The final answer a Stop payload carries, or null (not JSON, no such field, not a string). */
export function answerFromPayload(payload: string): string | null {
  let raw: unknown;
  try {
    raw = JSON.parse(payload);
  } catch {
    return null;
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null;
  for (const field of ANSWER_FIELDS) {
    const value = (raw as Record<string, unknown>)[field];
    if (typeof value === 'string') return value;
  }
  // Cline's TaskComplete: `turn.outputText`.
  const turn = (raw as Record<string, unknown>).turn;
  if (turn !== null && typeof turn === 'object' && typeof (turn as Record<string, unknown>).outputText === 'string')
    return (turn as Record<string, unknown>).outputText as string;
  return null;
}

const ASSISTANT_MARKS = new Set(['assistant', 'model', 'gemini']);

/**
 * The last assistant text in a transcript tail that holds a `reflection` fence, or null. Every
 * complete JSON line is read; a string counts when an object around it is marked as the assistant's
 * (`role` or `type` of assistant, model or gemini: the three runtimes' transcripts), so a user
 * prompt or an instruction quoting an example block never counts. The first line of a tail is
 * usually cut and is skipped when it does not parse.
 */
export function answerFromTranscriptTail(tail: string): string | null {
  const lines = tail.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]?.trim();
    if (!line || !line.includes('reflection')) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      continue;
    }
    const texts: string[] = [];
    collectAssistantTexts(raw, false, texts, 0);
    for (let k = texts.length - 1; k >= 0; k--) {
      const text = texts[k] as string;
      if (lastReflectionBlock(text).kind !== 'none') return text;
    }
  }
  return null;
}

function collectAssistantTexts(value: unknown, assistant: boolean, out: string[], depth: number): void {
  if (depth > 12) return;
  if (typeof value === 'string') {
    if (assistant) out.push(value);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) collectAssistantTexts(item, assistant, out, depth + 1);
    return;
  }
  const record = value as Record<string, unknown>;
  const mark = (v: unknown) => typeof v === 'string' && ASSISTANT_MARKS.has(v);
  const here = assistant || mark(record.role) || mark(record.type);
  for (const [key, item] of Object.entries(record)) {
    if (key === 'role' || key === 'type') continue;
    collectAssistantTexts(item, here, out, depth + 1);
  }
}
