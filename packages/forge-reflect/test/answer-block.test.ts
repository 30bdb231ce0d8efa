/** The self-report in the final answer: the last ```reflection block, from a payload or a transcript tail. */
import { describe, expect, it } from 'vitest';
import { answerFromPayload, answerFromTranscriptTail, lastReflectionBlock } from '../src/sidecar/answer-block.js';

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
  const claudeLine = (role: 'assistant' | 'user', text: string) =>
    JSON.stringify({ type: role, message: { role, content: [{ type: 'text', text }] } });
  const codexLine = (text: string) =>
    JSON.stringify({ type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] } });

  it("finds the assistant's last answer with a block in a Claude Code transcript, skipping a cut first line", () => {
    const tail = ['ut":"cut line', claudeLine('assistant', answer('{"confidence":0.1}')), claudeLine('assistant', answer(REPORT)), claudeLine('user', 'thanks'), ''].join('\n');
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
