/**
 * Cline CLI (3.0.65): no settings file. A hook is an executable file named after the event, found in
 * `<workspace>/.clinerules/hooks/`, `<workspace>/.cline/hooks/`, `~/.cline/hooks/` and
 * `~/Documents/Cline/Hooks/`, every one of which runs. install writes one small wrapper per event
 * into `.clinerules/hooks/` that execs the vendored kit hook with the event and `cline`.
 *
 * Running: Cline starts the file by its absolute path, cwd the workspace root, the payload as one JSON
 * text on stdin; it sets no project variable, so the wrapper takes the project from its own path
 * (the folder above `.clinerules/hooks/`, which is the workspace root), else the cwd. Cline reads a
 * hook's stdout as its answer: `{"cancel":true}` there aborts the whole task, so the wrapper sends
 * the kit hook's stdout to /dev/null on top of the hook's own silence. TaskComplete (and TaskError)
 * run detached: Cline neither waits for them nor reads what they print.
 *
 * Payloads: every event has taskId, sessionContext.rootSessionId (the session: its files are
 * `~/.cline/data/sessions/<rootSessionId>/`), workspaceRoots, agent_id, parent_agent_id and
 * `hookName`, Cline's internal name (agent_start, tool_result, agent_end, …), not the event's.
 * PostToolUse says `postToolUse.success: true` for a shell command that failed: the failure is only
 * in `tool_result.output[i]` (`success: false`, `error: "Command exited with code N"`), one item per
 * command. TaskComplete carries the final answer in `turn.outputText`; there is no transcript path.
 * A spawn_agent subagent fires TaskStart and TaskComplete of its own (its own taskId and agent_id,
 * the session's rootSessionId, `parent_agent_id` set): the Stop hook spools its TaskComplete as the
 * subagent's event and writes no sidecar.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { scriptPath, type Check, type HookFile, type RuntimeModule, type ShapeRule } from './module.js';
import type { EventType } from '../events.js';
import { bindingsFor, typesFor, type KitHook } from './hook-map.js';
import { firstString, has, ms, obj, str, type Payload } from './payload.js';
import { readRegularText } from '../regular-file.js';

/** Where install writes the wrappers (the folder Cline's documentation names for a workspace). */
export const CLINE_HOOKS_DIR = '.clinerules/hooks';
/** The other folders Cline runs hooks from, relative to the workspace and to HOME. */
export const CLINE_OTHER_WORKSPACE_DIR = '.cline/hooks';

/** Every event Cline fires hooks for (the file names it looks for). */
export const CLINE_EVENTS = [
  'TaskStart',
  'TaskResume',
  'TaskCancel',
  'TaskComplete',
  'TaskError',
  'PreToolUse',
  'PostToolUse',
  'UserPromptSubmit',
  'PreCompact',
  'SessionShutdown',
] as const;

/** `hookName` in a payload (Cline's internal name) → the event it was fired for. */
const INTERNAL_NAMES: Readonly<Record<string, string>> = {
  agent_start: 'TaskStart',
  tool_call: 'PreToolUse',
  tool_result: 'PostToolUse',
  agent_end: 'TaskComplete',
  agent_error: 'TaskError',
  session_shutdown: 'SessionShutdown',
};

/** The line every wrapper carries: how install, uninstall and doctor know a file is the kit's. */
export const CLINE_WRAPPER_MARK = '# forge-reflect: a Cline hook wrapper';

const types: Record<string, EventType> = {
  ...typesFor('cline'),
  TaskResume: 'session.started',
  TaskCancel: 'turn.interrupted',
};

/**
 * Whether a Cline tool result is a failure, and the exit code of the first failed command. The
 * output is one item per command for run_commands (`{query, result, error?, success}`), one object
 * for the other tools; `postToolUse.success` is false only when the tool itself threw.
 */
export function clineToolOutcome(p: Payload): { failed: boolean; exitCode: number | null } {
  const result = obj(p.tool_result);
  let failed = obj(p.postToolUse)?.success === false || (result !== undefined && str(result.error) !== null);
  let exitCode: number | null = null;
  const output = result?.output;
  const items = Array.isArray(output) ? output : output === undefined ? [] : [output];
  for (const raw of items) {
    const item = obj(raw);
    if (item?.success !== false) continue;
    failed = true;
    if (exitCode !== null) continue;
    for (const text of [item.error, item.result]) {
      const m = typeof text === 'string' ? /Command exited with code (-?\d{1,6})\]?\s*$/.exec(text.slice(-200)) : null;
      if (m) {
        exitCode = Number(m[1]);
        break;
      }
    }
  }
  return { failed, exitCode };
}

/** A subagent's event: `parent_agent_id` names the agent that spawned it (null for the task's own). */
export function isSubagent(p: Payload): boolean {
  return str(p.parent_agent_id) !== null;
}

function isClineEvent(name: unknown): name is string {
  return typeof name === 'string' && (CLINE_EVENTS as readonly string[]).includes(name);
}

/**
 * The event of a payload: `hookName` when it is an event's name (as Cline's documentation shows
 * it), else the wrapper's argument when it names one, else `hookName` translated from Cline's
 * internal names (the Stop hook's envelope says only `Stop`).
 */
function eventName(p: Payload, hookArg: string): string | null {
  const named = str(p.hookName);
  if (isClineEvent(named)) return named;
  if (isClineEvent(hookArg)) return hookArg;
  if (named !== null && has(INTERNAL_NAMES, named)) return INTERNAL_NAMES[named] as string;
  return named ?? str(hookArg);
}

const shape: ShapeRule = {
  runtime: 'cline',
  signature: 'hookName (TaskStart, … or agent_start, tool_result, agent_end, …) / clineVersion / taskId with sessionContext',
  matches: (p) =>
    has(p, 'clineVersion') ||
    isClineEvent(p.hookName) ||
    (typeof p.hookName === 'string' && has(INTERNAL_NAMES, p.hookName)) ||
    (has(p, 'taskId') && has(p, 'sessionContext')),
  eventName,
  types,
  refine: (type, p) => {
    if (type === 'tool.executed' && clineToolOutcome(p).failed) return 'tool.failed';
    // A spawn_agent subagent runs as a task of its own in the same session, naming its parent: its
    // end is the subagent's (no turn, no sidecar), its start no new session.
    if (isSubagent(p) && type === 'turn.stopped') return 'subagent.stopped';
    if (isSubagent(p) && type === 'session.started') return 'event.unknown';
    return type;
  },
  fields: (p) => {
    const call = obj(p.tool_result) ?? obj(p.tool_call);
    const tool = obj(p.postToolUse) ?? obj(p.preToolUse);
    return {
      sessionId: str(obj(p.sessionContext)?.rootSessionId) ?? str(p.taskId),
      agentId: str(p.agent_id),
      toolName: str(call?.name) ?? str(tool?.toolName),
      toolUseId: str(call?.id),
      durationMs: ms(call?.durationMs) ?? ms(tool?.executionTimeMs),
      cwd: firstString(p.workspaceRoots) ?? str(obj(p.workspaceInfo)?.rootPath),
    };
  },
};

/** The final answer of a TaskComplete payload (`turn.outputText`), or null. */
export function clineAnswer(p: Payload): string | null {
  const text = obj(p.turn)?.outputText;
  return typeof text === 'string' ? text : null;
}

/** The exec line of a wrapper: the vendored hook, with the event (event hook) and the runtime. */
export function clineCommand(hook: KitHook, event: string): string {
  const args = hook === 'event' ? `${event} cline` : 'cline';
  const locale = hook === 'event' ? 'LC_ALL=C ' : '';
  return `${locale}exec bash "$script" ${args} >/dev/null`;
}

/**
 * One wrapper: POSIX sh (a `#!/usr/bin/env bash` would run the user's BASH_ENV before the first
 * line, and it could print). With the mode off it exits before reading anything; a missing kit
 * (or bash) exits 0 silently; BASH_ENV and ENV go before bash starts for the same reason.
 */
export function clineWrapper(hook: KitHook, event: string): string {
  return [
    '#!/bin/sh',
    `${CLINE_WRAPPER_MARK} for ${event}. Written by \`forge-reflect install --runtime cline\`;`,
    "# `forge-reflect uninstall --runtime cline` removes it. Cline reads a hook's stdout as its answer",
    '# ({"cancel":true} aborts the task): nothing is ever printed, and the exit status is 0.',
    'case "$REFLECTION_MODE" in solo|orchestrated) ;; *) exit 0 ;; esac',
    // A copy in another hook folder Cline runs (~/.cline/hooks/, .cline/hooks/) records nothing
    // where the workspace has the kit's own wrapper: Cline runs both, and one event is one row.
    `case "$0" in`,
    `  /*/${CLINE_HOOKS_DIR}/*) project=\${0%/${CLINE_HOOKS_DIR}/*} ;;`,
    `  *) grep -q '${CLINE_WRAPPER_MARK}' "$PWD/${CLINE_HOOKS_DIR}/${event}" 2>/dev/null && exit 0; project=$PWD ;;`,
    'esac',
    `script=$project/${scriptPath(hook)}`,
    '[ -f "$script" ] && command -v bash >/dev/null 2>&1 || exit 0',
    'unset BASH_ENV ENV',
    'FORGE_PROJECT_DIR=$project',
    'export FORGE_PROJECT_DIR',
    clineCommand(hook, event),
    'exit 0',
    '',
  ].join('\n');
}

/** The files install writes: one executable wrapper per bound event. */
export function clineHookFiles(): HookFile[] {
  return bindingsFor('cline').map((b) => ({ rel: `${CLINE_HOOKS_DIR}/${b.event}`, text: clineWrapper(b.hook, b.event), mode: 0o755 }));
}

/** Whether the file at `path` is one of the kit's wrappers (any version). */
export function isClineWrapper(path: string): boolean {
  try {
    return readRegularText(path).includes(CLINE_WRAPPER_MARK);
  } catch {
    return false;
  }
}

function userHookDirs(env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME || homedir();
  return [env.CLINE_DIR ? join(env.CLINE_DIR, 'hooks') : join(home, '.cline', 'hooks'), join(home, 'Documents', 'Cline', 'Hooks')];
}

/** The kit's wrappers in a folder (file names), for the duplicate checks. */
function wrappersIn(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => isClineWrapper(join(dir, name)));
  } catch {
    return [];
  }
}

function isExactly(path: string, text: string): boolean {
  try {
    return readRegularText(path) === text;
  } catch {
    return false;
  }
}

function doctorChecks(repo: string, env: NodeJS.ProcessEnv): Check[] {
  const checks: Check[] = [];
  const files = clineHookFiles();
  const problems: string[] = [];
  for (const f of files) {
    const path = join(repo, f.rel);
    let mode: number | null = null;
    try {
      const stats = lstatSync(path);
      mode = stats.isFile() ? stats.mode : null;
    } catch {
      // missing: counted below
    }
    if (mode === null) problems.push(`${f.rel} is missing`);
    else if ((mode & 0o111) === 0) problems.push(`${f.rel} is not executable (Cline refuses it)`);
    else if (!isExactly(path, f.text)) problems.push(`${f.rel} is from another kit version`);
  }
  const fix = `forge-reflect install --runtime cline --repo ${repo}`;
  if (problems.length > 0)
    checks.push({ name: 'cline hook files', status: problems.some((p) => !p.endsWith('version')) ? 'fail' : 'warn', detail: problems.join('; '), fix });
  else checks.push({ name: 'cline hook files', status: 'ok', detail: `${files.length} executable wrappers in ${CLINE_HOOKS_DIR}/` });
  // Cline runs every folder's hooks. A copy elsewhere stands down while the workspace has the kit's
  // own wrapper, and records in the wrong place where it has not: either way it should go.
  for (const dir of [join(repo, CLINE_OTHER_WORKSPACE_DIR), ...userHookDirs(env)]) {
    const found = wrappersIn(dir);
    if (found.length > 0) {
      checks.push({
        name: 'cline hook folders',
        status: 'warn',
        detail: `${dir} holds the kit's wrappers too (${found.join(', ')}): Cline runs them beside ${CLINE_HOOKS_DIR}/ (they stand down while the workspace has its own)`,
        fix: `remove ${found.map((n) => join(dir, n)).join(' ')}`,
      });
    }
  }
  return checks;
}

export const cline: RuntimeModule = {
  id: 'cline',
  label: 'Cline',
  registrationFile: () => CLINE_HOOKS_DIR,
  registrationFiles: [],
  command: clineCommand,
  handler(hook, event) {
    return { type: 'file', path: `${CLINE_HOOKS_DIR}/${event}`, command: this.command(hook, event) };
  },
  hookFiles: clineHookFiles,
  shape,
  trustSteps: () => [],
  doctorChecks,
};
