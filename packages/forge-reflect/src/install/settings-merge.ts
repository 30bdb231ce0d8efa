/**
 * Merging the kit's hook registration into a Claude Code settings object, and taking it out again.
 * Pure: no IO, inputs are never mutated, every result is a fresh object whose untouched keys keep
 * their order. The IO shell (commands/install.ts, commands/uninstall.ts) reads, checks and writes.
 *
 * Shape (Claude Code): `{ "hooks": { "<Event>": [ { "matcher"?: "...", "hooks": [ { "type": "command",
 * "command": "...", "timeout": n } ] } ] } }`. Our handlers are recognised by their command, which
 * points into the vendored folder `.claude/hooks/forge-reflect/`.
 */
import { VENDORED_DIR, type Json, type JsonObject, type Registration } from '../runtimes/module.js';

/** Thrown when a settings object does not have the shape Claude Code reads; `where` is a key path. */
export class SettingsShapeError extends Error {
  constructor(
    readonly where: string,
    readonly problem: string,
  ) {
    super(`${where} ${problem}`);
    this.name = 'SettingsShapeError';
  }
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sets an own, enumerable key (also `__proto__`, which plain assignment would turn into a prototype). */
function setOwn(target: JsonObject, key: string, value: Json): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A deep copy that keeps key order and own `__proto__` keys (JSON round trip does both). */
export function cloneJson<T extends Json>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Same value, same key order. */
export function sameJson(a: Json, b: Json): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function handlersOf(group: Json): Json[] {
  return isJsonObject(group) && Array.isArray(group.hooks) ? group.hooks : [];
}

function commandOf(handler: Json): string | undefined {
  return isJsonObject(handler) && typeof handler.command === 'string' ? handler.command : undefined;
}

/** A handler is ours when its command runs something in `.claude/hooks/forge-reflect/`. */
export function isOurHandler(handler: Json): boolean {
  const command = commandOf(handler);
  return command !== undefined && command.includes(`${VENDORED_DIR}/`);
}

/** The commands of a matcher group's handlers. */
export function groupCommands(group: Json): string[] {
  return handlersOf(group)
    .map(commandOf)
    .filter((c): c is string => c !== undefined);
}

/**
 * Reads the kit's canonical registration (runtime/claude/settings.json). Every handler in it must
 * be ours, or uninstall could not find it again; a broken file is a bug of the kit, so this throws.
 */
export function parseRegistration(value: unknown): Registration {
  if (!isJsonObject(value) || !isJsonObject(value.hooks)) throw new Error('the canonical registration has no "hooks" object');
  const events: Array<{ event: string; groups: JsonObject[] }> = [];
  for (const [event, groups] of Object.entries(value.hooks)) {
    if (!Array.isArray(groups) || groups.length === 0) throw new Error(`the canonical registration's hooks.${event} is not a non-empty array`);
    for (const group of groups) {
      const handlers = handlersOf(group);
      if (!isJsonObject(group) || handlers.length === 0 || !handlers.every(isOurHandler)) {
        throw new Error(`the canonical registration's hooks.${event} has a group that is not entirely forge-reflect's`);
      }
    }
    events.push({ event, groups: groups as JsonObject[] });
  }
  return { events };
}

/**
 * Checks the parts of a settings value that merge and unmerge rely on: an object at the top, a
 * `hooks` that is an object when present, and an array under every event. Anything else in the
 * file (other keys, odd groups) is left alone, whatever it holds.
 */
export function checkSettingsShape(value: unknown): asserts value is JsonObject {
  if (!isJsonObject(value)) throw new SettingsShapeError('the top level', 'is not a JSON object');
  if (!Object.hasOwn(value, 'hooks')) return;
  const hooks = value.hooks;
  if (!isJsonObject(hooks)) throw new SettingsShapeError('"hooks"', 'is not an object');
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) throw new SettingsShapeError(`"hooks.${event}"`, 'is not an array of matcher groups');
  }
}

export interface EventCommands {
  event: string;
  commands: string[];
}

export interface MergeResult {
  settings: JsonObject;
  /** Groups appended, per event, named by their commands. */
  added: EventCommands[];
  /** Groups not appended because a group with the same command was already there. */
  present: EventCommands[];
  createdHooksKey: boolean;
  createdEvents: string[];
}

/**
 * Appends each group of the registration to its event, after whatever is there, unless a group of
 * that event already has a handler with one of the group's commands. Missing event keys are added
 * after the existing ones, a missing `hooks` key after the existing top-level keys.
 */
export function mergeRegistration(current: JsonObject, registration: Registration): MergeResult {
  checkSettingsShape(current);
  const settings = cloneJson(current);
  const added: EventCommands[] = [];
  const present: EventCommands[] = [];
  const createdEvents: string[] = [];
  let createdHooksKey = false;
  let hooks: JsonObject;
  if (isJsonObject(settings.hooks) && Object.hasOwn(settings, 'hooks')) {
    hooks = settings.hooks;
  } else {
    hooks = {};
    createdHooksKey = true;
  }
  for (const { event, groups } of registration.events) {
    const has = Object.hasOwn(hooks, event);
    const list: Json[] = has ? (hooks[event] as Json[]) : [];
    let appended = false;
    for (const group of groups) {
      const commands = groupCommands(group);
      const already = list.some((existing) => groupCommands(existing).some((c) => commands.includes(c)));
      if (already) {
        present.push({ event, commands });
        continue;
      }
      list.push(cloneJson(group));
      added.push({ event, commands });
      appended = true;
    }
    if (!has && appended) {
      setOwn(hooks, event, list);
      createdEvents.push(event);
    }
  }
  if (createdHooksKey && Object.keys(hooks).length > 0) setOwn(settings, 'hooks', hooks);
  else createdHooksKey = false;
  return { settings, added, present, createdHooksKey, createdEvents };
}

/**
 * Takes out our handlers whose command is not in `keep` (a registration from an older kit, e.g. a
 * command without the runtime argument), so a reinstall replaces them instead of running both.
 * Groups left without handlers go; event keys are kept (the merge refills or the uninstall drops
 * them). Returns the commands taken out.
 */
export function dropStaleHandlers(current: JsonObject, keep: ReadonlySet<string>): { settings: JsonObject; dropped: EventCommands[] } {
  checkSettingsShape(current);
  const settings = cloneJson(current);
  const dropped: EventCommands[] = [];
  if (!isJsonObject(settings.hooks)) return { settings, dropped };
  const hooks = settings.hooks;
  for (const event of Object.keys(hooks)) {
    const commands: string[] = [];
    const kept: Json[] = [];
    for (const group of hooks[event] as Json[]) {
      const handlers = handlersOf(group);
      const stale = handlers.filter((h) => isOurHandler(h) && !keep.has(commandOf(h) as string));
      if (stale.length === 0) {
        kept.push(group);
        continue;
      }
      for (const h of stale) commands.push(commandOf(h) as string);
      const rest = handlers.filter((h) => !stale.includes(h));
      if (rest.length > 0) {
        setOwn(group as JsonObject, 'hooks', rest);
        kept.push(group);
      }
    }
    if (commands.length > 0) {
      setOwn(hooks, event, kept);
      dropped.push({ event, commands });
    }
  }
  return { settings, dropped };
}

/** Every command of a registration. */
export function registrationCommands(registration: Registration): Set<string> {
  return new Set(registration.events.flatMap((e) => e.groups.flatMap(groupCommands)));
}

export interface UnmergeOptions {
  /**
   * Whether an event key whose array ends up empty goes too. `emptiedByUs` says the array was not
   * empty before this unmerge took our handlers out of it.
   */
  dropEmptyEvent: (event: string, emptiedByUs: boolean) => boolean;
  /** Whether a `hooks` object that ends up empty goes too. */
  dropEmptyHooks: (emptiedByUs: boolean) => boolean;
}

export interface UnmergeResult {
  settings: JsonObject;
  /** Handlers taken out, per event, named by their commands. */
  removed: EventCommands[];
  removedEvents: string[];
  removedHooksKey: boolean;
}

/**
 * Takes every handler of ours out of every event. A group left without handlers by that goes; a
 * group that also holds someone else's handlers stays with theirs. Other groups, keys and their
 * order are untouched.
 */
export function unmergeRegistration(current: JsonObject, options: UnmergeOptions): UnmergeResult {
  checkSettingsShape(current);
  const settings = cloneJson(current);
  const removed: EventCommands[] = [];
  const removedEvents: string[] = [];
  let removedHooksKey = false;
  if (!isJsonObject(settings.hooks) || !Object.hasOwn(settings, 'hooks')) {
    return { settings, removed, removedEvents, removedHooksKey };
  }
  const hooks = settings.hooks;
  let hooksTouched = false;
  for (const event of Object.keys(hooks)) {
    const groups = hooks[event] as Json[];
    const commands: string[] = [];
    const kept: Json[] = [];
    for (const group of groups) {
      const handlers = handlersOf(group);
      const ours = handlers.filter(isOurHandler);
      if (ours.length === 0) {
        kept.push(group);
        continue;
      }
      for (const handler of ours) commands.push(commandOf(handler) as string);
      const theirs = handlers.filter((h) => !isOurHandler(h));
      if (theirs.length > 0) {
        setOwn(group as JsonObject, 'hooks', theirs);
        kept.push(group);
      }
    }
    const emptiedByUs = commands.length > 0 && kept.length === 0;
    if (commands.length > 0) {
      removed.push({ event, commands });
      setOwn(hooks, event, kept);
      hooksTouched = true;
    }
    if (kept.length === 0 && options.dropEmptyEvent(event, emptiedByUs)) {
      delete hooks[event];
      removedEvents.push(event);
      hooksTouched = true;
    }
  }
  if (Object.keys(hooks).length === 0 && options.dropEmptyHooks(hooksTouched)) {
    delete settings.hooks;
    removedHooksKey = true;
  }
  return { settings, removed, removedEvents, removedHooksKey };
}

/** True when any event of the settings still holds a handler of ours. */
export function hasOurHandlers(settings: JsonObject): boolean {
  if (!isJsonObject(settings.hooks)) return false;
  return Object.values(settings.hooks).some((groups) => Array.isArray(groups) && groups.some((g) => handlersOf(g).some(isOurHandler)));
}

// ---------------------------------------------------------------------------------------------
// Text: parse, keep the file's style, write it back the same way
// ---------------------------------------------------------------------------------------------

export interface JsonFormat {
  /** What JSON.stringify gets: spaces, a tab, or 0 for a one-line file. */
  indent: number | string;
  eol: '\n' | '\r\n';
  finalNewline: boolean;
  bom: boolean;
}

export const DEFAULT_FORMAT: JsonFormat = { indent: 2, eol: '\n', finalNewline: true, bom: false };

/** The style of a JSON text: its indentation (first indented line), line ends, final newline, BOM. */
export function detectFormat(text: string): JsonFormat {
  const bom = text.startsWith('\uFEFF');
  const body = bom ? text.slice(1) : text;
  const eol: '\n' | '\r\n' = body.includes('\r\n') ? '\r\n' : '\n';
  const finalNewline = /\n$/.test(body);
  const lines = body.replace(/\s+$/, '').split(/\r?\n/);
  // A one-line file stays on one line, unless it is an empty object (nothing to go by).
  const oneLine = lines.length === 1 && !/^\{\s*\}$/.test(lines[0] ?? '');
  let indent: number | string = oneLine ? 0 : DEFAULT_FORMAT.indent;
  for (const line of lines.slice(1)) {
    const lead = /^([ \t]+)\S/.exec(line)?.[1];
    if (lead === undefined) continue;
    indent = lead.startsWith('\t') ? '\t' : lead.length;
    break;
  }
  return { indent, eol, finalNewline, bom };
}

export function serializeJson(value: Json, format: JsonFormat = DEFAULT_FORMAT): string {
  let text = JSON.stringify(value, null, format.indent);
  if (format.eol === '\r\n') text = text.replace(/\n/g, '\r\n');
  if (format.finalNewline) text += format.eol;
  return format.bom ? `\uFEFF${text}` : text;
}

export type ParsedSettings = { ok: true; value: JsonObject; format: JsonFormat } | { ok: false; problem: string };

/** Parses a settings file's text and checks its shape; a problem is one line, to follow `<file>: `. */
export function parseSettingsText(text: string): ParsedSettings {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (body.trim() === '') return { ok: false, problem: 'empty, which is not valid JSON (an empty settings file is {})' };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return { ok: false, problem: `not valid JSON (${(error as Error).message.split('\n')[0]})` };
  }
  try {
    checkSettingsShape(value);
  } catch (error) {
    if (error instanceof SettingsShapeError) return { ok: false, problem: error.message };
    throw error;
  }
  return { ok: true, value, format: detectFormat(text) };
}
