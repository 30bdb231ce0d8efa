/**
 * Gemini CLI: `<repo>/.gemini/settings.json` (loaded only in a trusted folder), merged like Claude's,
 * Gemini's own event names, timeouts in milliseconds.
 *
 * Commands: Gemini rewrites `$GEMINI_PROJECT_DIR` in the command text into the shell-quoted project
 * path before `bash -c`, so it is written bare (`"$GEMINI_PROJECT_DIR"` would double-quote and break
 * on a space). Gemini also expands `$NAME` in every settings string from its own environment when
 * it loads the file, so the commands use no other shell variable. Every command exits 0 and prints
 * nothing when the vendored hooks are missing: Gemini treats exit >= 2 with output as a deny.
 *
 * Environment: with GITHUB_SHA set (CI) Gemini strips most of the environment from hooks, so
 * REFLECTION_MODE would not arrive. Each hook's `"env"` passes it through as
 * `"${REFLECTION_MODE:-off}"`, which Gemini expands at load time to the user's own value (a
 * literal "solo" would switch the kit on for everyone).
 *
 * Payloads: session_id (UUID v4), `timestamp`, no turn id, no tool-call id and no duration (tool
 * durations stay null: BeforeTool and AfterTool could only be paired by order, which parallel
 * calls make unsound). A failed shell command shows only as an `Exit Code: N` line in
 * tool_response.llmContent; a tool that failed itself sets tool_response.error. SessionEnd fires up
 * to three times on an interactive /quit; the drain keeps the first (see dedupe in drain.ts).
 */
import { homedir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { scriptPath, type Check, type RuntimeModule, type ShapeRule } from './module.js';
import type { EventType } from '../events.js';
import { typesFor, type KitHook } from './hook-map.js';
import { has, obj, str, type Payload } from './payload.js';
import { readRegularText } from '../regular-file.js';

export const GEMINI_SETTINGS_FILE = '.gemini/settings.json';
export const GEMINI_HOOK_NAME = 'forge-reflect';
/** The hook-level env: the user's own REFLECTION_MODE, expanded by Gemini when it loads settings. */
export const GEMINI_HOOK_ENV = { REFLECTION_MODE: '${REFLECTION_MODE:-off}' } as const;

const GEMINI_ONLY_EVENTS = new Set(['BeforeAgent', 'AfterAgent', 'BeforeModel', 'AfterModel', 'BeforeToolSelection', 'BeforeTool', 'AfterTool', 'PreCompress']);

/** The text of an llmContent: a string, a part `{text}`, or a list of those. */
function contentText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(contentText).join('\n');
  const part = obj(value);
  return typeof part?.text === 'string' ? part.text : '';
}

const TRAILER_SKIP = /^(Process Group PGID: \d+|Background PIDs: [\d, ]+)$/;

/**
 * Whether an AfterTool result is a failure, and its exit code when the shell tool gave one. The
 * shell tool ends its llmContent with `Output: …` then, only when set, `Error: …`, `Exit Code: N`
 * (non-zero only), `Signal: S`, `Background PIDs: …`, `Process Group PGID: N`; only that trailer is
 * read, from the end, so an `Exit Code:` line inside the command's own output above it does not
 * count. A cancelled or timed-out command and a tool's own `error` are failures too.
 */
export function geminiToolOutcome(response: unknown): { failed: boolean; exitCode: number | null } {
  const r = obj(response);
  if (!r) return { failed: false, exitCode: null };
  const error = r.error;
  let failed = error !== undefined && error !== null && error !== '' && error !== false;
  const text = contentText(r.llmContent)
    .replace(/\s*<\/untrusted_context>\s*$/, '')
    .replace(/^\s*<untrusted_context>\s*/, '');
  if (/^Command was (automatically cancelled|cancelled by user)/.test(text)) failed = true;
  const lines = text.split(/\r?\n/);
  let exitCode: number | null = null;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = (lines[i] as string).trim();
    if (line === '' || TRAILER_SKIP.test(line)) continue;
    const signal = /^Signal: (\S+)$/.exec(line);
    if (signal) {
      failed = true;
      continue;
    }
    const code = /^Exit Code: (-?\d+)$/.exec(line);
    if (code) {
      exitCode = Number(code[1]);
      if (exitCode !== 0) failed = true;
    }
    break;
  }
  return { failed, exitCode };
}

const types = typesFor('gemini');

const shape: ShapeRule = {
  runtime: 'gemini',
  signature: 'hook_event_name AfterTool/AfterAgent/… (or with an ISO `timestamp`), or tool_response.llmContent, or a …/.gemini/tmp/… transcript_path',
  matches: (p) => {
    const event = str(p.hook_event_name);
    if (event !== null && GEMINI_ONLY_EVENTS.has(event)) return true;
    if (obj(p.tool_response)?.llmContent !== undefined) return true;
    if (typeof p.transcript_path === 'string' && /\/\.gemini\/tmp\//.test(p.transcript_path)) return true;
    return event !== null && has(p, 'session_id') && typeof p.timestamp === 'string';
  },
  eventName: (p, hookArg) => str(p.hook_event_name) ?? str(hookArg),
  // PreCompress is not mapped: it fires before every model request, not at a compaction.
  types,
  refine: (type: EventType, p: Payload) => (type === 'tool.executed' && geminiToolOutcome(p.tool_response).failed ? 'tool.failed' : type),
  fields: (p) => ({
    sessionId: str(p.session_id),
    agentId: null,
    toolName: str(p.tool_name),
    toolUseId: str(p.tool_use_id),
    durationMs: null,
    cwd: str(p.cwd),
  }),
};

/** `~/.gemini/trustedFolders.json`. */
export function trustedFoldersPath(env: NodeJS.ProcessEnv): string {
  return join(env.HOME || homedir(), '.gemini', 'trustedFolders.json');
}

/**
 * Whether Gemini trusts the folder: GEMINI_CLI_TRUST_WORKSPACE=true, or trustedFolders.json marks
 * it (or an ancestor) TRUST_FOLDER, or marks a folder TRUST_PARENT whose parent is it or an ancestor.
 * The most specific rule wins; DO_NOT_TRUST on a closer folder overrides.
 */
export function folderTrusted(rules: unknown, folder: string, env: NodeJS.ProcessEnv): boolean {
  if (env.GEMINI_CLI_TRUST_WORKSPACE === 'true') return true;
  const map = obj(rules);
  if (!map) return false;
  const target = resolve(folder);
  let best: { depth: number; trusted: boolean } | null = null;
  for (const [path, level] of Object.entries(map)) {
    if (typeof level !== 'string') continue;
    const base = level === 'TRUST_PARENT' ? dirname(resolve(path)) : resolve(path);
    const covers = target === base || target.startsWith(base.endsWith(sep) ? base : base + sep);
    if (!covers) continue;
    const depth = base.length;
    if (best === null || depth > best.depth) best = { depth, trusted: level !== 'DO_NOT_TRUST' };
  }
  return best?.trusted ?? false;
}

function trustSteps(repo: string, env: NodeJS.ProcessEnv): string[] {
  return [
    `Gemini CLI loads .gemini/settings.json only in a trusted folder: start \`gemini\` in ${repo} and trust the folder, or add ${JSON.stringify(repo)}: "TRUST_FOLDER" to ${trustedFoldersPath(env)} (headless and CI: GEMINI_CLI_TRUST_WORKSPACE=true; --skip-trust runs without the project's settings, so without hooks)`,
  ];
}

function doctorChecks(repo: string, env: NodeJS.ProcessEnv): Check[] {
  const checks: Check[] = [];
  const path = trustedFoldersPath(env);
  let rules: unknown = null;
  try {
    rules = JSON.parse(readRegularText(path));
  } catch {
    // none yet
  }
  checks.push(
    folderTrusted(rules, repo, env)
      ? {
          name: 'gemini folder trust',
          status: 'ok',
          detail: env.GEMINI_CLI_TRUST_WORKSPACE === 'true' ? 'GEMINI_CLI_TRUST_WORKSPACE=true' : `${repo} is trusted in ${path}`,
        }
      : {
          name: 'gemini folder trust',
          status: 'warn',
          detail: `${repo} is not a trusted folder: Gemini CLI ignores .gemini/settings.json there`,
          fix: trustSteps(repo, env)[0] as string,
        },
  );
  try {
    const settings = obj(JSON.parse(readRegularText(join(repo, GEMINI_SETTINGS_FILE))));
    const config = obj(settings?.hooksConfig);
    if (config?.enabled === false) {
      checks.push({
        name: 'gemini hooks switch',
        status: 'fail',
        detail: `hooksConfig.enabled is false in ${GEMINI_SETTINGS_FILE}: no hook runs`,
        fix: `remove "enabled": false from hooksConfig in ${GEMINI_SETTINGS_FILE}`,
      });
    } else if (Array.isArray(config?.disabled) && config.disabled.includes(GEMINI_HOOK_NAME)) {
      checks.push({
        name: 'gemini hooks switch',
        status: 'fail',
        detail: `hooksConfig.disabled lists ${GEMINI_HOOK_NAME}`,
        fix: `take ${GEMINI_HOOK_NAME} out of hooksConfig.disabled in ${GEMINI_SETTINGS_FILE}`,
      });
    }
  } catch {
    // unreadable settings are reported by the registrations check
  }
  return checks;
}

export const gemini: RuntimeModule = {
  id: 'gemini',
  label: 'Gemini CLI',
  registrationFile: () => GEMINI_SETTINGS_FILE,
  registrationFiles: [GEMINI_SETTINGS_FILE],
  command(hook: KitHook, event: string) {
    const script = `$GEMINI_PROJECT_DIR/${scriptPath(hook)}`;
    const args = hook === 'event' ? `${event} gemini` : 'gemini';
    return `[ -f ${script} ] && FORGE_PROJECT_DIR=$GEMINI_PROJECT_DIR bash ${script} ${args}; exit 0`;
  },
  handler(hook, event, timeoutSeconds) {
    return { type: 'command', name: GEMINI_HOOK_NAME, command: this.command(hook, event), timeout: timeoutSeconds * 1000, env: { ...GEMINI_HOOK_ENV } };
  },
  shape,
  trustSteps,
  doctorChecks,
};
