/**
 * The runtime modules against the real captured payloads (tests/fixtures/runtimes/): the hook map
 * and each native registration, recognition with and without the envelope's runtime, failures
 * (Gemini's Exit Code line, Codex's rollout), the quirks (Codex SessionStart after compaction and
 * without turn_id, Gemini's repeated SessionEnd), and the drain putting it together.
 */
import { appendFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { drainSpool } from '../src/log/drain.js';
import { openEventLog } from '../src/log/event-log.js';
import type { EventRow } from '../src/events.js';
import { parseSettingsText } from '../src/install/settings-merge.js';
import { registrationOf, registrationValue, type JsonObject } from '../src/runtimes/module.js';
import { recognise } from '../src/runtimes/shapes.js';
import { claudeCode } from '../src/runtimes/claude-code.js';
import { codex } from '../src/runtimes/codex.js';
import { durationToMs, isRolloutPath, outcomeKey, parseItemCompleted, readRolloutOutcomes } from '../src/runtimes/codex-rollout.js';
import { enrichCodexToolCalls, repeatedSessionEnds } from '../src/runtimes/enrich.js';
import { folderTrusted, gemini, geminiToolOutcome } from '../src/runtimes/gemini.js';
import { bindingsFor, HOOK_MAP } from '../src/runtimes/hook-map.js';
import { parseRuntimes } from '../src/runtimes/index.js';
import { cleanupTempDirs, KIT_ROOT, tempDir } from './helpers/spool.js';

const FIXTURES = join(KIT_ROOT, 'tests', 'fixtures', 'runtimes');
const fixture = (runtime: string, name: string) => JSON.parse(readFileSync(join(FIXTURES, runtime, name), 'utf8')) as Record<string, unknown>;

afterEach(cleanupTempDirs);

describe('the hook map and the registrations generated from it', () => {
  it('runtime/<runtime>/ holds exactly the registrations generated from the hook map (drift test; node scripts/build/generate-registrations.mjs rewrites them)', () => {
    for (const [module, rel] of [
      [claudeCode, 'runtime/claude/settings.json'],
      [codex, 'runtime/codex/hooks.json'],
      [gemini, 'runtime/gemini/settings.json'],
    ] as const) {
      const committed = readFileSync(join(KIT_ROOT, rel), 'utf8');
      expect(committed, rel).toBe(`${JSON.stringify(registrationValue(registrationOf(module)), null, 2)}\n`);
    }
  });

  it('Claude commands pass the runtime to the hook', () => {
    const hooks = registrationValue(registrationOf(claudeCode)).hooks as Record<string, Array<{ hooks: Array<{ command: string }> }>>;
    expect(hooks.PostToolUse?.[0]?.hooks[0]?.command).toBe(
      'case "$REFLECTION_MODE" in solo|orchestrated) LC_ALL=C BASH_ENV= exec bash "$CLAUDE_PROJECT_DIR"/.claude/hooks/forge-reflect/reflect-event-hook.sh PostToolUse claude-code;; esac',
    );
    expect(hooks.Stop?.[0]?.hooks[0]?.command).toBe(
      'case "$REFLECTION_MODE" in solo|orchestrated) BASH_ENV= exec bash "$CLAUDE_PROJECT_DIR"/.claude/hooks/forge-reflect/reflect-stop-hook.sh claude-code;; esac',
    );
  });

  it('Codex: only event names Codex knows, seconds within its limits (SessionEnd and Interrupt at most 3)', () => {
    const known = new Set(Object.values(fixture('codex', 'schema-summary.json')).map((e) => (e as { hook_event_name: string }).hook_event_name));
    const hooks = registrationValue(registrationOf(codex)).hooks as Record<
      string,
      Array<{ matcher?: string; hooks: Array<{ timeout: number; command: string }> }>
    >;
    expect(Object.keys(hooks).length).toBeGreaterThan(5);
    for (const [event, groups] of Object.entries(hooks)) {
      expect(known.has(event), event).toBe(true);
      for (const h of groups.flatMap((g) => g.hooks)) {
        expect(Number.isInteger(h.timeout) && h.timeout >= 1).toBe(true);
        if (event === 'SessionEnd' || event === 'Interrupt') expect(h.timeout).toBeLessThanOrEqual(3);
        expect(h.command).not.toMatch(/PROJECT_DIR"?\//);
        expect(h.command).toMatch(/ codex; exit 0$/);
      }
    }
    expect(hooks.PostToolUse?.[0]?.matcher).toBe('*');
    expect(hooks).not.toHaveProperty('PostToolUseFailure');
    expect(hooks).not.toHaveProperty('Notification');
    expect(Object.keys(hooks)).toEqual(expect.arrayContaining(['SessionStart', 'UserPromptSubmit', 'PostToolUse', 'Stop', 'SessionEnd']));
  });

  it('Gemini: its own six events, milliseconds, the REFLECTION_MODE passthrough, a name, commands that always exit 0', () => {
    const hooks = registrationValue(registrationOf(gemini)).hooks as Record<string, Array<{ hooks: Array<Record<string, unknown>> }>>;
    expect(Object.keys(hooks).sort()).toEqual(['AfterAgent', 'AfterTool', 'BeforeAgent', 'Notification', 'SessionEnd', 'SessionStart']);
    for (const bad of ['BeforeModel', 'AfterModel', 'BeforeToolSelection', 'PreCompress', 'PostToolUse', 'Stop']) expect(hooks).not.toHaveProperty(bad);
    const after = hooks.AfterTool?.[0]?.hooks[0] as Record<string, unknown>;
    expect(after.timeout).toBe(10_000);
    expect(hooks.AfterAgent?.[0]?.hooks[0]?.timeout).toBe(30_000);
    expect(after.env).toEqual({ REFLECTION_MODE: '${REFLECTION_MODE:-off}' });
    expect(after.name).toBe('forge-reflect');
    // Bare $GEMINI_PROJECT_DIR (Gemini inserts it already quoted) and no other $ variable.
    expect(after.command).not.toContain('"$GEMINI_PROJECT_DIR"');
    expect(
      String(after.command)
        .match(/\$\{?\w+/g)
        ?.every((v) => v === '$GEMINI_PROJECT_DIR'),
    ).toBe(true);
    expect(after.command).toMatch(/reflect-event-hook\.sh AfterTool gemini; exit 0$/);
  });

  it("every role names a kit hook, and the Stop role (and a model error's end) is served by the stop hook everywhere", () => {
    for (const runtime of ['claude-code', 'codex', 'gemini', 'qwen', 'cline'] as const) {
      const stops = bindingsFor(runtime)
        .filter((b) => b.hook === 'stop')
        .map((b) => b.event);
      expect(stops).toEqual(
        {
          'claude-code': ['Stop', 'StopFailure'],
          codex: ['Stop'],
          gemini: ['AfterAgent'],
          qwen: ['Stop', 'StopFailure'],
          cline: ['TaskComplete', 'TaskError'],
        }[runtime],
      );
    }
    expect(new Set(HOOK_MAP.map((r) => r.role)).size).toBe(HOOK_MAP.length);
  });

  it('a generated registration merges like any settings file (valid JSON, shape checked)', () => {
    for (const m of [claudeCode, codex, gemini]) expect(parseSettingsText(JSON.stringify(registrationValue(registrationOf(m)))).ok).toBe(true);
  });
});

describe('--runtime values', () => {
  it('default claude-code; repeatable, comma lists and all; canonical order, each once', () => {
    expect(parseRuntimes(undefined)).toEqual(['claude-code']);
    expect(parseRuntimes(['gemini', 'codex'])).toEqual(['codex', 'gemini']);
    expect(parseRuntimes('codex,gemini,codex')).toEqual(['codex', 'gemini']);
    expect(parseRuntimes(['all'])).toEqual(['claude-code', 'codex', 'gemini', 'qwen', 'cline', 'opencode', 'copilot']);
  });
  it('an unknown name is a usage error (exit 2) listing the supported ones', () => {
    try {
      parseRuntimes(['cursor']);
      expect.unreachable();
    } catch (error) {
      expect((error as { exitCode: number }).exitCode).toBe(2);
      expect((error as Error).message).toMatch(/"cursor".*claude-code, codex, gemini/);
    }
  });
});

type Want = { runtime: string; type: string; hookEvent: string; toolName?: string | null; toolUseId?: string | null; durationMs?: number | null };

const CODEX: Record<string, Want> = {
  'SessionStart.json': { runtime: 'codex', type: 'session.started', hookEvent: 'SessionStart' },
  'SessionStart.after-compact.json': { runtime: 'codex', type: 'context.compacted', hookEvent: 'SessionStart' },
  'UserPromptSubmit.json': { runtime: 'codex', type: 'prompt.submitted', hookEvent: 'UserPromptSubmit' },
  'PreToolUse.2.Bash.json': { runtime: 'codex', type: 'event.unknown', hookEvent: 'PreToolUse', toolName: 'Bash', toolUseId: 'call_2' },
  'PostToolUse.1.apply_patch.json': {
    runtime: 'codex',
    type: 'tool.executed',
    hookEvent: 'PostToolUse',
    toolName: 'apply_patch',
    toolUseId: 'call_1',
    durationMs: 300,
  },
  // The payload alone cannot tell the failure (the drain reads the rollout): see below.
  'PostToolUse.2.Bash.exit1.json': {
    runtime: 'codex',
    type: 'tool.executed',
    hookEvent: 'PostToolUse',
    toolName: 'Bash',
    toolUseId: 'call_2',
    durationMs: null,
  },
  'PostToolUse.3.Bash.exit0.json': { runtime: 'codex', type: 'tool.executed', hookEvent: 'PostToolUse', toolName: 'Bash', toolUseId: 'call_3' },
  'PreCompact.json': { runtime: 'codex', type: 'context.compacting', hookEvent: 'PreCompact' },
  'Stop.json': { runtime: 'codex', type: 'turn.stopped', hookEvent: 'Stop' },
  'Interrupt.json': { runtime: 'codex', type: 'turn.interrupted', hookEvent: 'Interrupt' },
  'SessionEnd.json': { runtime: 'codex', type: 'session.ended', hookEvent: 'SessionEnd' },
  'SessionEnd.interactive-quit.json': { runtime: 'codex', type: 'session.ended', hookEvent: 'SessionEnd' },
};
const GEMINI: Record<string, Want> = {
  'SessionStart.json': { runtime: 'gemini', type: 'session.started', hookEvent: 'SessionStart' },
  'BeforeAgent.json': { runtime: 'gemini', type: 'prompt.submitted', hookEvent: 'BeforeAgent' },
  'AfterTool.write_file.json': { runtime: 'gemini', type: 'tool.executed', hookEvent: 'AfterTool', toolName: 'write_file', toolUseId: null, durationMs: null },
  'AfterTool.run_shell_command.exit1.json': { runtime: 'gemini', type: 'tool.failed', hookEvent: 'AfterTool', toolName: 'run_shell_command' },
  'AfterTool.run_shell_command.exit0.json': { runtime: 'gemini', type: 'tool.executed', hookEvent: 'AfterTool', toolName: 'run_shell_command' },
  'AfterTool.read_file.error.json': { runtime: 'gemini', type: 'tool.failed', hookEvent: 'AfterTool', toolName: 'read_file' },
  'AfterAgent.json': { runtime: 'gemini', type: 'turn.stopped', hookEvent: 'AfterAgent' },
  'PreCompress.json': { runtime: 'gemini', type: 'event.unknown', hookEvent: 'PreCompress' },
  'Notification.ToolPermission.json': { runtime: 'gemini', type: 'notification', hookEvent: 'Notification' },
  'SessionEnd.json': { runtime: 'gemini', type: 'session.ended', hookEvent: 'SessionEnd' },
};

describe('recognition of the real payloads', () => {
  for (const [runtime, table, hint] of [
    ['codex', CODEX, 'codex'],
    ['gemini', GEMINI, 'gemini'],
  ] as const) {
    for (const [name, want] of Object.entries(table)) {
      it(`${runtime}/${name}: from the envelope's runtime and, without it, from the shape`, () => {
        const payload = fixture(runtime, name);
        const fromHint = recognise(payload, '', hint);
        expect(fromHint).toMatchObject(want);
        expect(fromHint.sessionId).toBe(payload.session_id);
        // The fallback: no runtime in the envelope (an older hook), the payload's shape decides.
        expect(recognise(payload, '')).toMatchObject(want);
      });
    }
  }

  it('Codex SessionStart and SessionEnd have no turn_id and are still Codex', () => {
    for (const name of ['SessionStart.json', 'SessionEnd.json']) {
      const payload = fixture('codex', name);
      expect(payload).not.toHaveProperty('turn_id');
      expect(recognise(payload, '').runtime).toBe('codex');
    }
  });

  it('the envelope runtime wins over the shape; an unknown name falls back to it; an unknown shape is stored as unknown', () => {
    const claudeShaped = fixture('claude-code', 'post-tool-use.bash-exit0.json');
    expect(recognise(claudeShaped, 'PostToolUse', 'codex').runtime).toBe('codex');
    expect(recognise(claudeShaped, 'PostToolUse', 'not-a-runtime').runtime).toBe('claude-code');
    expect(recognise({ what: 'ever' }, 'Hook', 'not-a-runtime')).toMatchObject({ runtime: 'unknown', type: 'event.unknown', hookEvent: 'Hook' });
    expect(recognise(fixture('claude-code', 'post-tool-use-failure.bash-exit1.json'), '', 'claude-code')).toMatchObject({ type: 'tool.failed' });
  });
});

describe("Gemini's failure signal", () => {
  const shell = (body: string) => ({ llmContent: `<untrusted_context>\n${body}\n</untrusted_context>`, returnDisplay: '' });
  it('the Exit Code line of the trailer; absent when 0', () => {
    expect(geminiToolOutcome(shell('Output: x\nExit Code: 2\nProcess Group PGID: 9'))).toEqual({ failed: true, exitCode: 2 });
    expect(geminiToolOutcome(shell('Output: x\nProcess Group PGID: 9'))).toEqual({ failed: false, exitCode: null });
    expect(geminiToolOutcome(shell('Output: x\nError: spawn failed\nExit Code: 127\nSignal: (none)'.replace('\nSignal: (none)', '')))).toMatchObject({
      failed: true,
      exitCode: 127,
    });
  });
  it("an Exit Code line inside the command's own output does not count", () => {
    expect(geminiToolOutcome(shell('Output: Exit Code: 1\nall good\nProcess Group PGID: 9')).failed).toBe(false);
  });
  it('a signal, a cancellation, a tool error and a list of parts', () => {
    expect(geminiToolOutcome(shell('Output: x\nSignal: 9\nProcess Group PGID: 9')).failed).toBe(true);
    expect(geminiToolOutcome({ llmContent: 'Command was cancelled by user before it could complete.' }).failed).toBe(true);
    expect(geminiToolOutcome({ llmContent: 'ok', error: { message: 'no', type: 'x' } }).failed).toBe(true);
    expect(geminiToolOutcome({ llmContent: [{ text: 'Output: y' }, { text: 'Exit Code: 3' }] })).toEqual({ failed: true, exitCode: 3 });
    expect(geminiToolOutcome(undefined).failed).toBe(false);
  });
  it('folder trust: env, TRUST_FOLDER on it or above, TRUST_PARENT, DO_NOT_TRUST closer wins', () => {
    expect(folderTrusted(null, '/w/a b', { GEMINI_CLI_TRUST_WORKSPACE: 'true' })).toBe(true);
    expect(folderTrusted({ '/w/a b': 'TRUST_FOLDER' }, '/w/a b', {})).toBe(true);
    expect(folderTrusted({ '/w': 'TRUST_FOLDER' }, '/w/a b', {})).toBe(true);
    expect(folderTrusted({ '/w/x': 'TRUST_PARENT' }, '/w/a b', {})).toBe(true);
    expect(folderTrusted({ '/w': 'TRUST_FOLDER', '/w/a b': 'DO_NOT_TRUST' }, '/w/a b', {})).toBe(false);
    expect(folderTrusted({ '/w/a': 'TRUST_FOLDER' }, '/w/a b', {})).toBe(false);
  });
});

/** A rollout as Codex 0.169.0 writes it: event_msg item_completed lines among others. */
function rolloutLine(id: string, status: string, exitCode: number, nanos: number, turn = '01a20904-b427-7852-9628-71cd28b36ea5'): string {
  return `${JSON.stringify({
    timestamp: '2026-11-23T15:27:13.000Z',
    type: 'event_msg',
    payload: {
      type: 'item_completed',
      thread_id: 't',
      turn_id: turn,
      item: { type: 'CommandExecution', id, command: ['/bin/bash', '-lc', 'x'], status, exit_code: exitCode, duration: { secs: 1, nanos } },
    },
  })}\n`;
}

function writeRollout(dir: string, body: string): string {
  const path = join(dir, 'rollout-2026-11-23T15-27-12-01a20904-b3c8-7790-90fd-32e2f57eeda2.jsonl');
  writeFileSync(path, body);
  return path;
}

describe("Codex's failure signal: the rollout's item_completed line", () => {
  it('parses the line; durations as {secs, nanos}; a bare number has no unit', () => {
    const parsed = parseItemCompleted(rolloutLine('call_2', 'failed', 1, 250_000_000).trim());
    expect(parsed).toMatchObject({ id: 'call_2', outcome: { status: 'failed', exitCode: 1, durationMs: 1250 } });
    expect(durationToMs(12)).toBeNull();
    expect(durationToMs('350ms')).toBe(350);
    expect(parseItemCompleted('{"type":"response_item","payload":{"type":"message"}}')).toBeNull();
    expect(parseItemCompleted('not json')).toBeNull();
  });

  it('reads backwards, finds each wanted call once, the latest of its turn; skips other turns', () => {
    const dir = tempDir('forge rollout ');
    const filler = `${JSON.stringify({ type: 'response_item', payload: { type: 'function_call_output', output: 'x'.repeat(5000) } })}\n`;
    const path = writeRollout(
      dir,
      rolloutLine('call_2', 'completed', 0, 0, 'older-turn') +
        filler.repeat(300) +
        rolloutLine('call_2', 'failed', 1, 5e8) +
        rolloutLine('call_3', 'completed', 0, 1e6) +
        filler,
    );
    const wanted = [
      { id: 'call_2', turnId: '01a20904-b427-7852-9628-71cd28b36ea5' },
      { id: 'call_3', turnId: null },
      { id: 'call_9', turnId: null },
    ];
    const found = readRolloutOutcomes(path, wanted);
    expect(found.get(outcomeKey(wanted[0]!))).toEqual({ status: 'failed', exitCode: 1, durationMs: 1500 });
    expect(found.get(outcomeKey(wanted[1]!))).toEqual({ status: 'completed', exitCode: 0, durationMs: 1001 });
    expect(found.has(outcomeKey(wanted[2]!))).toBe(false);
    // The older turn's call_2 is found only when asked for that turn.
    expect(readRolloutOutcomes(path, [{ id: 'call_2', turnId: 'older-turn' }]).get(outcomeKey({ id: 'call_2', turnId: 'older-turn' }))?.status).toBe(
      'completed',
    );
  });

  it('bounded: a line further back than the window stays unknown; only rollout-*.jsonl paths are read', () => {
    const dir = tempDir('forge-rollout-');
    const path = writeRollout(dir, rolloutLine('call_1', 'failed', 1, 0) + 'y'.repeat(200_000) + '\n');
    expect(readRolloutOutcomes(path, [{ id: 'call_1', turnId: null }], 100_000).size).toBe(0);
    expect(readRolloutOutcomes(path, [{ id: 'call_1', turnId: null }], 400_000).size).toBe(1);
    const other = join(dir, 'notes.jsonl');
    writeFileSync(other, rolloutLine('call_1', 'failed', 1, 0));
    expect(isRolloutPath(other)).toBe(false);
    expect(readRolloutOutcomes(other, [{ id: 'call_1', turnId: null }]).size).toBe(0);
    expect(readRolloutOutcomes(join(dir, 'rollout-missing.jsonl'), [{ id: 'call_1', turnId: null }]).size).toBe(0);
  });
});

function row(over: Partial<EventRow>): EventRow {
  return {
    id: 'x',
    session_id: 's',
    agent_id: null,
    ts: '2026-11-23T15:26:49.993000Z',
    runtime: 'gemini',
    type: 'session.ended',
    hook_event: 'SessionEnd',
    tool_name: null,
    tool_use_id: null,
    duration_ms: null,
    cwd: null,
    payload: '{"reason":"exit"}',
    truncated: 0,
    ...over,
  };
}

describe('the drain, per runtime', () => {
  it('Gemini SessionEnd three times on /quit: the repeats within 10 s are not stored again; a later end is', () => {
    const rows = [
      row({ id: 'a' }),
      row({ id: 'b', ts: '2026-11-23T15:26:50.100000Z' }),
      row({ id: 'c', ts: '2026-11-23T15:26:50.200000Z' }),
      row({ id: 'd', ts: '2026-11-23T16:00:00.000000Z' }),
    ];
    const repeats = repeatedSessionEnds(rows, () => undefined);
    expect([...repeats].map((r) => r.id)).toEqual(['b', 'c']);
    // One already in the log counts too; another session or reason does not.
    const logged = repeatedSessionEnds([row({ id: 'e', ts: '2026-11-23T15:26:51.000000Z' }), row({ id: 'f', session_id: 'other' })], (s) =>
      s === 's' ? { ts: '2026-11-23T15:26:49.993000Z', payload: '{"reason":"exit"}' } : undefined,
    );
    expect([...logged].map((r) => r.id)).toEqual(['e']);
    expect(repeatedSessionEnds([row({ runtime: 'claude-code' }), row({ runtime: 'claude-code', id: 'y' })], () => undefined).size).toBe(0);
  });

  it('Codex tool calls take failure and duration from the rollout; unknown stays tool.executed', () => {
    const p = fixture('codex', 'PostToolUse.2.Bash.exit1.json');
    const mk = (id: string, payload: Record<string, unknown>) =>
      row({
        id,
        runtime: 'codex',
        type: 'tool.executed',
        hook_event: 'PostToolUse',
        tool_use_id: payload.tool_use_id as string,
        payload: JSON.stringify(payload),
      });
    // A truncated payload is stored as its text: transcript_path and turn_id come before the output.
    const cut = JSON.stringify({ ...fixture('codex', 'PostToolUse.2.Bash.exit1.json'), tool_use_id: 'call_2' }).slice(0, -40);
    const rows = [
      mk('1', p),
      mk('2', fixture('codex', 'PostToolUse.3.Bash.exit0.json')),
      { ...mk('3', p), payload: JSON.stringify(cut), truncated: 1 as const },
    ];
    const reads: string[] = [];
    enrichCodexToolCalls(rows, (path, wanted) => {
      reads.push(path);
      return new Map(wanted.filter((w) => w.id === 'call_2').map((w) => [outcomeKey(w), { status: 'failed', exitCode: 1, durationMs: 42 }]));
    });
    expect(reads).toHaveLength(1); // one read per rollout
    expect(rows[0]).toMatchObject({ type: 'tool.failed', duration_ms: 42 });
    expect(rows[1]).toMatchObject({ type: 'tool.executed', duration_ms: null });
    expect(rows[2]).toMatchObject({ type: 'tool.failed', duration_ms: 42 });
  });

  it('end to end: spool files with the envelope runtime → the log, with rollout outcomes, dedupe and unknown kept', () => {
    const state = tempDir('forge-state-');
    const sessions = tempDir('forge-codex-home ');
    const rollout = writeRollout(sessions, rolloutLine('call_2', 'failed', 1, 2e8) + rolloutLine('call_3', 'completed', 0, 1e8));
    let us = 1_763_906_500_000_000;
    const spool = (runtime: string, event: string, payload: Record<string, unknown>, extraUs = 1000) => {
      us += extraUs;
      const name = `${String(us)}-77-${(us % 0xffff).toString(16).padStart(4, '0')}.event`;
      const dir = join(state, 'spool');
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, name),
        `${JSON.stringify({ v: 1, source: 'event-hook', event, runtime, received_us: us, pid: 77, cwd: '/r' })}\n${JSON.stringify(payload)}`,
      );
    };
    const withRollout = (name: string) => ({ ...fixture('codex', name), transcript_path: rollout });
    spool('codex', 'SessionStart', withRollout('SessionStart.json'));
    spool('codex', 'PostToolUse', withRollout('PostToolUse.2.Bash.exit1.json'));
    spool('codex', 'PostToolUse', withRollout('PostToolUse.3.Bash.exit0.json'));
    spool('codex', 'SessionStart', withRollout('SessionStart.after-compact.json'));
    spool('gemini', 'AfterTool', fixture('gemini', 'AfterTool.run_shell_command.exit1.json'));
    for (let i = 0; i < 3; i++) spool('gemini', 'SessionEnd', fixture('gemini', 'SessionEnd.interactive-quit.json'), 200_000);
    spool('some-new-cli', 'Done', { whatever: true });
    const counts = drainSpool(state, { warn: () => {} });
    expect(counts).toMatchObject({ drained: 7, rejected: 0, alreadyPresent: 2 });
    const log = openEventLog(state);
    try {
      const rows = log.query({ limit: 100 });
      const by = (type: string) => rows.filter((r) => r.type === type);
      expect(by('tool.failed').map((r) => [r.runtime, r.tool_use_id ?? r.tool_name, r.duration_ms])).toEqual([
        ['codex', 'call_2', 1200],
        ['gemini', 'run_shell_command', null],
      ]);
      expect(by('tool.executed').map((r) => [r.tool_use_id, r.duration_ms])).toEqual([['call_3', 1100]]);
      expect(by('session.started')).toHaveLength(1);
      expect(by('context.compacted')).toHaveLength(1);
      expect(by('session.ended')).toHaveLength(1);
      expect(rows.find((r) => r.hook_event === 'Done')).toMatchObject({ runtime: 'unknown', type: 'event.unknown' });
      expect(log.query({ runtime: 'codex', limit: 100 })).toHaveLength(4);
      expect(readdirSync(join(state, 'spool')).filter((n) => n.endsWith('.event'))).toEqual([]);
    } finally {
      log.close();
    }
    appendFileSync(rollout, ''); // the rollout is only read, never written
  });
});

export type { JsonObject };
