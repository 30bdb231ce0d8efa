/**
 * The one description of which kit hook serves which event, per runtime. Every runtime's native
 * registration (Claude Code `.claude/settings.json`, Codex `.codex/hooks.json`, Gemini CLI
 * `.gemini/settings.json`) is generated from this table by its module. The files in runtime/<runtime>/
 * are those renderings, for reading (scripts/build/generate-registrations.mjs writes them; a drift
 * test compares).
 *
 * A role names what the kit wants to see; `events` names the runtime's own event for it. A runtime
 * without such an event leaves the role out (Codex has no PostToolUseFailure or Notification; Gemini
 * has no compaction signal: PreCompress fires before every model request).
 */
import type { EventType } from '../events.js';

export const RUNTIME_IDS = ['claude-code', 'codex', 'gemini', 'qwen', 'cline', 'opencode', 'copilot'] as const;
export type RuntimeId = (typeof RUNTIME_IDS)[number];

/** The two kit scripts: the event spooler and the Stop (sidecar) hook. */
export type KitHook = 'event' | 'stop';
export const KIT_SCRIPTS: Readonly<Record<KitHook, string>> = { event: 'reflect-event-hook.sh', stop: 'reflect-stop-hook.sh' };

export interface HookRole {
  role: string;
  hook: KitHook;
  /** A tool event: registered with the match-all matcher `*`. */
  tool: boolean;
  /** The time the kit asks for; each runtime writes it in its own unit and within its own limits. */
  timeoutSeconds: number;
  /** The log type of the event (payload content may refine it, e.g. a failed tool call). */
  type: EventType;
  events: Readonly<Partial<Record<RuntimeId, string>>>;
}

/** In registration order (Claude's file keeps this order). */
export const HOOK_MAP: readonly HookRole[] = [
  {
    role: 'session-start',
    hook: 'event',
    tool: false,
    timeoutSeconds: 10,
    type: 'session.started',
    events: {
      'claude-code': 'SessionStart',
      codex: 'SessionStart',
      gemini: 'SessionStart',
      qwen: 'SessionStart',
      cline: 'TaskStart',
      opencode: 'session.created',
      copilot: 'SessionStart',
    },
  },
  {
    role: 'prompt',
    hook: 'event',
    tool: false,
    timeoutSeconds: 10,
    type: 'prompt.submitted',
    events: {
      'claude-code': 'UserPromptSubmit',
      codex: 'UserPromptSubmit',
      gemini: 'BeforeAgent',
      qwen: 'UserPromptSubmit',
      cline: 'UserPromptSubmit',
      opencode: 'chat.message',
      copilot: 'UserPromptSubmit',
    },
  },
  {
    role: 'tool-done',
    hook: 'event',
    tool: true,
    timeoutSeconds: 10,
    type: 'tool.executed',
    events: {
      'claude-code': 'PostToolUse',
      codex: 'PostToolUse',
      gemini: 'AfterTool',
      qwen: 'PostToolUse',
      cline: 'PostToolUse',
      opencode: 'tool.execute.after',
      copilot: 'PostToolUse',
    },
  },
  {
    role: 'tool-failed',
    hook: 'event',
    tool: true,
    timeoutSeconds: 10,
    type: 'tool.failed',
    events: { 'claude-code': 'PostToolUseFailure', qwen: 'PostToolUseFailure', copilot: 'PostToolUseFailure' },
  },
  {
    role: 'subagent-stop',
    hook: 'event',
    tool: false,
    timeoutSeconds: 10,
    type: 'subagent.stopped',
    events: { 'claude-code': 'SubagentStop', codex: 'SubagentStop', qwen: 'SubagentStop', copilot: 'SubagentStop' },
  },
  {
    role: 'compacting',
    hook: 'event',
    tool: false,
    timeoutSeconds: 10,
    type: 'context.compacting',
    events: {
      'claude-code': 'PreCompact',
      codex: 'PreCompact',
      qwen: 'PreCompact',
      cline: 'PreCompact',
      opencode: 'experimental.session.compacting',
      copilot: 'PreCompact',
    },
  },
  {
    role: 'notification',
    hook: 'event',
    tool: false,
    timeoutSeconds: 10,
    type: 'notification',
    events: { 'claude-code': 'Notification', gemini: 'Notification', qwen: 'Notification' },
  },
  {
    role: 'session-end',
    hook: 'event',
    tool: false,
    timeoutSeconds: 10,
    type: 'session.ended',
    events: { 'claude-code': 'SessionEnd', codex: 'SessionEnd', gemini: 'SessionEnd', qwen: 'SessionEnd', cline: 'SessionShutdown', copilot: 'SessionEnd' },
  },
  { role: 'interrupt', hook: 'event', tool: false, timeoutSeconds: 3, type: 'turn.interrupted', events: { codex: 'Interrupt' } },
  {
    role: 'turn-end',
    hook: 'stop',
    tool: false,
    timeoutSeconds: 30,
    type: 'turn.stopped',
    events: { 'claude-code': 'Stop', codex: 'Stop', gemini: 'AfterAgent', qwen: 'Stop', cline: 'TaskComplete', opencode: 'session.idle', copilot: 'Stop' },
  },
  // A turn that ends on a model error fires no turn-end event: Claude Code and Qwen Code fire
  // StopFailure instead of Stop (Qwen only in its TUI and ACP modes: headless it fires nothing),
  // Cline TaskError instead of TaskComplete. The Stop hook writes the turn's sidecar, degraded
  // (the payload's last message is the API error's text, never a self-report), the error in the
  // reflection.written event's self_report_note.
  {
    role: 'turn-error',
    hook: 'stop',
    tool: false,
    timeoutSeconds: 30,
    type: 'turn.stopped',
    events: { 'claude-code': 'StopFailure', qwen: 'StopFailure', cline: 'TaskError' },
  },
];

export interface Binding {
  event: string;
  hook: KitHook;
  tool: boolean;
  timeoutSeconds: number;
}

/** The events a runtime registers, in order, each with the kit hook that serves it. */
export function bindingsFor(runtime: RuntimeId): Binding[] {
  const out: Binding[] = [];
  for (const role of HOOK_MAP) {
    const event = role.events[runtime];
    if (event !== undefined) out.push({ event, hook: role.hook, tool: role.tool, timeoutSeconds: role.timeoutSeconds });
  }
  return out;
}

/** Event name → log type for the events a runtime registers. */
export function typesFor(runtime: RuntimeId): Record<string, EventType> {
  const out: Record<string, EventType> = {};
  for (const role of HOOK_MAP) {
    const event = role.events[runtime];
    if (event !== undefined) out[event] = role.type;
  }
  return out;
}

export function isRuntimeId(value: unknown): value is RuntimeId {
  return typeof value === 'string' && (RUNTIME_IDS as readonly string[]).includes(value);
}
