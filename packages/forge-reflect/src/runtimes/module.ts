/**
 * What a runtime module provides: its native registration (generated from hook-map.ts), how its
 * payloads look (the shape rule the drain falls back to), and what it needs before hooks run
 * (trust steps install prints and doctor checks).
 */
import type { EventType, Runtime } from '../events.js';
import { bindingsFor, KIT_SCRIPTS, type KitHook, type RuntimeId } from './hook-map.js';
import type { Fields, Payload } from './payload.js';

/**
 * Every registered command runs a script in this folder (relative to the project). The hooks are
 * vendored once, here, whichever runtimes they are installed for.
 */
export const VENDORED_DIR = '.claude/hooks/forge-reflect';

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

/** The registration to merge: events in file order, each with its matcher groups. */
export interface Registration {
  events: ReadonlyArray<{ event: string; groups: readonly JsonObject[] }>;
}

/** One line of `forge-reflect doctor`; a runtime module contributes its own (trust, …). */
export type CheckStatus = 'ok' | 'warn' | 'fail';

export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
  fix?: string;
}

export interface ShapeRule {
  runtime: Exclude<Runtime, 'unknown'>;
  /** The fields that identify the runtime, for people reading the table. */
  signature: string;
  matches(p: Payload): boolean;
  /** The event's name; `hookArg` is the event the hook was registered for ('' when none). */
  eventName(p: Payload, hookArg: string): string | null;
  /** Event name → log type; names not listed are `event.unknown`. */
  types: Readonly<Record<string, EventType>>;
  /** Adjusts the type by payload content (a failed tool result, a SessionStart after compaction). */
  refine?(type: EventType, p: Payload, hookEvent: string | null): EventType;
  fields(p: Payload): Fields;
}

/** A file a runtime runs as a hook by its name (Cline), written by install, removed by uninstall. */
export interface HookFile {
  /** Repo-relative, with `/`. */
  rel: string;
  text: string;
  mode: number;
}

export interface RuntimeModule {
  id: RuntimeId;
  label: string;
  /** The repo-relative file install writes the registration into (`local`: Claude's settings.local.json). */
  registrationFile(local: boolean): string;
  /** Every file this runtime may hold a registration of ours in. */
  registrationFiles: readonly string[];
  /** The shell command a registration runs for one event. */
  command(hook: KitHook, event: string): string;
  /** One registered handler: the command plus the runtime's own fields (timeout unit, name). */
  handler(hook: KitHook, event: string, timeoutSeconds: number): JsonObject;
  /** A runtime with no settings file registers by files of its own (registrationFiles is then empty). */
  hookFiles?(): HookFile[];
  shape: ShapeRule;
  /** What the user must do before hooks run, when install cannot do it in the repo. */
  trustSteps(repo: string, env: NodeJS.ProcessEnv): string[];
  /** The runtime's own doctor checks (trust, …), given an installed registration. */
  doctorChecks(repo: string, env: NodeJS.ProcessEnv): Check[];
}

/** The registration of a runtime: one group per bound event, tool events with the matcher `*`. */
export function registrationOf(module: Pick<RuntimeModule, 'id' | 'handler'>): Registration {
  return {
    events: bindingsFor(module.id).map((b) => {
      const group: JsonObject = {};
      if (b.tool) group.matcher = '*';
      group.hooks = [module.handler(b.hook, b.event, b.timeoutSeconds)];
      return { event: b.event, groups: [group] };
    }),
  };
}

/** The registration as a settings file's value (`{"hooks": {...}}`). */
export function registrationValue(registration: Registration): JsonObject {
  const hooks: JsonObject = {};
  for (const { event, groups } of registration.events) hooks[event] = groups.map((g) => JSON.parse(JSON.stringify(g)) as JsonObject);
  return { hooks };
}

export function scriptPath(hook: KitHook): string {
  return `${VENDORED_DIR}/${KIT_SCRIPTS[hook]}`;
}
