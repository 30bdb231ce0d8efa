import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { recognise, salvageTopLevel, SHAPE_RULES, type Recognised } from '../src/runtimes/shapes.js';
import { referenceName, referencePayloadFiles } from './helpers/spool.js';

const CLAUDE_SESSION = '7f3c2a9e-4b1d-4e8a-9c6f-2d5e8b1a0c34';
const CODEX_SESSION = '019a3f2e-7c41-7d20-9b1a-5e6f7a8b9c0d';
const CURSOR_SESSION = 'cdefee2d-2727-4b73-bf77-d9d830f31d2a';
const GEMINI_SESSION = '3b9d1c2e-5f6a-4b7c-8d9e-0f1a2b3c4d5e';
const COPILOT_SESSION = '6c1f0e2a-5e55-4a1b-9c2d-3e4f5a6b7c8d';
const CLINE_TASK = '1787234400123';

type Expected = Pick<Recognised, 'runtime' | 'type' | 'hookEvent' | 'sessionId'> & Partial<Recognised>;

/** What every reference payload must be recognised as. A new payload file without a row here fails. */
const EXPECTED: Readonly<Record<string, Expected>> = {
  'notification.json': { runtime: 'claude-code', type: 'notification', hookEvent: 'Notification', sessionId: CLAUDE_SESSION, toolName: null },
  'post-tool-use-bash.json': {
    runtime: 'claude-code',
    type: 'tool.executed',
    hookEvent: 'PostToolUse',
    sessionId: CLAUDE_SESSION,
    toolName: 'Bash',
    toolUseId: 'toolu_01ABCxyz9PqR2sT3uV4wX5yZ',
    durationMs: 4187,
    agentId: null,
    cwd: '/home/dev/acme-app',
  },
  'post-tool-use-edit.json': {
    runtime: 'claude-code',
    type: 'tool.executed',
    hookEvent: 'PostToolUse',
    sessionId: CLAUDE_SESSION,
    toolName: 'Edit',
    durationMs: 12,
  },
  'post-tool-use-failure-bash.json': {
    runtime: 'claude-code',
    type: 'tool.failed',
    hookEvent: 'PostToolUseFailure',
    sessionId: CLAUDE_SESSION,
    toolName: 'Bash',
    toolUseId: 'toolu_01MNOjkl1QrS2tU3vW4xY5zA',
    durationMs: 3911,
  },
  'post-tool-use-in-subagent-read.json': {
    runtime: 'claude-code',
    type: 'tool.executed',
    hookEvent: 'PostToolUse',
    sessionId: CLAUDE_SESSION,
    toolName: 'Read',
    agentId: 'a4d2c8f1e0b3a297',
    durationMs: 3,
  },
  'post-tool-use-write.json': {
    runtime: 'claude-code',
    type: 'tool.executed',
    hookEvent: 'PostToolUse',
    sessionId: CLAUDE_SESSION,
    toolName: 'Write',
    durationMs: 9,
  },
  'pre-compact.json': { runtime: 'claude-code', type: 'context.compacting', hookEvent: 'PreCompact', sessionId: CLAUDE_SESSION },
  'pre-tool-use-bash.json': { runtime: 'claude-code', type: 'event.unknown', hookEvent: 'PreToolUse', sessionId: CLAUDE_SESSION, toolName: 'Bash' },
  'session-end.json': { runtime: 'claude-code', type: 'session.ended', hookEvent: 'SessionEnd', sessionId: CLAUDE_SESSION },
  'session-start.json': { runtime: 'claude-code', type: 'session.started', hookEvent: 'SessionStart', sessionId: CLAUDE_SESSION },
  'stop-continuation.json': { runtime: 'claude-code', type: 'turn.stopped', hookEvent: 'Stop', sessionId: CLAUDE_SESSION },
  'stop-failure.json': { runtime: 'claude-code', type: 'turn.stopped', hookEvent: 'StopFailure', sessionId: CLAUDE_SESSION },
  'stop-pre-v2.1.47.json': { runtime: 'claude-code', type: 'turn.stopped', hookEvent: 'Stop', sessionId: CLAUDE_SESSION },
  'stop.json': { runtime: 'claude-code', type: 'turn.stopped', hookEvent: 'Stop', sessionId: CLAUDE_SESSION, agentId: null },
  'subagent-stop.json': { runtime: 'claude-code', type: 'subagent.stopped', hookEvent: 'SubagentStop', sessionId: CLAUDE_SESSION, agentId: 'a4d2c8f1e0b3a297' },
  'user-prompt-submit.json': { runtime: 'claude-code', type: 'prompt.submitted', hookEvent: 'UserPromptSubmit', sessionId: CLAUDE_SESSION },
  'other-runtimes/cline-post-tool-use.json': {
    runtime: 'cline',
    type: 'tool.executed',
    hookEvent: 'PostToolUse',
    sessionId: CLINE_TASK,
    toolName: 'execute_command',
    durationMs: 4187,
    cwd: '/home/dev/acme-app',
  },
  'other-runtimes/cline-task-complete.json': { runtime: 'cline', type: 'turn.stopped', hookEvent: 'TaskComplete', sessionId: CLINE_TASK },
  'other-runtimes/codex-notify-agent-turn-complete.json': {
    runtime: 'codex',
    type: 'turn.stopped',
    hookEvent: 'agent-turn-complete',
    sessionId: CODEX_SESSION,
    cwd: '/home/dev/acme-app',
  },
  'other-runtimes/codex-post-tool-use.json': {
    runtime: 'codex',
    type: 'tool.executed',
    hookEvent: 'PostToolUse',
    sessionId: CODEX_SESSION,
    toolName: 'Bash',
    toolUseId: 'call_Xy12AbCd34EfGh56',
  },
  'other-runtimes/codex-stop.json': { runtime: 'codex', type: 'turn.stopped', hookEvent: 'Stop', sessionId: CODEX_SESSION },
  'other-runtimes/copilot-agent-stop.json': { runtime: 'copilot', type: 'turn.stopped', hookEvent: 'agentStop', sessionId: COPILOT_SESSION },
  'other-runtimes/copilot-post-tool-use.json': {
    runtime: 'copilot',
    type: 'tool.executed',
    hookEvent: 'postToolUse',
    sessionId: COPILOT_SESSION,
    toolName: 'bash',
  },
  'other-runtimes/cursor-after-file-edit.json': {
    runtime: 'cursor',
    type: 'tool.executed',
    hookEvent: 'afterFileEdit',
    sessionId: CURSOR_SESSION,
    toolName: null,
    cwd: '/home/dev/acme-app',
  },
  'other-runtimes/cursor-after-shell-execution.json': {
    runtime: 'cursor',
    type: 'tool.executed',
    hookEvent: 'afterShellExecution',
    sessionId: CURSOR_SESSION,
    durationMs: 4187,
    cwd: '/home/dev/acme-app',
  },
  'other-runtimes/cursor-stop.json': { runtime: 'cursor', type: 'turn.stopped', hookEvent: 'stop', sessionId: CURSOR_SESSION },
  'other-runtimes/gemini-after-agent.json': { runtime: 'gemini', type: 'turn.stopped', hookEvent: 'AfterAgent', sessionId: GEMINI_SESSION },
  'other-runtimes/gemini-after-tool.json': {
    runtime: 'gemini',
    type: 'tool.executed',
    hookEvent: 'AfterTool',
    sessionId: GEMINI_SESSION,
    toolName: 'run_shell_command',
  },
};

const files = referencePayloadFiles();

describe('every reference payload is recognised', () => {
  it('finds the reference payloads (Claude Code and other runtimes)', () => {
    expect(files.filter((f) => referenceName(f).startsWith('other-runtimes/')).length).toBeGreaterThanOrEqual(12);
    expect(files.length).toBeGreaterThanOrEqual(28);
  });

  it('has an expectation for every file, and a file for every expectation', () => {
    expect(files.map(referenceName).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const file of files) {
    const name = referenceName(file);
    // The hook's argument is what it was registered for; with none, or a Claude name, the payload decides.
    for (const hookArg of ['', 'PostToolUse']) {
      it(`${name} (hook argument ${JSON.stringify(hookArg)})`, () => {
        const expected = EXPECTED[name];
        expect(expected, `no expectation for ${name}`).toBeDefined();
        const got = recognise(JSON.parse(readFileSync(file, 'utf8')), hookArg);
        expect(got).toMatchObject(expected as Expected);
      });
    }
  }
});

describe('shape rules beyond the reference files', () => {
  it('marks failed tool results of other runtimes as tool.failed', () => {
    expect(recognise({ sessionId: 's', toolName: 'bash', toolArgs: '{}', toolResult: { resultType: 'failure', textResultForLlm: 'x' } }, '').type).toBe(
      'tool.failed',
    );
    expect(recognise({ hookName: 'PostToolUse', taskId: 't', postToolUse: { toolName: 'x', success: false } }, '').type).toBe('tool.failed');
    expect(recognise({ session_id: 's', hook_event_name: 'AfterTool', tool_name: 'x', tool_response: { llmContent: '', error: 'boom' } }, '').type).toBe(
      'tool.failed',
    );
    expect(recognise({ hook_event_name: 'postToolUseFailure', conversation_id: 'c', tool_name: 'Shell' }, '')).toMatchObject({
      runtime: 'cursor',
      type: 'tool.failed',
      toolName: 'Shell',
    });
  });

  it("types a Copilot payload by the hook's registered event when it names one", () => {
    expect(recognise({ sessionId: 's', timestamp: 1, cwd: '/r', prompt: 'hi' }, 'userPromptSubmitted')).toMatchObject({
      runtime: 'copilot',
      type: 'prompt.submitted',
      hookEvent: 'userPromptSubmitted',
    });
    expect(recognise({ sessionId: 's', timestamp: 1, cwd: '/r', reason: 'complete' }, '')).toMatchObject({ type: 'session.ended', hookEvent: 'sessionEnd' });
    expect(recognise({ sessionId: 's', toolName: 'bash', toolArgs: '{}' }, '')).toMatchObject({ type: 'event.unknown', hookEvent: 'preToolUse' });
  });

  it('types a pre-v1.0.41 Claude payload (no hook_event_name) by the hook argument', () => {
    expect(recognise({ session_id: 's1', transcript_path: '/t.jsonl', stop_hook_active: false }, 'Stop')).toMatchObject({
      runtime: 'claude-code',
      type: 'turn.stopped',
      hookEvent: 'Stop',
      sessionId: 's1',
    });
  });

  it('records a reflection the Stop hook wrote, with its session and agent', () => {
    expect(recognise({ schema: 'reflection.v1', session_id: 's9', agent: 'claude-code', confidence: 0.8 }, 'reflection.written')).toMatchObject({
      runtime: 'claude-code',
      type: 'reflection.written',
      hookEvent: 'reflection.written',
      sessionId: 's9',
    });
    expect(recognise('not an object', 'reflection.written')).toMatchObject({ runtime: 'unknown', type: 'reflection.written' });
  });

  it('falls back to event.unknown for unknown shapes, non-objects and prototype names', () => {
    expect(recognise({ foo: 1 }, 'PostToolUse')).toMatchObject({ runtime: 'unknown', type: 'event.unknown', hookEvent: 'PostToolUse' });
    expect(recognise([1, 2], '')).toMatchObject({ runtime: 'unknown', type: 'event.unknown', hookEvent: null });
    expect(recognise(null, 'Stop')).toMatchObject({ runtime: 'unknown', type: 'event.unknown', hookEvent: 'Stop' });
    expect(recognise({ session_id: 's', hook_event_name: 'constructor' }, '')).toMatchObject({ runtime: 'claude-code', type: 'event.unknown' });
    expect(recognise({ sessionId: 's', stopReason: 'x' }, 'toString')).toMatchObject({ runtime: 'copilot', type: 'turn.stopped' });
  });

  it('ignores non-string ids and negative or non-numeric durations', () => {
    expect(recognise({ session_id: 's', hook_event_name: 'PostToolUse', tool_name: 42, duration_ms: -5 }, '')).toMatchObject({
      toolName: null,
      durationMs: null,
    });
    expect(recognise({ session_id: 's', hook_event_name: 'PostToolUse', duration_ms: 12.6 }, '')).toMatchObject({ durationMs: 13 });
  });

  it('lists each runtime once', () => {
    const runtimes = SHAPE_RULES.map((r) => r.runtime);
    expect(new Set(runtimes).size).toBe(runtimes.length);
  });
});

describe('salvageTopLevel (payloads cut off by the size cap)', () => {
  it('reads the top-level fields before the cut, and none from nested objects', () => {
    const full = readFileSync(referencePayloadFiles().find((f) => f.endsWith('post-tool-use-edit.json')) as string, 'utf8');
    const cut = full.slice(0, full.indexOf('"originalFile"') + 30);
    expect(() => JSON.parse(cut)).toThrow();
    const fields = salvageTopLevel(cut);
    expect(fields).toMatchObject({ session_id: CLAUDE_SESSION, hook_event_name: 'PostToolUse', tool_name: 'Edit', cwd: '/home/dev/acme-app' });
    expect(fields).not.toHaveProperty('filePath'); // nested in tool_response
    expect(fields.tool_input).toBeNull(); // present, not read
    expect(recognise(fields, 'PostToolUse')).toMatchObject({ runtime: 'claude-code', type: 'tool.executed', toolName: 'Edit', sessionId: CLAUDE_SESSION });
  });

  it('does not take a nested key for a top-level one', () => {
    const text =
      '{"session_id":"s1","hook_event_name":"PostToolUse","tool_input":{"taskId":"t1","hookName":"x","tool_name":"Fake"},"tool_name":"TaskUpdate","tool_response":{"a":"cut';
    const fields = salvageTopLevel(text);
    expect(fields).not.toHaveProperty('taskId');
    expect(recognise(fields, '')).toMatchObject({ runtime: 'claude-code', toolName: 'TaskUpdate' });
  });

  it('handles escapes, a cut inside a string, and non-object text', () => {
    expect(salvageTopLevel('{"a":"x\\"y","b":"cut here')).toEqual({ a: 'x"y', b: null });
    expect(salvageTopLevel('not json at all')).toEqual({});
    expect(salvageTopLevel('')).toEqual({});
  });
});
