/**
 * GitHub Copilot CLI (1.0.102): hooks in `<repo>/.github/hooks/*.json` (its own format,
 * `{"version":1,"hooks":{"<Event>":[{"type":"command","bash":"…","timeoutSec":n}]}}`). The kit
 * writes one file of its own there, `.github/hooks/forge-reflect.json`, removed by uninstall.
 *
 * Event names: the case of a registered name picks the payload format. The kit registers the
 * PascalCase names, so Copilot sends snake_case fields with `hook_event_name` (the same shape it
 * sends when it runs `.claude/settings.json`): one payload format, whichever registration fired.
 *
 * Commands: Copilot runs a hook through a shell in the folder it was started in and exports
 * COPILOT_PROJECT_DIR (and CLAUDE_PROJECT_DIR) as the project and COPILOT_CLI=1; the hooks name the
 * runtime from those (hooks/lib/common.sh forge_runtime), so Copilot running the kit's Claude Code
 * registration is logged as copilot, and records nothing when this file registers the kit too.
 *
 * Payloads: no tool-call id, no duration. A shell command that exits non-zero is a *successful*
 * PostToolUse: the code is only in the result text's trailer `<shellId: N completed with exit code
 * K>` (typed tool.failed here). PostToolUseFailure is a tool error (a path check, say). Stop carries
 * no answer: the transcript (`transcript_path`, Copilot's own `events.jsonl`) holds it
 * (copilot-transcript.ts). A subagent's turn fires UserPromptSubmit and Stop under the subagent's
 * id, with agent_id and parent_agent_id: logged under the parent session, with the subagent as agent.
 *
 * Folder trust: repo hooks (both `.github/hooks` and `.claude/settings.json`) do not run at all in
 * a folder that is not trusted, and nothing says so.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { scriptPath, type Check, type HookFile, type RuntimeModule, type ShapeRule } from './module.js';
import type { EventType } from '../events.js';
import { readRegularText } from '../regular-file.js';
import { compactedStart } from './claude-code.js';
import { isCopilotTranscript } from './copilot-transcript.js';
import { bindingsFor, typesFor, type KitHook } from './hook-map.js';
import { has, ms, obj, str, type Payload } from './payload.js';

export const COPILOT_HOOKS_FILE = '.github/hooks/forge-reflect.json';

/** camelCase names (a hand-made registration, or a payload without an envelope runtime). */
const CAMEL_TYPES: Readonly<Record<string, EventType>> = {
  sessionStart: 'session.started',
  userPromptSubmitted: 'prompt.submitted',
  postToolUse: 'tool.executed',
  postToolUseFailure: 'tool.failed',
  agentStop: 'turn.stopped',
  subagentStop: 'subagent.stopped',
  sessionEnd: 'session.ended',
  preCompact: 'context.compacting',
  notification: 'notification',
};

/** camelCase payloads do not name their event; the fields tell which one it is. */
function camelEventFromFields(p: Payload): string | null {
  if (has(p, 'toolResult')) return 'postToolUse';
  if (has(p, 'toolName') || has(p, 'toolArgs')) return has(p, 'error') ? 'postToolUseFailure' : 'preToolUse';
  if (has(p, 'stopReason')) return has(p, 'agentId') && has(p, 'response') ? 'subagentStop' : 'agentStop';
  if (has(p, 'prompt')) return 'userPromptSubmitted';
  if (has(p, 'error')) return 'errorOccurred';
  if (has(p, 'reason')) return 'sessionEnd';
  if (has(p, 'source') || has(p, 'initialPrompt')) return 'sessionStart';
  return null;
}

/**
 * The exit code of a shell call from its result text: the trailer `<shellId: N completed with exit
 * code K>` that ends it (the command's own output comes before it and may hold such a line, so only
 * the text's end counts). Null when there is none.
 */
export function copilotExitCode(text: unknown): number | null {
  if (typeof text !== 'string') return null;
  const end = text.length > 4096 ? text.slice(-4096) : text;
  const m = /<shellId: [^<>\n]{1,64} completed with exit code (-?\d{1,6})>\s*$/.exec(end);
  return m ? Number(m[1]) : null;
}

/** The result text of a tool call, in either payload case. */
function resultText(p: Payload): unknown {
  return obj(p.tool_result)?.text_result_for_llm ?? obj(p.toolResult)?.textResultForLlm;
}

/** The exit code a Copilot tool event shows (null: none, e.g. not a shell call), for readers of the log. */
export function copilotFailureExitCode(p: Payload): number | null {
  return copilotExitCode(resultText(p));
}

/** A subagent's own event (its UserPromptSubmit, its Stop): it names its parent. */
export function isSubagentEvent(p: Payload): boolean {
  return str(p.parent_agent_id) !== null || str(p.parentAgentId) !== null;
}

const types: Record<string, EventType> = { ...CAMEL_TYPES, ...typesFor('copilot') };

const shape: ShapeRule = {
  runtime: 'copilot',
  signature:
    'camelCase sessionId without session_id (+ toolName/toolArgs/toolResult, stopReason, …), or tool_result.text_result_for_llm, or a …/session-state/<id>/events.jsonl transcript_path',
  matches: (p) =>
    (typeof p.sessionId === 'string' && !has(p, 'session_id') && !has(p, 'hook_event_name')) ||
    typeof obj(p.tool_result)?.text_result_for_llm === 'string' ||
    (typeof p.transcript_path === 'string' && isCopilotTranscript(p.transcript_path)),
  eventName: (p, hookArg) => {
    const named = str(p.hook_event_name);
    if (named !== null) return named;
    // camelCase payloads name no event: the registered camelCase name, else their fields tell.
    if (typeof p.sessionId === 'string' && !has(p, 'session_id')) return has(CAMEL_TYPES, hookArg) ? hookArg : (camelEventFromFields(p) ?? str(hookArg));
    return str(hookArg);
  },
  types,
  refine: (type, p, hookEvent) => {
    if (hookEvent === 'PostToolUseFailure' || hookEvent === 'postToolUseFailure') return 'tool.failed';
    if (type === 'tool.executed') {
      const resultType = obj(p.tool_result)?.result_type ?? obj(p.toolResult)?.resultType;
      if (resultType === 'failure' || resultType === 'denied') return 'tool.failed';
      const code = copilotFailureExitCode(p);
      if (code !== null && code !== 0) return 'tool.failed';
    }
    // The subagent's own turn end: the subagent's, not a turn of the session.
    if (type === 'turn.stopped' && isSubagentEvent(p)) return 'subagent.stopped';
    return compactedStart(type, p, hookEvent);
  },
  fields: (p) => {
    const parent = str(p.parent_agent_id) ?? str(p.parentAgentId);
    return {
      // A subagent's own events carry its id as the session: they belong to the parent's.
      sessionId: (isSubagentEvent(p) ? parent : null) ?? str(p.session_id) ?? str(p.sessionId),
      agentId: str(p.agent_id) ?? str(p.agentId),
      toolName: str(p.tool_name) ?? str(p.toolName),
      toolUseId: str(p.tool_use_id) ?? str(p.toolCallId),
      durationMs: ms(p.duration_ms) ?? ms(p.durationMs),
      cwd: str(p.cwd),
    };
  },
};

/**
 * The command: the modes checked in the command (bash starts only when the kit is on), the script
 * tested first so a missing kit exits 0 silently, BASH_ENV emptied (a user's file would run inside
 * every hook and could print on stdout, which Copilot reads as the hook's answer).
 */
export function copilotCommand(hook: KitHook, event: string, stopEvent = ''): string {
  const script = `"$COPILOT_PROJECT_DIR"/${scriptPath(hook)}`;
  const args = hook === 'event' ? `${event} copilot` : stopEvent ? `copilot ${stopEvent}` : 'copilot';
  const locale = hook === 'event' ? 'LC_ALL=C ' : '';
  return `case "$REFLECTION_MODE" in solo|orchestrated) [ -f ${script} ] && ${locale}BASH_ENV= exec bash ${script} ${args};; esac; exit 0`;
}

/**
 * The kit's file in `.github/hooks/`, rendered from the hook map, plus two entries of Copilot's own:
 * a turn that ends on a model error fires ErrorOccurred, then SessionEnd with reason "error", and no
 * Stop. ErrorOccurred is logged (its error text; typed event.unknown), and SessionEnd goes to the Stop
 * hook as well, which writes that turn's sidecar (degraded, with the reason) on an error end only and
 * spools nothing (the event hook logs the SessionEnd).
 */
export function copilotHooksText(): string {
  const hooks: Record<string, unknown[]> = {};
  for (const b of bindingsFor('copilot')) {
    hooks[b.event] = [{ type: 'command', bash: copilotCommand(b.hook, b.event), timeoutSec: b.timeoutSeconds }];
  }
  const stop = bindingsFor('copilot').find((b) => b.hook === 'stop');
  if (hooks.SessionEnd && stop)
    hooks.SessionEnd.push({ type: 'command', bash: copilotCommand('stop', stop.event, 'SessionEnd'), timeoutSec: stop.timeoutSeconds });
  hooks.ErrorOccurred = [{ type: 'command', bash: copilotCommand('event', 'ErrorOccurred'), timeoutSec: 10 }];
  return `${JSON.stringify({ version: 1, hooks }, null, 2)}\n`;
}

function copilotHookFiles(): HookFile[] {
  return [{ rel: COPILOT_HOOKS_FILE, text: copilotHooksText(), mode: 0o644 }];
}

/** `$COPILOT_HOME/config.json` (default ~/.copilot/config.json), where `trustedFolders` lives. */
export function copilotConfigPath(env: NodeJS.ProcessEnv): string {
  return join(env.COPILOT_HOME || join(env.HOME || homedir(), '.copilot'), 'config.json');
}

/**
 * Whether a `trustedFolders` list names `folder`. Copilot compares each entry with the folder as a
 * path (its own check may trust more); only the folder itself counts here, so doctor never says
 * "trusted" where Copilot would skip the hooks.
 */
export function copilotFolderTrusted(config: unknown, folder: string): boolean {
  const list = obj(config)?.trustedFolders;
  if (!Array.isArray(list)) return false;
  const target = resolve(folder);
  return list.some((entry) => typeof entry === 'string' && entry !== '' && resolve(entry) === target);
}

function readConfig(env: NodeJS.ProcessEnv): unknown {
  try {
    return JSON.parse(readRegularText(copilotConfigPath(env)));
  } catch {
    return undefined;
  }
}

function trustSteps(repo: string, env: NodeJS.ProcessEnv): string[] {
  if (copilotFolderTrusted(readConfig(env), repo)) return [];
  return [
    `GitHub Copilot CLI runs no repository hook in a folder it does not trust, without a word: trust ${repo} when \`copilot\` asks (or add it to "trustedFolders" in ${copilotConfigPath(env)}; headless: --trust-folder or COPILOT_ALLOW_ALL=true)`,
  ];
}

function doctorChecks(repo: string, env: NodeJS.ProcessEnv): Check[] {
  const checks: Check[] = [];
  const config = copilotConfigPath(env);
  if (copilotFolderTrusted(readConfig(env), repo)) {
    checks.push({ name: 'copilot folder trust', status: 'ok', detail: `${repo} is in trustedFolders of ${config}` });
  } else if (env.COPILOT_ALLOW_ALL === 'true') {
    checks.push({ name: 'copilot folder trust', status: 'ok', detail: 'COPILOT_ALLOW_ALL=true trusts every folder' });
  } else {
    checks.push({
      name: 'copilot folder trust',
      status: 'warn',
      detail: `${repo} is not in trustedFolders of ${config}: Copilot CLI skips ${COPILOT_HOOKS_FILE} (and .claude/settings.json) there unless started with --trust-folder`,
      fix: trustSteps(repo, env)[0] as string,
    });
  }
  let text: string | null = null;
  try {
    text = readRegularText(join(repo, COPILOT_HOOKS_FILE));
  } catch {
    text = null;
  }
  if (text === null) {
    checks.push({
      name: 'copilot hooks',
      status: 'fail',
      detail: `${COPILOT_HOOKS_FILE} is missing or not a regular file`,
      fix: 'forge-reflect install --runtime copilot',
    });
  } else if (text !== copilotHooksText()) {
    checks.push({
      name: 'copilot hooks',
      status: 'warn',
      detail: `${COPILOT_HOOKS_FILE} differs from the kit's registration`,
      fix: 'forge-reflect install --runtime copilot',
    });
  } else {
    checks.push({
      name: 'copilot hooks',
      status: 'ok',
      detail: `${COPILOT_HOOKS_FILE} is the kit's registration (${Object.keys(obj(JSON.parse(text))?.hooks ?? {}).join(', ')})`,
    });
  }
  return checks;
}

export const copilot: RuntimeModule = {
  id: 'copilot',
  label: 'GitHub Copilot CLI',
  registrationFile: () => COPILOT_HOOKS_FILE,
  registrationFiles: [],
  command: copilotCommand,
  handler(hook, event, timeoutSeconds) {
    return { type: 'command', bash: this.command(hook, event), timeoutSec: timeoutSeconds };
  },
  hookFiles: copilotHookFiles,
  shape,
  trustSteps,
  doctorChecks,
};
