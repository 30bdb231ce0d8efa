/**
 * Qwen Code (0.24.4): Claude-shaped hooks in `<repo>/.qwen/settings.json` (the project layer; arrays
 * are concatenated with the user's ~/.qwen/settings.json), timeouts in seconds (values of 1000 and
 * more are read as legacy milliseconds, so the kit's stay well below).
 *
 * Commands: Qwen runs a hook with `bash -c` in the project folder and exports QWEN_PROJECT_DIR (and
 * CLAUDE_PROJECT_DIR, GEMINI_PROJECT_DIR) as the project; a bash command is passed on unchanged, so
 * the variable is read by the shell. QWEN_CODE_PROJECT_DIR is Qwen's own state folder, never the
 * project. A command exits 0 and prints nothing when the vendored hooks are missing.
 *
 * Payloads: every event has session_id, transcript_path (`~/.qwen/projects/<slug>/chats/<id>.jsonl`),
 * cwd, hook_event_name, an ISO `timestamp` and permission_mode; turn events add prompt_id
 * (`<session>########<n>`). A shell command that exits non-zero is PostToolUseFailure with the code
 * only in the `error` text (`Exit Code: N`). UserPromptSubmit fires again with `prompt: ""` before
 * every model call that follows tool results: that is the same turn going on, logged as
 * `turn.continued`, never as a prompt. Stop carries `last_assistant_message` (the self-report's
 * source; the transcript is the fallback). SessionEnd does not fire in headless runs: nothing
 * depends on it.
 *
 * Folder trust: off by default (every folder trusted). When a user turns it on
 * (`security.folderTrust.enabled`), project hooks of a folder not in ~/.qwen/trustedFolders.json
 * are skipped without a word.
 */
import { homedir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { scriptPath, type Check, type RuntimeModule, type ShapeRule } from './module.js';
import type { EventType } from '../events.js';
import { readRegularText } from '../regular-file.js';
import { compactedStart } from './claude-code.js';
import { typesFor, type KitHook } from './hook-map.js';
import { has, ms, obj, str, type Payload } from './payload.js';

export const QWEN_SETTINGS_FILE = '.qwen/settings.json';

/** Events only Qwen Code sends (a payload naming one is Qwen's whatever else it holds). */
const QWEN_ONLY_EVENTS = new Set([
  'PostToolBatch',
  'MessageDisplay',
  'InstructionsLoaded',
  'UserPromptExpansion',
  'SessionDelete',
  'TodoCreated',
  'TodoCompleted',
]);

/** `<session>########<n>`: Qwen's prompt id. */
const PROMPT_ID = /^[^#]+#{8}\d+$/;
/** `…/.qwen/projects/<slug>/chats/<id>.jsonl`: Qwen's transcript. */
const QWEN_TRANSCRIPT = /\/\.qwen\/projects\/[^/]+\/chats\/[^/]+\.jsonl$/;

/**
 * The exit code of a failed shell call: the `Exit Code: N` line of the `error` text (Qwen's shell
 * tool writes `Command:`, `Directory:`, `Output:`, `Error:`, `Exit Code:`, `Signal:` lines, in that
 * order). Only a line after the `Output:` line counts: the command's own output may hold such a line,
 * but the trailer comes after it, so the last one is taken. Null when there is none.
 */
export function qwenExitCode(error: unknown): number | null {
  if (typeof error !== 'string') return null;
  const text = error.length > 65_536 ? error.slice(-65_536) : error;
  let found: number | null = null;
  for (const m of text.matchAll(/^Exit Code: (-?\d{1,6})\r?$/gm)) found = Number(m[1]);
  return found;
}

/** A continuation of the turn: UserPromptSubmit with an empty prompt (tool results went back to the model). */
export function isContinuation(p: Payload, hookEvent: string | null): boolean {
  return hookEvent === 'UserPromptSubmit' && has(p, 'prompt') && p.prompt === '' && !str(p.submitted_prompt);
}

const types: Record<string, EventType> = { ...typesFor('qwen') };

const shape: ShapeRule = {
  runtime: 'qwen',
  signature: 'prompt_id `<session>########<n>`, or a …/.qwen/projects/…/chats/….jsonl transcript_path, or a Qwen-only event (PostToolBatch, MessageDisplay, …)',
  matches: (p) => {
    const event = str(p.hook_event_name);
    if (event !== null && QWEN_ONLY_EVENTS.has(event)) return true;
    if (typeof p.prompt_id === 'string' && PROMPT_ID.test(p.prompt_id)) return true;
    return typeof p.transcript_path === 'string' && QWEN_TRANSCRIPT.test(p.transcript_path);
  },
  eventName: (p, hookArg) => str(p.hook_event_name) ?? str(hookArg),
  types,
  refine: (type, p, hookEvent) => {
    if (isContinuation(p, hookEvent)) return 'turn.continued';
    // A failure event is a failure, with or without a code; a PostToolUse is a success (Qwen sends
    // every failed call as PostToolUseFailure).
    if (hookEvent === 'PostToolUseFailure') return 'tool.failed';
    return compactedStart(type, p, hookEvent);
  },
  fields: (p) => ({
    sessionId: str(p.session_id),
    agentId: str(p.agent_id),
    toolName: str(p.tool_name),
    toolUseId: str(p.tool_use_id) ?? str(p.tool_call_id),
    durationMs: ms(p.duration_ms),
    cwd: str(p.cwd),
  }),
};

/** The exit code of a Qwen tool.failed payload, for readers of the log. */
export function qwenFailureExitCode(p: Payload): number | null {
  return qwenExitCode(p.error) ?? qwenExitCode(obj(p.tool_response)?.llmContent);
}

/** `~/.qwen/settings.json`, `~/.qwen/trustedFolders.json` (QWEN_CODE_TRUSTED_FOLDERS_PATH overrides the latter). */
export function qwenUserSettingsPath(env: NodeJS.ProcessEnv): string {
  return join(env.HOME || homedir(), '.qwen', 'settings.json');
}
export function qwenTrustedFoldersPath(env: NodeJS.ProcessEnv): string {
  return env.QWEN_CODE_TRUSTED_FOLDERS_PATH || join(env.HOME || homedir(), '.qwen', 'trustedFolders.json');
}

function readJson(path: string): Payload | undefined {
  try {
    return obj(JSON.parse(readRegularText(path)));
  } catch {
    return undefined;
  }
}

/** Whether folder trust is switched on (`security.folderTrust.enabled: true`) in the user's or the project's settings. */
export function folderTrustEnabled(repo: string, env: NodeJS.ProcessEnv): boolean {
  for (const path of [qwenUserSettingsPath(env), join(repo, QWEN_SETTINGS_FILE)]) {
    const enabled = obj(obj(obj(readJson(path)?.security)?.folderTrust))?.enabled;
    if (enabled === true) return true;
  }
  return false;
}

/**
 * Whether trustedFolders.json trusts `folder`: a TRUST_FOLDER rule on it or an ancestor, or a
 * TRUST_PARENT rule on a child of it or of an ancestor; the closest rule wins (DO_NOT_TRUST too).
 */
export function qwenFolderTrusted(rules: unknown, folder: string): boolean {
  const map = obj(rules);
  if (!map) return false;
  const target = resolve(folder);
  let best: { depth: number; trusted: boolean } | null = null;
  for (const [path, level] of Object.entries(map)) {
    if (typeof level !== 'string') continue;
    const base = level === 'TRUST_PARENT' ? dirname(resolve(path)) : resolve(path);
    if (target !== base && !target.startsWith(base.endsWith(sep) ? base : base + sep)) continue;
    if (best === null || base.length > best.depth) best = { depth: base.length, trusted: level !== 'DO_NOT_TRUST' };
  }
  return best?.trusted ?? false;
}

function trustSteps(repo: string, env: NodeJS.ProcessEnv): string[] {
  if (!folderTrustEnabled(repo, env)) return [];
  return [
    `Qwen Code has folder trust on: it skips the hooks of ${QWEN_SETTINGS_FILE} in an untrusted folder without a word. Trust ${repo} when \`qwen\` asks, or add ${JSON.stringify(repo)}: "TRUST_FOLDER" to ${qwenTrustedFoldersPath(env)}`,
  ];
}

function doctorChecks(repo: string, env: NodeJS.ProcessEnv): Check[] {
  const checks: Check[] = [];
  const trustFile = qwenTrustedFoldersPath(env);
  if (!folderTrustEnabled(repo, env)) {
    checks.push({ name: 'qwen folder trust', status: 'ok', detail: 'folder trust is off (security.folderTrust.enabled): every folder runs its project hooks' });
  } else if (qwenFolderTrusted(readJson(trustFile), repo)) {
    checks.push({ name: 'qwen folder trust', status: 'ok', detail: `${repo} is trusted in ${trustFile}` });
  } else {
    checks.push({
      name: 'qwen folder trust',
      status: 'warn',
      detail: `folder trust is on and ${repo} is not trusted: Qwen Code skips ${QWEN_SETTINGS_FILE} hooks there`,
      fix: trustSteps(repo, env)[0] as string,
    });
  }
  for (const path of [qwenUserSettingsPath(env), join(repo, QWEN_SETTINGS_FILE)]) {
    const settings = readJson(path);
    if (settings?.disableAllHooks === true || obj(settings?.hooksConfig)?.enabled === false) {
      checks.push({
        name: 'qwen hooks switch',
        status: 'fail',
        detail: `${path} turns all hooks off`,
        fix: `remove disableAllHooks (or hooksConfig.enabled: false) from ${path}`,
      });
    }
  }
  // The kit in the user's settings as well: its registrations would fire beside the project's.
  try {
    if (readRegularText(qwenUserSettingsPath(env)).includes('hooks/forge-reflect/reflect-')) {
      checks.push({
        name: 'qwen user hooks',
        status: 'warn',
        detail: `${qwenUserSettingsPath(env)} registers the kit's hooks too: Qwen runs them beside the project's`,
        fix: `remove the forge-reflect hooks from ${qwenUserSettingsPath(env)}`,
      });
    }
  } catch {
    // no user settings
  }
  return checks;
}

/**
 * The command: the kit's modes checked in the command (bash starts only when the kit is on), the
 * script tested first so a missing kit exits 0 silently, BASH_ENV emptied (a user's file would run
 * inside every hook and could print on stdout, which Qwen reads as the hook's answer).
 */
export function qwenCommand(hook: KitHook, event: string): string {
  const script = `"$QWEN_PROJECT_DIR"/${scriptPath(hook)}`;
  const args = hook === 'event' ? `${event} qwen` : 'qwen';
  const locale = hook === 'event' ? 'LC_ALL=C ' : '';
  return `case "$REFLECTION_MODE" in solo|orchestrated) [ -f ${script} ] && ${locale}BASH_ENV= exec bash ${script} ${args};; esac; exit 0`;
}

export const qwen: RuntimeModule = {
  id: 'qwen',
  label: 'Qwen Code',
  registrationFile: () => QWEN_SETTINGS_FILE,
  registrationFiles: [QWEN_SETTINGS_FILE],
  command: qwenCommand,
  handler(hook, event, timeoutSeconds) {
    return { type: 'command', command: this.command(hook, event), timeout: timeoutSeconds };
  },
  shape,
  trustSteps,
  doctorChecks,
};
