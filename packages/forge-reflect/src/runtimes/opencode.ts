/**
 * opencode (1.18.33): no shell hooks; it loads ES-module plugins from `<repo>/.opencode/plugins/`.
 * The registration is one plugin file (runtimes/opencode-plugin.ts, generated from the hook map)
 * that hands each mapped event to the kit's hooks, `reflect-event-hook.sh EVENT opencode` and
 * `reflect-stop-hook.sh opencode`, with FORGE_PROJECT_DIR set to the project (opencode exports no
 * project variable).
 *
 * Payloads are the plugin's own, flat and snake_case like the shell-hook runtimes': hook_event_name
 * (opencode's name: `session.created`, `chat.message`, `tool.execute.after`, `session.idle`),
 * session_id (`ses_…`), agent_id (a subagent's child session; session_id is then its parent's),
 * cwd; tools add tool_name, tool_use_id (opencode's callID), tool_input, tool_response {title,
 * output, metadata}, exit_code and duration_ms. A shell command that exits non-zero is an ordinary
 * `tool.execute.after` with `metadata.exit` set: exit_code carries it, and makes it tool.failed.
 * The answer (`session.idle` carries only the session id) is the plugin's last_assistant_message.
 *
 * opencode npm-installs `@opencode-ai/plugin` into every config folder it loads, `.opencode/`
 * included, unless `.opencode/node_modules/` exists with a package-lock.json that lists it: the
 * plugin needs nothing from there, and doctor says so.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { scriptPath, type Check, type RuntimeModule, type ShapeRule } from './module.js';
import type { EventType } from '../events.js';
import { readRegularText } from '../regular-file.js';
import { typesFor, type KitHook } from './hook-map.js';
import { OPENCODE_PLUGIN_FILE, OPENCODE_PLUGIN_MARK, opencodePluginText } from './opencode-plugin.js';
import { ms, obj, str, type Payload } from './payload.js';

export { OPENCODE_PLUGIN_FILE, OPENCODE_PLUGIN_MARK, opencodePluginText };

/** opencode's own event names, as the plugin sends them (dotted: no other runtime's look like these). */
const OPENCODE_EVENTS = new Set([
  'session.created',
  'chat.message',
  'tool.execute.after',
  'session.idle',
  'experimental.session.compacting',
  'session.compacted',
  'session.error',
]);
/** opencode's session ids: `ses_` and 26 characters. */
const SESSION_ID = /^ses_[0-9A-Za-z]{20,40}$/;

/** The exit code of an opencode tool payload (the plugin's exit_code, else the shell tool's metadata.exit); null when none. */
export function opencodeExitCode(p: Payload): number | null {
  const code = p.exit_code ?? obj(obj(p.tool_response)?.metadata)?.exit;
  return typeof code === 'number' && Number.isInteger(code) ? code : null;
}

const types: Record<string, EventType> = { ...typesFor('opencode'), Stop: 'turn.stopped' };

const shape: ShapeRule = {
  runtime: 'opencode',
  signature: 'a dotted opencode event in hook_event_name (tool.execute.after, session.idle, …) with a `ses_…` session_id',
  matches: (p) => {
    const event = str(p.hook_event_name);
    return event !== null && OPENCODE_EVENTS.has(event) && typeof p.session_id === 'string' && SESSION_ID.test(p.session_id);
  },
  eventName: (p, hookArg) => str(p.hook_event_name) ?? str(hookArg),
  types,
  refine: (type, p, hookEvent) => {
    if (type === 'tool.executed') {
      const code = opencodeExitCode(p);
      return code !== null && code !== 0 ? 'tool.failed' : type;
    }
    // A subagent's session going idle: the subagent's end, not a turn of the session.
    if (hookEvent === 'session.idle' && str(p.agent_id) !== null) return 'subagent.stopped';
    return type;
  },
  fields: (p) => ({
    sessionId: str(p.session_id),
    agentId: str(p.agent_id),
    toolName: str(p.tool_name),
    toolUseId: str(p.tool_use_id),
    durationMs: ms(p.duration_ms),
    cwd: str(p.cwd),
  }),
};

/** The plugin's command line for one event (for reading: the plugin runs it without a shell). */
export function opencodeCommand(hook: KitHook, event: string): string {
  return hook === 'event' ? `bash ${scriptPath(hook)} ${event} opencode` : `bash ${scriptPath(hook)} opencode`;
}

function doctorChecks(repo: string): Check[] {
  const checks: Check[] = [];
  let text: string | null = null;
  try {
    text = readRegularText(join(repo, OPENCODE_PLUGIN_FILE));
  } catch {
    text = null;
  }
  if (text === null) return checks;
  if (!text.startsWith(OPENCODE_PLUGIN_MARK)) {
    checks.push({
      name: 'opencode plugin',
      status: 'warn',
      detail: `${OPENCODE_PLUGIN_FILE} is not the kit's plugin`,
      fix: `move it aside, then forge-reflect install --runtime opencode --repo ${repo}`,
    });
  } else if (text !== opencodePluginText()) {
    checks.push({
      name: 'opencode plugin',
      status: 'warn',
      detail: `${OPENCODE_PLUGIN_FILE} is from another kit version`,
      fix: `forge-reflect install --runtime opencode --repo ${repo} replaces it`,
    });
  } else {
    checks.push({ name: 'opencode plugin', status: 'ok', detail: `${OPENCODE_PLUGIN_FILE} is the kit's, with no npm dependencies` });
  }
  // The plugin skips an event whose script is missing, without a word.
  const missing = (['event', 'stop'] as const).filter((hook) => !existsSync(join(repo, scriptPath(hook))));
  if (missing.length > 0) {
    checks.push({
      name: 'opencode hooks',
      status: 'fail',
      detail: `the plugin's ${missing.map(scriptPath).join(' and ')} is missing: opencode records nothing`,
      fix: `forge-reflect install --runtime opencode --repo ${repo}`,
    });
  }
  // opencode runs `npm install @opencode-ai/plugin` in .opencode/ at start unless it is there already.
  let lock = '';
  try {
    lock = readRegularText(join(repo, '.opencode', 'package-lock.json'));
  } catch {
    lock = '';
  }
  if (!lock.includes('@opencode-ai/plugin')) {
    checks.push({
      name: 'opencode npm install',
      status: 'warn',
      detail:
        'opencode npm-installs @opencode-ai/plugin into .opencode/ at start (a registry call; .opencode/.gitignore keeps it out of git); the kit’s plugin does not need it',
      fix: 'nothing to do; to keep opencode offline, let it install once, or see opencode’s docs on local plugins',
    });
  }
  return checks;
}

export const opencode: RuntimeModule = {
  id: 'opencode',
  label: 'opencode',
  registrationFile: () => OPENCODE_PLUGIN_FILE,
  // No settings file: the registration is the plugin file (hookFiles).
  registrationFiles: [],
  command: opencodeCommand,
  handler(hook, event, timeoutSeconds) {
    return { type: 'plugin', command: this.command(hook, event), timeout: timeoutSeconds };
  },
  hookFiles: () => [{ rel: OPENCODE_PLUGIN_FILE, text: opencodePluginText(), mode: 0o644 }],
  shape,
  trustSteps: () => [],
  doctorChecks,
};
