/**
 * Claude Code: `.claude/settings.json` (or settings.local.json), commands through
 * `$CLAUDE_PROJECT_DIR` (set for every hook, it stays at the project root when the agent `cd`s),
 * timeouts in seconds. A failed tool call has its own event (PostToolUseFailure) with `duration_ms`;
 * PostToolUse carries `duration_ms` too.
 */
import type { EventType } from '../events.js';
import { typesFor, type KitHook } from './hook-map.js';
import { scriptPath, type RuntimeModule, type ShapeRule } from './module.js';
import { has, ms, str, type Payload } from './payload.js';

export const SETTINGS_SHARED = '.claude/settings.json';
export const SETTINGS_LOCAL = '.claude/settings.local.json';

/** Claude Code's own event names beyond the registered ones (recognised, typed event.unknown). */
export const CLAUDE_TYPES = typesFor('claude-code');

/**
 * SessionStart again after a compaction (`source: "compact"`; Codex fires it after every one) is
 * the same session going on, not a new one: typed context.compacted.
 */
export function compactedStart(type: EventType, p: Payload, hookEvent: string | null): EventType {
  return hookEvent === 'SessionStart' && p.source === 'compact' ? 'context.compacted' : type;
}

const shape: ShapeRule = {
  runtime: 'claude-code',
  // Before v1.0.41 payloads had no hook_event_name; session_id + transcript_path still say Claude.
  signature: 'hook_event_name + session_id (or session_id + transcript_path before v1.0.41)',
  matches: (p) =>
    typeof p.session_id === 'string' && (typeof p.hook_event_name === 'string' || (typeof p.transcript_path === 'string' && !has(p, 'hook_event_name'))),
  eventName: (p, hookArg) => str(p.hook_event_name) ?? str(hookArg),
  types: CLAUDE_TYPES,
  refine: (type, p, hookEvent) => compactedStart(type, p, hookEvent),
  fields: (p) => ({
    sessionId: str(p.session_id),
    agentId: str(p.agent_id),
    toolName: str(p.tool_name),
    toolUseId: str(p.tool_use_id),
    durationMs: ms(p.duration_ms),
    cwd: str(p.cwd),
  }),
};

/**
 * Claude Code runs the command through `sh -c`. With the mode off that shell is all it starts: the
 * same modes as the hook's own first line (which stays the rule when a hook is run by hand) are
 * checked in the command, and bash is started only when the kit is on; exec, so the shell does not
 * wait as an extra process, and bash by name, so no `env` from the shebang. The event hook's bash
 * starts in the C locale: it handles bytes only, and bash then loads no locale data at its start
 * (a UTF-8 locale can be a dozen files to read). The Stop hook keeps
 * the user's locale: its bash cuts text to lengths, which must not split a UTF-8 character.
 * BASH_ENV is emptied for that bash: a non-interactive bash runs the file it names before the hook's
 * first line, so a user's BASH_ENV (one that loads nvm, say) would run inside every hook, slow it,
 * and could print on the hook's stdout, which Claude Code reads for decisions. (Codex and Gemini
 * start hooks with their own `bash -c`, which has run it already; their commands are left as they
 * are, since Codex asks the user to review a changed command again.)
 */
export function claudeCommand(hook: KitHook, event: string): string {
  const args = hook === 'event' ? `${event} claude-code` : 'claude-code';
  const locale = hook === 'event' ? 'LC_ALL=C ' : '';
  const detach = event === 'StopFailure' ? STOP_FAILURE_DETACH : '';
  return `case "$REFLECTION_MODE" in solo|orchestrated) ${detach}${locale}BASH_ENV= exec ${detach ? '$S ' : ''}bash "$CLAUDE_PROJECT_DIR"/${scriptPath(hook)} ${args};; esac`;
}

/**
 * A headless Claude Code (`claude -p`) ends its process right after StopFailure: it sends the
 * StopFailure hook's process group SIGTERM at once, then SIGKILL, before the hook could write the
 * turn's sidecar. So that hook starts with SIGTERM ignored (kept across exec) and, where there is
 * setsid(1), in a session of its own, out of reach of both (node resets SIGTERM at its start, so the
 * ignored signal alone would still stop the helper). Claude Code ignores a StopFailure hook's exit
 * code and output, and the hook bounds its own time (the git budget, the helper's limit).
 */
export const STOP_FAILURE_DETACH = "trap '' TERM; S=; command -v setsid >/dev/null 2>&1 && S=setsid; ";

export const claudeCode: RuntimeModule = {
  id: 'claude-code',
  label: 'Claude Code',
  registrationFile: (local) => (local ? SETTINGS_LOCAL : SETTINGS_SHARED),
  registrationFiles: [SETTINGS_SHARED, SETTINGS_LOCAL],
  command: claudeCommand,
  handler(hook, event, timeoutSeconds) {
    return { type: 'command', command: this.command(hook, event), timeout: timeoutSeconds };
  },
  shape,
  trustSteps: () => [],
  doctorChecks: () => [],
};
