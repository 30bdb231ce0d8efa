/**
 * GitHub Copilot CLI against its real captured payloads (tests/fixtures/runtimes/copilot/, from
 * Copilot CLI 1.0.102, PascalCase registration): the registration file, recognition with and
 * without the envelope's runtime, the failed shell call and its exit code, a subagent's own events,
 * the answer in Copilot's transcript, the hooks run with Copilot's hook environment, and doctor.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { guessShape, recognise } from '../src/runtimes/shapes.js';
import { bindingsFor } from '../src/runtimes/hook-map.js';
import { parseRuntimes } from '../src/runtimes/index.js';
import { registrationOf, registrationValue } from '../src/runtimes/module.js';
import { claudeCode } from '../src/runtimes/claude-code.js';
import { COPILOT_HOOKS_FILE, copilot, copilotExitCode, copilotFailureExitCode, copilotFolderTrusted, copilotHooksText } from '../src/runtimes/copilot.js';
import { copilotAnswerFromTail, isCopilotTranscript } from '../src/runtimes/copilot-transcript.js';
import { lastReflectionBlock } from '../src/sidecar/answer-block.js';
import { KIT_ROOT } from './helpers/spool.js';

const DIR = join(KIT_ROOT, 'tests', 'fixtures', 'runtimes', 'copilot');
const text = (name: string) => readFileSync(join(DIR, name), 'utf8');
const fixture = (name: string) => JSON.parse(text(name)) as Record<string, unknown>;
const SESSION = 'b81ea50b-c209-456f-93c5-90e6137d9663';
const PARENT = '52665f0a-f510-4620-bc52-d7de53baf941';
const SUBAGENT = '9c0ea42a-8698-4202-9db5-8f2f5cb76e40';

const made: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'forge-copilot-test-'));
  made.push(dir);
  return dir;
}

/**
 * The Stop hook's helper may still be writing its code cache in .forge/ when the hook has exited
 * (the hook does not wait for node's teardown): each attempt removes the tree anew until it is gone.
 */
afterEach(() => {
  for (const dir of made.splice(0)) {
    for (let attempt = 0; ; attempt++) {
      try {
        rmSync(dir, { recursive: true, force: true });
        break;
      } catch (error) {
        if (attempt >= 100) throw error;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
      }
    }
  }
});

type Entry = { type: string; bash: string; timeoutSec: number };

describe('Copilot CLI registration', () => {
  const file = JSON.parse(copilotHooksText()) as { version: number; hooks: Record<string, Entry[]> };

  it('runtime/copilot/.github/hooks/forge-reflect.json is the generated file (drift)', () => {
    expect(readFileSync(join(KIT_ROOT, 'runtime', 'copilot', COPILOT_HOOKS_FILE), 'utf8')).toBe(copilotHooksText());
    expect(copilot.hookFiles?.()).toEqual([{ rel: COPILOT_HOOKS_FILE, text: copilotHooksText(), mode: 0o644 }]);
  });

  it("Copilot's own format: version 1, the PascalCase events (snake_case payloads), bash commands through $COPILOT_PROJECT_DIR that always exit 0", () => {
    expect(file.version).toBe(1);
    expect(Object.keys(file.hooks)).toEqual([...bindingsFor('copilot').map((b) => b.event), 'ErrorOccurred']);
    expect(Object.keys(file.hooks)).toEqual(
      expect.arrayContaining(['SessionStart', 'UserPromptSubmit', 'PostToolUse', 'PostToolUseFailure', 'Stop', 'SessionEnd']),
    );
    for (const [event, entries] of Object.entries(file.hooks)) {
      expect(entries).toHaveLength(event === 'SessionEnd' ? 2 : 1);
      const e = entries[0] as Entry;
      expect(e.type).toBe('command');
      expect(e.bash).toMatch(
        /^case "\$REFLECTION_MODE" in solo\|orchestrated\) \[ -f "\$COPILOT_PROJECT_DIR"\/\.claude\/hooks\/forge-reflect\/reflect-(event|stop)-hook\.sh \] && .* copilot;; esac; exit 0$/,
      );
      expect(e.bash).toContain(event === 'Stop' ? 'reflect-stop-hook.sh copilot' : `reflect-event-hook.sh ${event} copilot`);
    }
    expect(file.hooks.Stop?.[0]?.timeoutSec).toBe(30);
    // A model error ends the turn with SessionEnd (reason "error") and no Stop: the Stop hook hears it too.
    expect(file.hooks.SessionEnd?.[1]?.bash).toContain('reflect-stop-hook.sh copilot SessionEnd;; esac; exit 0');
  });

  it('--runtime copilot and all', () => {
    expect(parseRuntimes('copilot')).toEqual(['copilot']);
    expect(parseRuntimes('all')).toContain('copilot');
  });
});

const EXPECTED: Record<string, { type: string; hookEvent: string; toolName?: string; exit?: number | null }> = {
  '001-SessionStart.json': { type: 'session.started', hookEvent: 'SessionStart' },
  '002-UserPromptSubmit.json': { type: 'prompt.submitted', hookEvent: 'UserPromptSubmit' },
  '003-PreToolUse.json': { type: 'event.unknown', hookEvent: 'PreToolUse', toolName: 'Write' },
  '005-PostToolUse.json': { type: 'tool.executed', hookEvent: 'PostToolUse', toolName: 'Write', exit: null },
  '008-PostToolUse.json': { type: 'tool.failed', hookEvent: 'PostToolUse', toolName: 'Bash', exit: 3 },
  '011-PostToolUse.json': { type: 'tool.executed', hookEvent: 'PostToolUse', toolName: 'Bash', exit: 0 },
  '012-Stop.json': { type: 'turn.stopped', hookEvent: 'Stop' },
  '013-SessionEnd.json': { type: 'session.ended', hookEvent: 'SessionEnd' },
};

describe('Copilot CLI payloads', () => {
  it.each(Object.entries(EXPECTED))('%s: typed with the hint', (name, want) => {
    const p = fixture(name);
    const r = recognise(p, want.hookEvent, 'copilot');
    expect(r.runtime).toBe('copilot');
    expect(r.type).toBe(want.type);
    expect(r.hookEvent).toBe(want.hookEvent);
    expect(r.sessionId).toBe(SESSION);
    expect(r.agentId).toBeNull();
    if (want.toolName) expect(r.toolName).toBe(want.toolName);
    if (want.exit !== undefined) expect(copilotFailureExitCode(p)).toBe(want.exit);
  });

  it('a shell call that exits non-zero is tool.failed by its shape alone too; the camelCase payload as well', () => {
    expect(guessShape(fixture('008-PostToolUse.json'), '')).toMatchObject({ runtime: 'copilot', type: 'tool.failed', toolName: 'Bash' });
    expect(guessShape(fixture('011-PostToolUse.json'), '')).toMatchObject({ runtime: 'copilot', type: 'tool.executed' });
    const camel = fixture('camel-postToolUse.json');
    expect(guessShape(camel, '')).toMatchObject({ runtime: 'copilot', type: 'tool.failed', hookEvent: 'postToolUse', toolName: 'bash' });
    expect(copilotFailureExitCode(camel)).toBe(3);
    expect(guessShape(fixture('camel-agentStop.json'), '')).toMatchObject({ runtime: 'copilot', type: 'turn.stopped', hookEvent: 'agentStop' });
    // Stop by its transcript's path; a subagent's Stop is the subagent's.
    expect(guessShape(fixture('012-Stop.json'), '')).toMatchObject({ runtime: 'copilot', type: 'turn.stopped', sessionId: SESSION });
    expect(guessShape(fixture('subagent-006-Stop.json'), '')).toMatchObject({ runtime: 'copilot', type: 'subagent.stopped', sessionId: PARENT });
  });

  it('a tool error (PostToolUseFailure, no exit code) is tool.failed', () => {
    const r = recognise(fixture('failure-PostToolUseFailure.json'), 'PostToolUseFailure', 'copilot');
    expect(r).toMatchObject({ runtime: 'copilot', type: 'tool.failed', toolName: 'Write' });
    expect(copilotFailureExitCode(fixture('failure-PostToolUseFailure.json'))).toBeNull();
  });

  it("the exit code is the result text's trailer only: output that prints one earlier does not count", () => {
    expect(copilotExitCode('\n<shellId: 0 completed with exit code 3>')).toBe(3);
    expect(copilotExitCode('ok\n<shellId: 12 completed with exit code 0>\n')).toBe(0);
    expect(copilotExitCode('<shellId: 0 completed with exit code 3>\nbut then\n<shellId: 0 completed with exit code 0>')).toBe(0);
    expect(copilotExitCode('<shellId: 0 completed with exit code 3>\nmore output')).toBeNull();
    expect(copilotExitCode('Created file /a/b.ts with 10 characters')).toBeNull();
    expect(copilotExitCode(undefined)).toBeNull();
    expect(copilotExitCode('x'.repeat(200_000))).toBeNull();
  });

  it("a subagent's own UserPromptSubmit and Stop belong to the parent session, with the subagent as agent; its Stop is not a turn", () => {
    const prompt = recognise(fixture('subagent-005-UserPromptSubmit.json'), 'UserPromptSubmit', 'copilot');
    expect(prompt).toMatchObject({ type: 'prompt.submitted', sessionId: PARENT, agentId: SUBAGENT });
    const stop = recognise(fixture('subagent-006-Stop.json'), 'Stop', 'copilot');
    expect(stop).toMatchObject({ runtime: 'copilot', type: 'subagent.stopped', hookEvent: 'Stop', sessionId: PARENT, agentId: SUBAGENT });
    const subStop = recognise(fixture('subagent-007-SubagentStop.json'), 'SubagentStop', 'copilot');
    expect(subStop).toMatchObject({ type: 'subagent.stopped', sessionId: PARENT, agentId: SUBAGENT });
  });
});

describe("the answer in Copilot CLI's transcript (events.jsonl)", () => {
  const transcript = text('transcript.jsonl');

  it('the last assistant.message, which asks for no tool, is the final answer with its reflection block', () => {
    expect(isCopilotTranscript(fixture('012-Stop.json').transcript_path as string)).toBe(true);
    expect(isCopilotTranscript('/home/u/.claude/projects/x/abc.jsonl')).toBe(false);
    const found = copilotAnswerFromTail(transcript);
    expect(found.final).toBe(true);
    const block = lastReflectionBlock(found.answer as string);
    expect(block.kind).toBe('block');
    expect(JSON.parse((block as { text: string }).text).confidence).toBe(0.6);
    // A tail cut mid-line (the reader takes the file's end) still finds it.
    expect(copilotAnswerFromTail(transcript.slice(transcript.length - 4000)).final).toBe(true);
  });

  it('the final message not written yet (Copilot lags the hook): not final, so the reader waits', () => {
    const lines = transcript.split('\n');
    const last = lines.map((l) => l.includes('"type":"assistant.message"')).lastIndexOf(true);
    const before = lines.slice(0, last).join('\n');
    const found = copilotAnswerFromTail(before);
    expect(found).toMatchObject({ final: false, recognised: true });
    // A new prompt after an earlier answer: that answer is not this turn's.
    const next = `${transcript}\n${JSON.stringify({ type: 'user.message', data: { content: 'again' }, id: 'x' })}\n`;
    expect(copilotAnswerFromTail(next)).toEqual({ answer: null, final: false, recognised: true });
  });

  it('another format (a changed one, or not JSON at all) is no answer and not recognised, never an error', () => {
    const claude = `${JSON.stringify({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: '```reflection\n{}\n```' }] } })}\n`;
    expect(copilotAnswerFromTail(claude)).toEqual({ answer: null, final: false, recognised: false });
    expect(copilotAnswerFromTail('not json\n{"broken":\n\u0000')).toEqual({ answer: null, final: false, recognised: false });
    expect(copilotAnswerFromTail(`${JSON.stringify({ type: 'assistant.message', data: { content: 7 } })}\n`)).toMatchObject({ answer: null, recognised: true });
  });
});

/** The hook environment Copilot gives (from a real hook), with this test's project. */
function copilotEnv(dir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: dir };
  for (const line of text('hook-env.txt').split('\n')) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    // (Not GIT_CONFIG_*: the capture left the key's value out.)
    if (m && m[1] !== 'PWD' && !m[1]!.startsWith('GIT_CONFIG_')) env[m[1] as string] = m[2];
  }
  return {
    ...env,
    COPILOT_PROJECT_DIR: dir,
    CLAUDE_PROJECT_DIR: dir,
    COPILOT_HOOK_DIR: join(dir, '.github', 'hooks'),
    REFLECTION_MODE: 'solo',
    FORGE_REFLECT_CLI: 'off',
    ...extra,
  };
}

function runAsCopilot(command: string, dir: string, payload: string, env: NodeJS.ProcessEnv = {}) {
  return spawnSync('bash', ['-c', command], { cwd: dir, env: copilotEnv(dir, env), input: payload, encoding: 'utf8' });
}

function vendor(dir: string): void {
  mkdirSync(join(dir, '.claude', 'hooks', 'forge-reflect', 'lib'), { recursive: true });
  for (const name of ['reflect-event-hook.sh', 'reflect-stop-hook.sh'])
    writeFileSync(join(dir, '.claude', 'hooks', 'forge-reflect', name), readFileSync(join(KIT_ROOT, 'hooks', name)));
  for (const name of readdirSync(join(KIT_ROOT, 'hooks', 'lib')))
    writeFileSync(join(dir, '.claude', 'hooks', 'forge-reflect', 'lib', name), readFileSync(join(KIT_ROOT, 'hooks', 'lib', name)));
}

function spooled(dir: string): string {
  const spool = join(dir, '.forge', 'spool');
  if (!existsSync(spool)) return '';
  return readdirSync(spool)
    .filter((n) => !n.startsWith('.'))
    .map((n) => readFileSync(join(spool, n), 'latin1'))
    .join('\n');
}

function sidecars(dir: string): Record<string, unknown>[] {
  const d = join(dir, '.forge', 'reflections');
  if (!existsSync(d)) return [];
  return readdirSync(d)
    .filter((n) => n.endsWith('.reflection.json'))
    .map((n) => JSON.parse(readFileSync(join(d, n), 'utf8')) as Record<string, unknown>);
}

const file = JSON.parse(copilotHooksText()) as { hooks: Record<string, Entry[]> };
const copilotCmd = (event: string) => file.hooks[event]?.[0]?.bash as string;
type Hooks = Record<string, Array<{ hooks: Array<{ command: string }> }>>;
const claudeCmd = (event: string) => (registrationValue(registrationOf(claudeCode)).hooks as Hooks)[event]?.[0]?.hooks[0]?.command as string;

describe('the hooks run by Copilot CLI', () => {
  const failed = text('008-PostToolUse.json');

  it('the copilot registration spools the event as copilot, prints nothing, exits 0', () => {
    const dir = tempDir();
    vendor(dir);
    const r = runAsCopilot(copilotCmd('PostToolUse'), dir, failed);
    expect([r.status, r.stdout, r.stderr]).toEqual([0, '', '']);
    expect(spooled(dir)).toContain('"runtime":"copilot"');
    expect(spooled(dir)).toContain('"event":"PostToolUse"');
  });

  it('the mode unset: nothing is written; the kit missing: exit 0, silent', () => {
    const dir = tempDir();
    vendor(dir);
    const off = runAsCopilot(copilotCmd('PostToolUse'), dir, failed, { REFLECTION_MODE: '' });
    expect([off.status, off.stdout, off.stderr]).toEqual([0, '', '']);
    expect(existsSync(join(dir, '.forge'))).toBe(false);
    const bare = tempDir();
    const missing = runAsCopilot(copilotCmd('Stop'), bare, text('012-Stop.json'));
    expect([missing.status, missing.stdout, missing.stderr]).toEqual([0, '', '']);
  });

  it("Claude's registration run by Copilot is stored as copilot; with the project registered for Copilot too it records nothing (one row)", () => {
    const dir = tempDir();
    vendor(dir);
    expect(runAsCopilot(claudeCmd('PostToolUse'), dir, failed).status).toBe(0);
    expect(spooled(dir)).toContain('"runtime":"copilot"');
    expect(spooled(dir)).not.toContain('"runtime":"claude-code"');

    const both = tempDir();
    vendor(both);
    mkdirSync(join(both, '.github', 'hooks'), { recursive: true });
    writeFileSync(join(both, COPILOT_HOOKS_FILE), copilotHooksText());
    expect(runAsCopilot(claudeCmd('PostToolUse'), both, failed).status).toBe(0);
    expect(runAsCopilot(claudeCmd('Stop'), both, text('012-Stop.json')).status).toBe(0);
    expect(spooled(both)).toBe('');
    expect(sidecars(both)).toEqual([]);
    expect(runAsCopilot(copilotCmd('PostToolUse'), both, failed).status).toBe(0);
    expect(spooled(both).match(/"runtime":"copilot"/g)).toHaveLength(1);
  });

  it('a Claude Code hook with only COPILOT_CLI inherited (no COPILOT_PROJECT_DIR: not a Copilot hook) stays claude-code', () => {
    const dir = tempDir();
    vendor(dir);
    expect(runAsCopilot(claudeCmd('PostToolUse'), dir, failed, { COPILOT_PROJECT_DIR: '' }).status).toBe(0);
    expect(spooled(dir)).toContain('"runtime":"claude-code"');
  });

  it("Stop: the sidecar takes the self-report from Copilot's transcript", () => {
    const dir = tempDir();
    vendor(dir);
    spawnSync('git', ['init', '-q'], { cwd: dir });
    const transcript = join(dir, 'home', '.copilot', 'session-state', SESSION, 'events.jsonl');
    mkdirSync(join(transcript, '..'), { recursive: true });
    writeFileSync(transcript, text('transcript.jsonl'));
    const stop = JSON.stringify({ ...fixture('012-Stop.json'), cwd: dir, transcript_path: transcript });
    const r = runAsCopilot(copilotCmd('Stop'), dir, stop);
    expect([r.status, r.stdout]).toEqual([0, '']);
    const [sidecar, ...more] = sidecars(dir);
    expect(more).toEqual([]);
    expect(sidecar).toMatchObject({ agent: 'copilot', session_id: SESSION, confidence: 0.6 });
    expect((sidecar!.provenance as Record<string, unknown>).degraded, JSON.stringify(sidecar)).toBe(false);
  });

  it('Stop with a transcript in another format: a degraded sidecar without self-report, the reason in reflection.written', () => {
    const dir = tempDir();
    vendor(dir);
    const transcript = join(dir, 'home', '.copilot', 'session-state', SESSION, 'events.jsonl');
    mkdirSync(join(transcript, '..'), { recursive: true });
    writeFileSync(transcript, `${JSON.stringify({ kind: 'message', role: 'assistant', text: 'done' })}\n`);
    const r = runAsCopilot(copilotCmd('Stop'), dir, JSON.stringify({ ...fixture('012-Stop.json'), cwd: dir, transcript_path: transcript }));
    expect([r.status, r.stdout]).toEqual([0, '']);
    const [sidecar] = sidecars(dir);
    expect(sidecar).toMatchObject({ agent: 'copilot', confidence: null });
    expect((sidecar!.provenance as Record<string, unknown>).degraded).toBe(true);
    expect(spooled(dir)).toContain("no line of Copilot CLI's events.jsonl format");
  });

  it('a turn that ends on a model error (SessionEnd, reason "error"): a degraded sidecar with the reason, no second SessionEnd; other ends: nothing', () => {
    const dir = tempDir();
    vendor(dir);
    const stopOnEnd = file.hooks.SessionEnd?.[1]?.bash as string;
    const complete = runAsCopilot(stopOnEnd, dir, JSON.stringify({ ...fixture('013-SessionEnd.json'), cwd: dir }));
    expect([complete.status, complete.stdout]).toEqual([0, '']);
    expect(sidecars(dir)).toEqual([]);
    expect(spooled(dir)).toBe('');
    const failed = runAsCopilot(stopOnEnd, dir, JSON.stringify({ ...fixture('error-SessionEnd.json'), cwd: dir }));
    expect([failed.status, failed.stdout]).toEqual([0, '']);
    const [sidecar, ...more] = sidecars(dir);
    expect(more).toEqual([]);
    expect(sidecar).toMatchObject({ agent: 'copilot', session_id: 'f8418084-c630-4b1a-808b-8d81f7bc0736', confidence: null });
    expect((sidecar!.provenance as Record<string, unknown>).degraded).toBe(true);
    const spool = spooled(dir);
    expect(spool).toContain('the turn ended on an error');
    expect(spool).not.toContain('"reason":"error"');
  });

  it("a subagent's Stop is spooled as its event, with no sidecar of its own", () => {
    const dir = tempDir();
    vendor(dir);
    const r = runAsCopilot(copilotCmd('Stop'), dir, JSON.stringify({ ...fixture('subagent-006-Stop.json'), cwd: dir }));
    expect([r.status, r.stdout]).toEqual([0, '']);
    expect(sidecars(dir)).toEqual([]);
    expect(spooled(dir)).toContain('"parent_agent_id"');
    expect(spooled(dir)).toContain('"runtime":"copilot"');
  });
});

describe('Copilot CLI doctor: folder trust', () => {
  it('trusted when trustedFolders names the folder, or by COPILOT_ALLOW_ALL=true; else warn with the step', () => {
    expect(copilotFolderTrusted({ trustedFolders: ['/work/repo/'] }, '/work/repo')).toBe(true);
    expect(copilotFolderTrusted({ trustedFolders: ['/work'] }, '/work/repo')).toBe(false);
    expect(copilotFolderTrusted({ trustedFolders: ['/work/re'] }, '/work/repo')).toBe(false);
    expect(copilotFolderTrusted({ trustedFolders: 'x' }, '/work/repo')).toBe(false);
    expect(copilotFolderTrusted(undefined, '/work/repo')).toBe(false);

    const home = tempDir();
    const repo = tempDir();
    const untrusted = copilot.doctorChecks(repo, { HOME: home });
    expect(untrusted.find((c) => c.name === 'copilot folder trust')?.status).toBe('warn');
    expect(untrusted.find((c) => c.name === 'copilot hooks')?.status).toBe('fail');
    expect(copilot.trustSteps(repo, { HOME: home })[0]).toMatch(/--trust-folder/);
    expect(copilot.doctorChecks(repo, { HOME: home, COPILOT_ALLOW_ALL: 'true' }).find((c) => c.name === 'copilot folder trust')?.status).toBe('ok');
    mkdirSync(join(home, '.copilot'));
    writeFileSync(join(home, '.copilot', 'config.json'), JSON.stringify({ trustedFolders: [repo] }));
    mkdirSync(join(repo, '.github', 'hooks'), { recursive: true });
    writeFileSync(join(repo, COPILOT_HOOKS_FILE), copilotHooksText());
    const trusted = copilot.doctorChecks(repo, { HOME: home });
    expect(trusted.map((c) => c.status)).toEqual(['ok', 'ok']);
    expect(copilot.trustSteps(repo, { HOME: home })).toEqual([]);
  });
});
