/** The self-report in the final answer: the last ```reflection block, from a payload or a transcript tail. */
import { describe, expect, it } from 'vitest';
import { answerFromPayload, answerFromTranscriptTail, lastReflectionBlock } from '../src/sidecar/answer-block.js';
import { mulberry32 } from '../src/analysis/prng.js';

const REPORT = '{"confidence":0.6,"most_likely_wrong":{"surface":"auth","description":"token expiry unchecked"},"known_not_in_diff":null}';
const answer = (body: string) => `Done: added the token check.\n\n\`\`\`reflection\n${body}\n\`\`\`\n`;

describe('lastReflectionBlock', () => {
  it('takes the body of the last reflection block, not other fences', () => {
    const text = `Here is code:\n\`\`\`ts\nconst a = 1;\n\`\`\`\n\`\`\`reflection\n{"old":1}\n\`\`\`\nThen:\n${answer(REPORT)}`;
    expect(lastReflectionBlock(text)).toEqual({ kind: 'block', text: REPORT });
  });
  it('accepts tildes, longer fences, spaces after the info string and CRLF', () => {
    expect(lastReflectionBlock(`~~~~ reflection \r\n${REPORT}\r\n~~~~\r\n`)).toEqual({ kind: 'block', text: REPORT });
    expect(lastReflectionBlock(`\`\`\`\`reflection\n${REPORT}\n\`\`\`\`\n`)).toEqual({ kind: 'block', text: REPORT });
  });
  it('says none without a block, and unterminated for an unclosed one', () => {
    expect(lastReflectionBlock('no block here ```reflection inline```')).toEqual({ kind: 'none' });
    expect(lastReflectionBlock('```reflections\n{}\n```')).toEqual({ kind: 'none' });
    expect(lastReflectionBlock(`text\n\`\`\`reflection\n${REPORT}`)).toEqual({ kind: 'unterminated', text: REPORT });
  });
  it('reads fences exactly as the regexes it replaced (random answers)', () => {
    // The former implementation, kept as the oracle: lines split at \r?\n, an opening line
    // /^[ \t]{0,3}(`{3,}|~{3,})[ \t]*reflection[ \t]*$/, a closing line of the same character.
    const byRegex = (text: string) => {
      const lines = text.split(/\r?\n/);
      let found: ReturnType<typeof lastReflectionBlock> = { kind: 'none' };
      for (let i = 0; i < lines.length; i++) {
        const open = /^[ \t]{0,3}(`{3,}|~{3,})[ \t]*reflection[ \t]*$/.exec(lines[i] ?? '');
        if (!open) continue;
        const fence = open[1] ?? '```';
        const closing = new RegExp(`^[ \\t]{0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}[ \\t]*$`);
        const end = lines.findIndex((line, j) => j > i && closing.test(line));
        if (end < 0) return { kind: 'unterminated' as const, text: lines.slice(i + 1).join('\n') };
        found = { kind: 'block', text: lines.slice(i + 1, end).join('\n') };
        i = end;
      }
      return found;
    };
    const rand = mulberry32(12345);
    const next = (n: number) => Math.floor(rand() * n);
    const pick = <T>(list: readonly T[]) => list[next(list.length)] as T;
    // Lines that are near misses and hits of a fence: indents, fence runs, info strings, blanks.
    const line = () =>
      next(4) === 0
        ? pick(['{"confidence":0.5}', 'text', '', ' x ``` y'])
        : pick(['', ' ', '   ', '    ', '\t', ' \t ']) +
          pick(['`', '~']).repeat(2 + next(4)) +
          pick(['', ' ', '\t']) +
          pick(['reflection', 'reflection', 'reflections', 'ts', '']) +
          pick(['', ' ', ' \t', 'x']);
    const kinds = new Set<string>();
    for (let run = 0; run < 3000; run++) {
      let text = line();
      for (let k = next(8); k > 0; k--) text += pick(['\n', '\n', '\r\n', '\r']) + line();
      kinds.add(byRegex(text).kind);
      expect(lastReflectionBlock(text), JSON.stringify(text)).toEqual(byRegex(text));
    }
    expect([...kinds].sort()).toEqual(['block', 'none', 'unterminated']);
  });
});

describe('answerFromPayload', () => {
  it('reads Claude Code and Codex last_assistant_message, Gemini prompt_response', () => {
    expect(answerFromPayload(JSON.stringify({ hook_event_name: 'Stop', last_assistant_message: 'a' }))).toBe('a');
    expect(answerFromPayload(JSON.stringify({ hook_event_name: 'AfterAgent', prompt_response: 'g' }))).toBe('g');
  });
  it('gives null for no field, a non-string, or a payload that is not JSON', () => {
    expect(answerFromPayload('{"hook_event_name":"Stop"}')).toBeNull();
    expect(answerFromPayload('{"last_assistant_message":42}')).toBeNull();
    expect(answerFromPayload('{"last_assistant_me')).toBeNull();
    expect(answerFromPayload('[]')).toBeNull();
  });
});

describe('answerFromTranscriptTail', () => {
  const claudeLine = (role: 'assistant' | 'user', text: string) => JSON.stringify({ type: role, message: { role, content: [{ type: 'text', text }] } });
  const codexLine = (text: string) =>
    JSON.stringify({ type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] } });

  it("finds the assistant's last answer with a block in a Claude Code transcript, skipping a cut first line", () => {
    const tail = [
      'ut":"cut line',
      claudeLine('assistant', answer('{"confidence":0.1}')),
      claudeLine('assistant', answer(REPORT)),
      claudeLine('user', 'thanks'),
      '',
    ].join('\n');
    expect(lastReflectionBlock(answerFromTranscriptTail(tail) ?? '')).toEqual({ kind: 'block', text: REPORT });
  });
  it('reads a Codex rollout line', () => {
    expect(lastReflectionBlock(answerFromTranscriptTail(codexLine(answer(REPORT))) ?? '')).toEqual({ kind: 'block', text: REPORT });
  });
  it('never takes a block quoted in a user message or an instruction', () => {
    const tail = [claudeLine('user', answer('{"confidence":0.99}')), JSON.stringify({ type: 'system', content: answer('{}') })].join('\n');
    expect(answerFromTranscriptTail(tail)).toBeNull();
  });
});
