/**
 * OpenAI Codex CLI: `<repo>/.codex/hooks.json` (the project layer; loaded only for a trusted project,
 * and each hook runs only once trusted), Codex event names only (it drops unknown ones silently),
 * timeouts in seconds, SessionEnd and Interrupt within Codex's 3 s clamp.
 *
 * Codex runs a hook as `/bin/bash -c <command>` in the session's cwd and sets no project-dir
 * variable, so the command finds the vendored hooks itself: it walks up from $PWD to the first
 * folder holding them (no git, no fork; a nested repo or a subfolder still finds the project),
 * passes that folder as FORGE_PROJECT_DIR (the state folder's project), and exits 0 silently when
 * there is none. Paths with spaces stay quoted throughout.
 *
 * Payloads: session_id and turn_id (UUID v7; SessionStart and SessionEnd have no turn_id), a
 * PostToolUse for every call that ran, failed or not, with the output text only. A failure is
 * found in the rollout file by the drain (codex-rollout.ts); apply_patch's response text starts
 * with its own `Exit code: N` and `Wall time: S seconds` lines.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { scriptPath, type Check, type RuntimeModule, type ShapeRule } from './module.js';
import type { EventType } from '../events.js';
import { compactedStart } from './claude-code.js';
import { typesFor, type KitHook } from './hook-map.js';
import { has, ms, str, type Payload } from './payload.js';
import { readRegularText } from '../regular-file.js';

export const CODEX_HOOKS_FILE = '.codex/hooks.json';
/** Codex gives SessionEnd and Interrupt hooks at most this long, and warns on every run when asked for more. */
export const CODEX_SHORT_EVENTS: Readonly<Record<string, number>> = { SessionEnd: 3, Interrupt: 3 };

/** apply_patch's response: `Exit code: N` then `Wall time: S seconds` at the top of the text. */
export function applyPatchResult(response: unknown): { exitCode: number | null; durationMs: number | null } {
  if (typeof response !== 'string') return { exitCode: null, durationMs: null };
  const head = response.slice(0, 200);
  const code = /^Exit code: (-?\d+)\r?$/m.exec(head);
  const wall = /^Wall time: (\d+(?:\.\d+)?) seconds\r?$/m.exec(head);
  return {
    exitCode: code && head.startsWith('Exit code: ') ? Number(code[1]) : null,
    durationMs: wall && head.startsWith('Exit code: ') ? Math.round(Number(wall[1]) * 1000) : null,
  };
}

const shape: ShapeRule = {
  runtime: 'codex',
  signature: 'turn_id, or a rollout transcript_path (…/sessions/…/rollout-….jsonl), or notify `type: agent-turn-complete`',
  matches: (p) =>
    has(p, 'turn_id') ||
    p.type === 'agent-turn-complete' ||
    (typeof p.transcript_path === 'string' && /\/sessions\/(?:[^/]+\/)*rollout-[^/]*\.jsonl$/.test(p.transcript_path)),
  eventName: (p, hookArg) => str(p.hook_event_name) ?? (p.type === 'agent-turn-complete' ? 'agent-turn-complete' : str(hookArg)),
  types: { ...typesFor('codex'), 'agent-turn-complete': 'turn.stopped' },
  refine: (type: EventType, p: Payload, hookEvent) => {
    if (type === 'tool.executed') {
      const code = applyPatchResult(p.tool_response).exitCode;
      if (code !== null && code !== 0) return 'tool.failed';
    }
    return compactedStart(type, p, hookEvent);
  },
  fields: (p) => ({
    sessionId: str(p.session_id) ?? str(p['thread-id']),
    agentId: str(p.agent_id),
    toolName: str(p.tool_name),
    toolUseId: str(p.tool_use_id),
    durationMs: ms(p.duration_ms) ?? applyPatchResult(p.tool_response).durationMs,
    cwd: str(p.cwd),
  }),
};

/** `$CODEX_HOME/config.toml` (default ~/.codex). */
export function codexConfigPath(env: NodeJS.ProcessEnv): string {
  return join(env.CODEX_HOME || join(env.HOME || homedir(), '.codex'), 'config.toml');
}

/** A TOML basic string's content, unescaped enough for paths (\\ and \"). */
function tomlUnquote(text: string): string {
  if (text.startsWith("'")) return text.slice(1, -1);
  return text.slice(1, -1).replace(/\\(["\\])/g, '$1');
}

/** Tables of a TOML text as header → body lines. Enough for `[projects."…"]` and `[hooks.state."…"]`. */
export function tomlTables(text: string): Array<{ header: string; body: string[] }> {
  const tables: Array<{ header: string; body: string[] }> = [{ header: '', body: [] }];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    const header = /^\[([^[\]]+)\]\s*(#.*)?$/.exec(line);
    if (header) tables.push({ header: (header[1] as string).trim(), body: [] });
    else (tables[tables.length - 1] as { body: string[] }).body.push(line);
  }
  return tables;
}

/** Whether Codex's user config marks the project trusted (`[projects."<repo>"] trust_level = "trusted"`). */
export function projectTrusted(configText: string, repo: string): boolean {
  for (const t of tomlTables(configText)) {
    const m = /^projects\.("(?:[^"\\]|\\.)*"|'[^']*')$/.exec(t.header);
    if (!m || tomlUnquote(m[1] as string) !== repo) continue;
    if (t.body.some((l) => /^trust_level\s*=\s*["']trusted["']/.test(l))) return true;
  }
  return false;
}

/** The events of `<repo>/.codex/hooks.json` with a persisted `trusted_hash` (`[hooks.state."<file>:<event>:…"]`). */
export function trustedHookEvents(configText: string, hooksFile: string): Set<string> {
  const events = new Set<string>();
  for (const t of tomlTables(configText)) {
    const m = /^hooks\.state\.("(?:[^"\\]|\\.)*"|'[^']*')$/.exec(t.header);
    if (!m) continue;
    const key = tomlUnquote(m[1] as string);
    if (!key.startsWith(`${hooksFile}:`)) continue;
    if (!t.body.some((l) => /^trusted_hash\s*=/.test(l))) continue;
    const event = key.slice(hooksFile.length + 1).split(':')[0];
    if (event) events.add(event);
  }
  return events;
}

function trustSteps(repo: string, env: NodeJS.ProcessEnv): string[] {
  const config = codexConfigPath(env);
  return [
    `Codex loads .codex/hooks.json only in a trusted project: accept the trust prompt when you start \`codex\` in ${repo}, or add to ${config}:  [projects.${JSON.stringify(repo)}] trust_level = "trusted"`,
    `Codex runs project hooks only after you trust them (untrusted hooks are skipped without a word): start \`codex\` in ${repo} once and approve the forge-reflect hooks when it asks you to review them (for one headless run: codex exec --dangerously-bypass-hook-trust)`,
  ];
}

function doctorChecks(repo: string, env: NodeJS.ProcessEnv): Check[] {
  const config = codexConfigPath(env);
  let text = '';
  try {
    text = readRegularText(config);
  } catch {
    // no user config: nothing is trusted yet
  }
  const [projectStep, hookStep] = trustSteps(repo, env) as [string, string];
  const checks: Check[] = [];
  checks.push(
    projectTrusted(text, repo)
      ? { name: 'codex project trust', status: 'ok', detail: `${repo} is trusted in ${config}` }
      : {
          name: 'codex project trust',
          status: 'warn',
          detail: `${repo} is not marked trusted in ${config}: Codex ignores .codex/hooks.json`,
          fix: projectStep,
        },
  );
  // Hooks in both .codex/hooks.json and [hooks] of the same layer's config.toml: Codex warns on every run.
  try {
    if (tomlTables(readRegularText(join(repo, '.codex', 'config.toml'))).some((t) => t.header === 'hooks' || t.header.startsWith('hooks.'))) {
      checks.push({
        name: 'codex hook files',
        status: 'warn',
        detail: `.codex/config.toml also has [hooks]: Codex warns when one layer uses both`,
        fix: `move those hooks into ${CODEX_HOOKS_FILE}`,
      });
    }
  } catch {
    // no project config.toml
  }
  const hooksFile = join(repo, CODEX_HOOKS_FILE);
  const trusted = trustedHookEvents(text, hooksFile);
  checks.push(
    trusted.size > 0
      ? {
          name: 'codex hook trust',
          status: 'ok',
          detail: `hooks of ${CODEX_HOOKS_FILE} reviewed for ${trusted.size} event(s) (a changed command needs a new review)`,
        }
      : { name: 'codex hook trust', status: 'warn', detail: `no trusted hook of ${hooksFile} in ${config}: Codex skips them silently`, fix: hookStep },
  );
  return checks;
}

export const codex: RuntimeModule = {
  id: 'codex',
  label: 'Codex CLI',
  registrationFile: () => CODEX_HOOKS_FILE,
  registrationFiles: [CODEX_HOOKS_FILE],
  command(hook: KitHook, event: string) {
    const script = scriptPath(hook);
    const args = hook === 'event' ? `${event} codex` : 'codex';
    return (
      `d=$PWD; until [ -f "$d/${script}" ]; do case $d in */*) d=\${d%/*} ;; *) exit 0 ;; esac; done; ` +
      `FORGE_PROJECT_DIR=\${d:-/} bash "$d/${script}" ${args}; exit 0`
    );
  },
  handler(hook, event, timeoutSeconds) {
    const limit = CODEX_SHORT_EVENTS[event];
    return { type: 'command', command: this.command(hook, event), timeout: limit === undefined ? timeoutSeconds : Math.min(limit, timeoutSeconds) };
  },
  shape,
  trustSteps,
  doctorChecks,
};
