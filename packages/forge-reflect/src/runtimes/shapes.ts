/**
 * Which agent runtime sent a hook payload, and what the event means in the log's terms. Pure.
 *
 * The runtime comes first from the registration: the hooks are told it (`reflect-event-hook.sh
 * EVENT RUNTIME`) and write it into the spool envelope, and that runtime's module (runtimes/*.ts)
 * reads the payload. Only when the envelope names none (an older hook, a hand-made registration)
 * is it guessed from the payload's shape: one table, first match wins, fed by the runtime modules
 * for Claude Code, Codex and Gemini plus rows for the runtimes the kit does not install for.
 * Event names not in a row's map are `event.unknown`; an unrecognised payload is runtime `unknown`.
 */

import { claudeCode } from './claude-code.js';
import { codex } from './codex.js';
import { gemini } from './gemini.js';
import { qwen } from './qwen.js';
import { cline } from './cline.js';
import { opencode } from './opencode.js';
import { copilot } from './copilot.js';
import { RUNTIME_MODULES } from './index.js';
import { isRuntimeId } from './hook-map.js';
import type { ShapeRule } from './module.js';
import { firstString, has, ms, obj, str, type Fields, type Payload } from './payload.js';
import { REFLECTION_WRITTEN_EVENT, RUNTIMES, type EventType, type Runtime } from '../events.js';

export type { ShapeRule };

export interface Recognised extends Fields {
  runtime: Runtime;
  type: EventType;
  /** The event name in the runtime's own words (payload first, else the hook's argument). */
  hookEvent: string | null;
}

export const SHAPE_RULES: readonly ShapeRule[] = [
  {
    runtime: 'cursor',
    signature: 'conversation_id / generation_id / workspace_roots',
    matches: (p) => has(p, 'conversation_id') || has(p, 'generation_id') || has(p, 'workspace_roots'),
    eventName: (p, hookArg) => str(p.hook_event_name) ?? str(hookArg),
    types: {
      sessionStart: 'session.started',
      beforeSubmitPrompt: 'prompt.submitted',
      afterShellExecution: 'tool.executed',
      afterMCPExecution: 'tool.executed',
      afterFileEdit: 'tool.executed',
      afterTabFileEdit: 'tool.executed',
      postToolUse: 'tool.executed',
      postToolUseFailure: 'tool.failed',
      subagentStop: 'subagent.stopped',
      stop: 'turn.stopped',
      sessionEnd: 'session.ended',
      preCompact: 'context.compacting',
    },
    fields: (p) => ({
      sessionId: str(p.conversation_id) ?? str(p.session_id),
      agentId: null,
      toolName: str(p.tool_name),
      toolUseId: str(p.tool_use_id),
      durationMs: ms(p.duration) ?? ms(p.duration_ms),
      cwd: str(p.cwd) ?? firstString(p.workspace_roots),
    }),
  },
  // opencode's payloads are the kit plugin's own: a dotted event name and a `ses_…` session.
  opencode.shape,
  codex.shape,
  // Before Qwen's and Gemini's: Copilot's snake_case payloads carry an ISO `timestamp` too.
  copilot.shape,
  // Before Gemini's: Qwen's payloads carry an ISO `timestamp` and tool_response.llmContent too.
  qwen.shape,
  gemini.shape,
  cline.shape,
  claudeCode.shape,
];

function unknownShape(p: Payload | undefined, hookArg: string): Recognised {
  return {
    runtime: 'unknown',
    type: 'event.unknown',
    hookEvent: str(p?.hook_event_name) ?? str(p?.hookName) ?? str(hookArg),
    sessionId: str(p?.session_id) ?? str(p?.sessionId),
    agentId: str(p?.agent_id),
    toolName: str(p?.tool_name) ?? str(p?.toolName),
    toolUseId: str(p?.tool_use_id),
    durationMs: ms(p?.duration_ms),
    cwd: str(p?.cwd),
  };
}

function isRuntime(value: unknown): value is Runtime {
  return typeof value === 'string' && (RUNTIMES as readonly string[]).includes(value);
}

function applyRule(rule: ShapeRule, p: Payload, hookArg: string): Recognised {
  const hookEvent = rule.eventName(p, hookArg);
  let type: EventType = (hookEvent !== null && Object.hasOwn(rule.types, hookEvent) ? rule.types[hookEvent] : undefined) ?? 'event.unknown';
  if (rule.refine) type = rule.refine(type, p, hookEvent);
  return { runtime: rule.runtime, type, hookEvent, ...rule.fields(p) };
}

/** The payload's shape alone: the first row of SHAPE_RULES that matches, else `unknown`. */
export function guessShape(payload: unknown, hookArg: string): Recognised {
  const p = obj(payload);
  if (p === undefined) return unknownShape(undefined, hookArg);
  for (const rule of SHAPE_RULES) if (rule.matches(p)) return applyRule(rule, p, hookArg);
  return unknownShape(p, hookArg);
}

/**
 * Recognises a parsed payload. `hookArg` is the envelope's `event` (the name the hook was
 * registered for, `reflection.written` from the Stop hook, or ''); `runtimeHint` the envelope's
 * `runtime` (the registration's word). A hint naming a runtime module wins and that module reads
 * the payload; without one (or with a name no module has) the shape decides.
 */
export function recognise(payload: unknown, hookArg: string, runtimeHint = ''): Recognised {
  const p = obj(payload);
  const hinted = isRuntimeId(runtimeHint) ? RUNTIME_MODULES[runtimeHint] : undefined;
  if (hookArg === REFLECTION_WRITTEN_EVENT) {
    // The Stop hook's record of a sidecar: the sidecar names its session and agent.
    const base = p === undefined ? unknownShape(undefined, hookArg) : recognise(p, '', runtimeHint);
    const runtime: Runtime = hinted ? hinted.id : base.runtime !== 'unknown' ? base.runtime : isRuntime(p?.agent) ? p.agent : 'unknown';
    return { ...base, runtime, type: 'reflection.written', hookEvent: REFLECTION_WRITTEN_EVENT, sessionId: base.sessionId ?? str(p?.session_id) };
  }
  if (hinted) return p === undefined ? { ...unknownShape(undefined, hookArg), runtime: hinted.id } : applyRule(hinted.shape, p, hookArg);
  return guessShape(payload, hookArg);
}

/** Longest top-level string value kept by salvageTopLevel. */
const SALVAGE_MAX_STRING = 4096;

/**
 * The top-level fields that can still be read from an object payload that was cut off (and so
 * no longer parses): string values as strings, any other value as `null` (present, unread).
 * Enough to type the event: the identifying fields come before the large tool input and output
 * in every known shape. A single forward scan that tracks strings and nesting depth.
 */
export function salvageTopLevel(text: string): Payload {
  const found: Payload = {};
  let i = 0;
  while (i < text.length && /\s/.test(text[i] as string)) i++;
  if (text[i] !== '{') return found;
  i++;
  let depth = 1;
  let key: string | null = null;
  let afterColon = false;
  while (i < text.length && depth > 0) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      while (j < text.length) {
        const d = text.charCodeAt(j);
        if (d === 0x5c /* \ */) j += 2;
        else if (d === 0x22) break;
        else j++;
      }
      if (j >= text.length) break; // cut inside a string
      if (depth === 1) {
        if (afterColon && key !== null) {
          if (j - i - 1 <= SALVAGE_MAX_STRING) {
            try {
              found[key] = JSON.parse(text.slice(i, j + 1));
            } catch {
              // a broken escape: the key stays present, unread
            }
          }
          key = null;
          afterColon = false;
        } else if (j - i - 1 <= 256) {
          try {
            key = JSON.parse(text.slice(i, j + 1)) as string;
          } catch {
            key = null;
          }
        }
      }
      i = j + 1;
      continue;
    }
    if (c === 0x7b || c === 0x5b /* { [ */) {
      depth++;
    } else if (c === 0x7d || c === 0x5d /* } ] */) {
      depth--;
    } else if (depth === 1 && c === 0x3a /* : */ && key !== null) {
      if (!Object.hasOwn(found, key)) Object.defineProperty(found, key, { value: null, enumerable: true, writable: true, configurable: true });
      afterColon = true;
    } else if (depth === 1 && c === 0x2c /* , */) {
      key = null;
      afterColon = false;
    }
    i++;
  }
  return found;
}
