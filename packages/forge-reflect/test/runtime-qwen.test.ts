/**
 * Qwen Code against its real captured payloads (tests/fixtures/runtimes/qwen/, from Qwen Code
 * 0.24.4): the registration, recognition with and without the envelope's runtime, the failed shell
 * call and its exit code, the empty-prompt continuations, the answer in Stop, the hooks run the way
 * Qwen runs them (its environment) and the doctor's folder-trust check.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { recognise, guessShape } from '../src/runtimes/shapes.js';
import { bindingsFor } from '../src/runtimes/hook-map.js';
import { parseRuntimes } from '../src/runtimes/index.js';
import { registrationOf, registrationValue } from '../src/runtimes/module.js';
import { folderTrustEnabled, qwen, qwenExitCode, qwenFailureExitCode, qwenFolderTrusted } from '../src/runtimes/qwen.js';
import { claudeCode } from '../src/runtimes/claude-code.js';
import { answerFromPayload, answerFromTranscriptTail, lastReflectionBlock } from '../src/sidecar/answer-block.js';
import { cleanupTempDirs, KIT_ROOT, tempDir } from './helpers/spool.js';

const DIR = join(KIT_ROOT, 'tests', 'fixtures', 'runtimes', 'qwen');
const fixture = (name: string) => JSON.parse(readFileSync(join(DIR, name), 'utf8')) as Record<string, unknown>;
const payloads = readdirSync(DIR)
  .filter((n) => /^\d{3}-.*\.json$/.test(n))
  .sort();

afterEach(cleanupTempDirs);

type Hooks = Record<string, Array<{ matcher?: string; hooks: Array<{ type: string; command: string; timeout: number }> }>>;

describe('Qwen Code registration', () => {
  const hooks = registrationValue(registrationOf(qwen)).hooks as Hooks;

  it('runtime/qwen/settings.json is the generated registration (drift)', () => {
    expect(readFileSync(join(KIT_ROOT, 'runtime', 'qwen', 'settings.json'), 'utf8')).toBe(
      `${JSON.stringify(registrationValue(registrationOf(qwen)), null, 2)}\n`,
    );
  });

  it('registers both tool events, Stop and the session events, timeouts in seconds (below the 1000 read as milliseconds)', () => {
    expect(Object.keys(hooks)).toEqual(bindingsFor('qwen').map((b) => b.event));
    expect(Object.keys(hooks)).toEqual(expect.arrayContaining(['SessionStart', 'UserPromptSubmit', 'PostToolUse', 'PostToolUseFailure', 'Stop']));
    expect(hooks.PostToolUse?.[0]?.matcher).toBe('*');
    expect(hooks.PostToolUseFailure?.[0]?.matcher).toBe('*');
    for (const h of Object.values(hooks).flatMap((g) => g.flatMap((x) => x.hooks))) {
      expect(h.timeout >= 1 && h.timeout < 1000).toBe(true);
      expect(h.command).toMatch(/"\$QWEN_PROJECT_DIR"\/\.claude\/hooks\/forge-reflect\/reflect-(event|stop)-hook\.sh .*qwen;; esac; exit 0$/);
      expect(h.command).not.toContain('QWEN_CODE_PROJECT_DIR');
    }
    expect(hooks.Stop?.[0]?.hooks[0]?.timeout).toBe(30);
  });

  it('--runtime qwen and all', () => {
    expect(parseRuntimes('qwen')).toEqual(['qwen']);
    expect(parseRuntimes('all')).toContain('qwen');
  });
});

const EXPECTED: Record<string, { type: string; hookEvent: string; toolName?: string; toolUseId?: string }> = {
  '002-SessionStart.json': { type: 'session.started', hookEvent: 'SessionStart' },
  '003-Notification.json': { type: 'notification', hookEvent: 'Notification' },
  '004-UserPromptSubmit.json': { type: 'prompt.submitted', hookEvent: 'UserPromptSubmit' },
  '005-PreToolUse.json': { type: 'event.unknown', hookEvent: 'PreToolUse', toolName: 'write_file' },
  '006-PostToolUse.json': { type: 'tool.executed', hookEvent: 'PostToolUse', toolName: 'write_file', toolUseId: 'toolu_1796194540134_qm81w149l' },
  '007-PostToolBatch.json': { type: 'event.unknown', hookEvent: 'PostToolBatch' },
  '008-UserPromptSubmit.json': { type: 'turn.continued', hookEvent: 'UserPromptSubmit' },
  '010-PostToolUseFailure.json': {
    type: 'tool.failed',
    hookEvent: 'PostToolUseFailure',
    toolName: 'run_shell_command',
    toolUseId: 'toolu_1796194541071_7u4aut3da',
  },
  '012-UserPromptSubmit.json': { type: 'turn.continued', hookEvent: 'UserPromptSubmit' },
  '014-PostToolUse.json': { type: 'tool.executed', hookEvent: 'PostToolUse', toolName: 'run_shell_command' },
  '016-UserPromptSubmit.json': { type: 'turn.continued', hookEvent: 'UserPromptSubmit' },
  '017-MessageDisplay.json': { type: 'event.unknown', hookEvent: 'MessageDisplay' },
  '018-Stop.json': { type: 'turn.stopped', hookEvent: 'Stop' },
};

describe('Qwen Code payloads', () => {
  it.each(Object.entries(EXPECTED))('%s: typed with the hint, and recognised as qwen by its shape alone (not as Gemini)', (name, want) => {
    const p = fixture(name);
    for (const r of [recognise(p, want.hookEvent, 'qwen'), guessShape(p, '')]) {
      expect(r.runtime).toBe('qwen');
      expect(r.type).toBe(want.type);
      expect(r.hookEvent).toBe(want.hookEvent);
      expect(r.sessionId).toBe('c46574b8-c44b-4138-bc76-daf0e5573cb8');
      if (want.toolName) expect(r.toolName).toBe(want.toolName);
      if (want.toolUseId) expect(r.toolUseId).toBe(want.toolUseId);
    }
  });

  it('every captured payload is recognised as qwen', () => {
    for (const name of payloads) expect(guessShape(fixture(name), '').runtime, name).toBe('qwen');
  });

  it('durations come from duration_ms', () => {
    expect(recognise(fixture('010-PostToolUseFailure.json'), 'PostToolUseFailure', 'qwen').durationMs).toBe(63);
  });

  it('the failed shell call carries exit code 3 in its error text; the successes exit 0', () => {
    expect(qwenFailureExitCode(fixture('010-PostToolUseFailure.json'))).toBe(3);
    expect(qwenFailureExitCode(fixture('014-PostToolUse.json'))).toBe(0);
    expect(qwenExitCode('Command: x\nOutput: Exit Code: 0\nError: (none)\nExit Code: 127\nSignal: (none)')).toBe(127);
    expect(qwenExitCode('no trailer')).toBeNull();
    expect(qwenExitCode(42)).toBeNull();
  });

  it('a PostToolUseFailure without an exit code (a tool that failed itself) is still tool.failed', () => {
    const p = { ...fixture('010-PostToolUseFailure.json'), tool_name: 'write_file', error: 'permission denied' };
    expect(recognise(p, 'PostToolUseFailure', 'qwen').type).toBe('tool.failed');
  });

  it('only an empty prompt is a continuation: the first prompt and a Stop-hook reason are prompts', () => {
    const first = fixture('004-UserPromptSubmit.json');
    expect(recognise(first, 'UserPromptSubmit', 'qwen').type).toBe('prompt.submitted');
    expect(recognise({ ...first, prompt: 'keep going', submitted_prompt: undefined }, 'UserPromptSubmit', 'qwen').type).toBe('prompt.submitted');
    expect(recognise({ ...first, prompt: '', submitted_prompt: undefined }, 'UserPromptSubmit', 'qwen').type).toBe('turn.continued');
  });

  it("the transcript fallback: the answer is the `type: assistant` line of Qwen's chat JSONL, not the telemetry line that quotes it", () => {
    const tail = readFileSync(join(DIR, 'transcript-tail.jsonl'), 'utf8');
    const answer = answerFromTranscriptTail(tail);
    expect(answer).toContain('Added token rotation');
    expect(lastReflectionBlock(answer as string).kind).toBe('block');
    // Only the telemetry line (a system record): no answer.
    expect(answerFromTranscriptTail(tail.split('\n')[0] as string)).toBeNull();
  });

  it('Stop carries the final answer with its reflection block', () => {
    const answer = answerFromPayload(JSON.stringify(fixture('018-Stop.json')));
    expect(answer).not.toBeNull();
    const block = lastReflectionBlock(answer as string);
    expect(block.kind).toBe('block');
    expect(JSON.parse((block as { text: string }).text).confidence).toBe(0.6);
  });
});

/** Runs a kit hook the way Qwen does (`bash -c COMMAND`, its hook environment, the payload on stdin). */
function runAsQwen(command: string, dir: string, payload: string, env: NodeJS.ProcessEnv = {}) {
  const qwenEnv = fixture('hook-env.json') as Record<string, string>;
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: dir };
  const hookEnv = {
    ...base,
    ...qwenEnv,
    QWEN_PROJECT_DIR: dir,
    CLAUDE_PROJECT_DIR: dir,
    GEMINI_PROJECT_DIR: dir,
    REFLECTION_MODE: 'solo',
    FORGE_REFLECT_CLI: 'off',
    ...env,
  };
  return spawnSync('bash', ['-c', command], { cwd: dir, env: hookEnv, input: payload, encoding: 'utf8' });
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

describe('the hooks run by Qwen Code', () => {
  const payload = readFileSync(join(DIR, '010-PostToolUseFailure.json'), 'utf8');
  const qwenCmd = (registrationValue(registrationOf(qwen)).hooks as Hooks).PostToolUseFailure?.[0]?.hooks[0]?.command as string;
  const claudeCmd = (registrationValue(registrationOf(claudeCode)).hooks as Hooks).PostToolUseFailure?.[0]?.hooks[0]?.command as string;

  it('the qwen registration spools the event as qwen, prints nothing, exits 0', () => {
    const dir = tempDir();
    vendor(dir);
    const r = runAsQwen(qwenCmd, dir, payload);
    expect([r.status, r.stdout, r.stderr]).toEqual([0, '', '']);
    expect(spooled(dir)).toContain('"runtime":"qwen"');
    expect(spooled(dir)).toContain('"event":"PostToolUseFailure"');
  });

  it('the mode unset: nothing is written; the kit missing: exit 0, silent', () => {
    const dir = tempDir();
    vendor(dir);
    const off = runAsQwen(qwenCmd, dir, payload, { REFLECTION_MODE: '' });
    expect([off.status, off.stdout, off.stderr]).toEqual([0, '', '']);
    expect(existsSync(join(dir, '.forge'))).toBe(false);
    const bare = tempDir();
    const missing = runAsQwen(qwenCmd, bare, payload);
    expect([missing.status, missing.stdout, missing.stderr]).toEqual([0, '', '']);
  });

  it("Claude's registration run by Qwen is stored as qwen; with the project registered for Qwen too it records nothing (one row)", () => {
    const dir = tempDir();
    vendor(dir);
    const alone = runAsQwen(claudeCmd, dir, payload);
    expect([alone.status, alone.stdout]).toEqual([0, '']);
    expect(spooled(dir)).toContain('"runtime":"qwen"');
    expect(spooled(dir)).not.toContain('"runtime":"claude-code"');

    const both = tempDir();
    vendor(both);
    mkdirSync(join(both, '.qwen'));
    writeFileSync(join(both, '.qwen', 'settings.json'), readFileSync(join(KIT_ROOT, 'runtime', 'qwen', 'settings.json')));
    expect(runAsQwen(claudeCmd, both, payload).status).toBe(0);
    expect(spooled(both)).toBe('');
    expect(runAsQwen(qwenCmd, both, payload).status).toBe(0);
    expect(spooled(both).match(/"runtime":"qwen"/g)).toHaveLength(1);
  });

  it("a Claude Code hook whose environment only inherited Qwen's session (a runtime started from Qwen's shell tool) stays claude-code", () => {
    const dir = tempDir();
    vendor(dir);
    const r = runAsQwen(claudeCmd, dir, payload, { QWEN_PROJECT_DIR: '' });
    expect(r.status).toBe(0);
    expect(spooled(dir)).toContain('"runtime":"claude-code"');
  });
});

describe('Qwen Code doctor: folder trust', () => {
  it('off by default: ok, and install prints no trust step', () => {
    const home = tempDir();
    const repo = tempDir();
    expect(folderTrustEnabled(repo, { HOME: home })).toBe(false);
    expect(qwen.trustSteps(repo, { HOME: home })).toEqual([]);
    expect(qwen.doctorChecks(repo, { HOME: home }).find((c) => c.name === 'qwen folder trust')?.status).toBe('ok');
  });

  it('on and the folder untrusted: warn with the step; trusted (or a parent trusted): ok', () => {
    const home = tempDir();
    const repo = tempDir();
    mkdirSync(join(home, '.qwen'));
    writeFileSync(join(home, '.qwen', 'settings.json'), JSON.stringify({ security: { folderTrust: { enabled: true } } }));
    const untrusted = qwen.doctorChecks(repo, { HOME: home }).find((c) => c.name === 'qwen folder trust');
    expect(untrusted?.status).toBe('warn');
    expect(untrusted?.fix).toContain('TRUST_FOLDER');
    expect(qwen.trustSteps(repo, { HOME: home })).toHaveLength(1);
    writeFileSync(join(home, '.qwen', 'trustedFolders.json'), JSON.stringify({ [join(repo, '..')]: 'TRUST_FOLDER' }));
    expect(qwen.doctorChecks(repo, { HOME: home }).find((c) => c.name === 'qwen folder trust')?.status).toBe('ok');
    expect(qwenFolderTrusted({ [repo]: 'DO_NOT_TRUST', [join(repo, '..')]: 'TRUST_FOLDER' }, repo)).toBe(false);
  });

  it('hooks switched off, or the kit in the user settings too, are reported', () => {
    const home = tempDir();
    const repo = tempDir();
    mkdirSync(join(home, '.qwen'));
    writeFileSync(join(home, '.qwen', 'settings.json'), JSON.stringify({ disableAllHooks: true, hooks: registrationValue(registrationOf(claudeCode)).hooks }));
    const checks = qwen.doctorChecks(repo, { HOME: home });
    expect(checks.find((c) => c.name === 'qwen hooks switch')?.status).toBe('fail');
    expect(checks.find((c) => c.name === 'qwen user hooks')?.status).toBe('warn');
  });
});
