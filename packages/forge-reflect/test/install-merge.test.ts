/**
 * The pure core of install/uninstall: merging the canonical registration into a settings object,
 * taking it out again, and writing the text back in the file's own style.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  checkSettingsShape,
  detectFormat,
  groupCommands,
  hasOurHandlers,
  isOurHandler,
  mergeRegistration,
  parseRegistration,
  parseSettingsText,
  sameJson,
  serializeJson,
  SettingsShapeError,
  unmergeRegistration,
  type UnmergeOptions,
} from '../src/install/settings-merge.js';
import type { JsonObject } from '../src/runtimes/module.js';

const KIT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CANONICAL = JSON.parse(readFileSync(join(KIT, 'runtime/claude/settings.json'), 'utf8')) as JsonObject;
const registration = parseRegistration(CANONICAL);
const EVENTS = Object.keys(CANONICAL.hooks as JsonObject);

/** What uninstall does with a manifest saying which keys install created. */
const asCreated = (created: readonly string[], hooksKey: boolean): UnmergeOptions => ({
  dropEmptyEvent: (event) => created.includes(event),
  dropEmptyHooks: () => hooksKey,
});
/** What uninstall does without a manifest. */
const byUs: UnmergeOptions = { dropEmptyEvent: (_e, emptied) => emptied, dropEmptyHooks: (emptied) => emptied };

const userSettings = (): JsonObject => ({
  $schema: 'https://json.schemastore.org/claude-code-settings.json',
  permissions: { allow: ['Bash(npm test)'], deny: [] },
  hooks: {
    Stop: [{ hooks: [{ type: 'command', command: 'say done', timeout: 5 }] }],
    PostToolUse: [
      { matcher: 'Edit|Write', hooks: [{ type: 'command', command: 'npx prettier --write "$FILE"' }] },
      { matcher: 'Bash', hooks: [{ type: 'command', command: './lint.sh' }] },
    ],
    PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './guard.sh' }] }],
  },
  model: 'opus',
  env: { FOO: '1' },
});

describe('the canonical registration', () => {
  it("is entirely ours, every command a mode check around exec bash of a script under a quoted $CLAUDE_PROJECT_DIR (StopFailure's detached)", () => {
    expect(EVENTS).toContain('Stop');
    expect(EVENTS).toContain('PostToolUse');
    for (const { groups } of registration.events) {
      for (const group of groups) {
        for (const command of groupCommands(group)) {
          expect(command).toMatch(
            /^case "\$REFLECTION_MODE" in solo\|orchestrated\) (LC_ALL=C BASH_ENV= exec bash "\$CLAUDE_PROJECT_DIR"\/\.claude\/hooks\/forge-reflect\/reflect-event-hook\.sh|(trap '' TERM; S=; command -v setsid >\/dev\/null 2>&1 && S=setsid; BASH_ENV= exec \$S |BASH_ENV= exec )bash "\$CLAUDE_PROJECT_DIR"\/\.claude\/hooks\/forge-reflect\/reflect-stop-hook\.sh) [A-Za-z -]+;; esac$/,
          );
        }
      }
    }
  });

  it('refuses a registration with a handler that is not ours', () => {
    const bad = { hooks: { Stop: [{ hooks: [{ type: 'command', command: 'echo hi' }] }] } };
    expect(() => parseRegistration(bad)).toThrow(/not entirely forge-reflect/);
  });
});

describe('mergeRegistration', () => {
  it('into an empty object: a hooks key with exactly the canonical registration', () => {
    const merged = mergeRegistration({}, registration);
    expect(merged.createdHooksKey).toBe(true);
    expect(merged.createdEvents).toEqual(EVENTS);
    expect(sameJson(merged.settings, CANONICAL)).toBe(true);
  });

  it('keeps the user’s groups first and in order, appends ours, and keeps every other key and its order', () => {
    const before = userSettings();
    const snapshot = JSON.stringify(before);
    const merged = mergeRegistration(before, registration);
    expect(JSON.stringify(before)).toBe(snapshot); // input untouched
    expect(Object.keys(merged.settings)).toEqual(['$schema', 'permissions', 'hooks', 'model', 'env']);
    const hooks = merged.settings.hooks as Record<string, JsonObject[]>;
    // Existing events keep their place; new ones come after them, in canonical order.
    expect(Object.keys(hooks)).toEqual(['Stop', 'PostToolUse', 'PreToolUse', ...EVENTS.filter((e) => !['Stop', 'PostToolUse'].includes(e))]);
    expect(hooks.Stop?.[0]).toEqual((userSettings().hooks as Record<string, JsonObject[]>).Stop?.[0]);
    expect(groupCommands(hooks.Stop?.[1] ?? null)).toEqual([
      'case "$REFLECTION_MODE" in solo|orchestrated) BASH_ENV= exec bash "$CLAUDE_PROJECT_DIR"/.claude/hooks/forge-reflect/reflect-stop-hook.sh claude-code;; esac',
    ]);
    expect(hooks.PostToolUse?.slice(0, 2)).toEqual((userSettings().hooks as Record<string, JsonObject[]>).PostToolUse);
    expect(hooks.PostToolUse).toHaveLength(3);
    expect(hooks.PreToolUse).toEqual((userSettings().hooks as Record<string, JsonObject[]>).PreToolUse);
    expect(merged.createdHooksKey).toBe(false);
    expect(merged.createdEvents).not.toContain('Stop');
    expect(merged.added.map((a) => a.event)).toEqual(EVENTS);
  });

  it('adds nothing the second time', () => {
    const once = mergeRegistration(userSettings(), registration).settings;
    const twice = mergeRegistration(once, registration);
    expect(twice.added).toEqual([]);
    expect(twice.present).toHaveLength(EVENTS.length);
    expect(sameJson(twice.settings, once)).toBe(true);
  });

  it('does not add a group whose command is already there, even with another timeout', () => {
    const stop =
      'case "$REFLECTION_MODE" in solo|orchestrated) BASH_ENV= exec bash "$CLAUDE_PROJECT_DIR"/.claude/hooks/forge-reflect/reflect-stop-hook.sh claude-code;; esac';
    const settings: JsonObject = { hooks: { Stop: [{ hooks: [{ type: 'command', command: stop, timeout: 99 }] }] } };
    const merged = mergeRegistration(settings, registration);
    expect((merged.settings.hooks as Record<string, unknown[]>).Stop).toHaveLength(1);
    expect(merged.present.map((p) => p.event)).toEqual(['Stop']);
  });

  it('keeps an own "__proto__" key as data', () => {
    const settings = JSON.parse('{"__proto__": {"x": 1}, "a": 2}') as JsonObject;
    const merged = mergeRegistration(settings, registration).settings;
    expect(Object.keys(merged)).toEqual(['__proto__', 'a', 'hooks']);
    expect(JSON.stringify(merged).startsWith('{"__proto__":{"x":1},"a":2,"hooks"')).toBe(true);
  });
});

describe('unmergeRegistration', () => {
  it('undoes a merge exactly, with the manifest’s record of created keys', () => {
    for (const before of [{}, userSettings(), { hooks: {} }, { hooks: { Stop: [] } }] as JsonObject[]) {
      const merged = mergeRegistration(before, registration);
      const un = unmergeRegistration(merged.settings, asCreated(merged.createdEvents, merged.createdHooksKey));
      expect(JSON.stringify(un.settings)).toBe(JSON.stringify(before));
    }
  });

  it('without a manifest, drops only what our removal emptied', () => {
    const merged = mergeRegistration(userSettings(), registration).settings;
    const un = unmergeRegistration(merged, byUs);
    expect(JSON.stringify(un.settings)).toBe(JSON.stringify(userSettings()));
    // An empty event we did not empty is not ours to remove (without a manifest, one we emptied is).
    const withEmpty = mergeRegistration({ hooks: { PreToolUse: [], Notification: [] } }, registration).settings;
    expect(unmergeRegistration(withEmpty, byUs).settings).toEqual({ hooks: { PreToolUse: [] } });
  });

  it('takes our handler out of a mixed group and keeps the user’s handler in it', () => {
    const ours = '"$CLAUDE_PROJECT_DIR"/.claude/hooks/forge-reflect/reflect-stop-hook.sh';
    const settings: JsonObject = {
      hooks: {
        Stop: [
          {
            hooks: [
              { type: 'command', command: 'say hi' },
              { type: 'command', command: ours },
            ],
          },
        ],
      },
    };
    const un = unmergeRegistration(settings, byUs);
    expect(un.settings).toEqual({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'say hi' }] }] } });
    expect(un.removed).toEqual([{ event: 'Stop', commands: [ours] }]);
    expect(hasOurHandlers(un.settings)).toBe(false);
    expect(hasOurHandlers(settings)).toBe(true);
  });

  it('leaves a file without our hooks as it is', () => {
    const un = unmergeRegistration(userSettings(), byUs);
    expect(un.removed).toEqual([]);
    expect(JSON.stringify(un.settings)).toBe(JSON.stringify(userSettings()));
  });

  it('recognises our handlers by the vendored folder in their command', () => {
    expect(isOurHandler({ type: 'command', command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/forge-reflect/x.sh' })).toBe(true);
    expect(isOurHandler({ type: 'command', command: '${CLAUDE_PROJECT_DIR}/.claude/hooks/forge-reflect/x.sh' })).toBe(true);
    expect(isOurHandler({ type: 'command', command: '.claude/hooks/forge-reflect-other/x.sh' })).toBe(false);
    expect(isOurHandler({ type: 'command', command: '.claude/hooks/x.sh' })).toBe(false);
    expect(isOurHandler('string')).toBe(false);
  });
});

describe('settings shape checks', () => {
  it.each([
    ['[]', /top level is not a JSON object/],
    ['{"hooks": []}', /"hooks" is not an object/],
    ['{"hooks": null}', /"hooks" is not an object/],
    ['{"hooks": {"Stop": {}}}', /"hooks.Stop" is not an array/],
    ['', /empty/],
    ['{"a": 1,}', /not valid JSON/],
  ])('%s is refused', (text, problem) => {
    const parsed = parseSettingsText(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.problem).toMatch(problem);
      expect(parsed.problem).not.toContain('\n');
    }
  });

  it('merge refuses a bad shape instead of guessing', () => {
    expect(() => mergeRegistration({ hooks: [] } as unknown as JsonObject, registration)).toThrow(SettingsShapeError);
    expect(() => checkSettingsShape({ hooks: { Stop: 'x' } })).toThrow(SettingsShapeError);
  });
});

describe('formatting', () => {
  it.each([
    ['two spaces, final newline', '{\n  "a": 1,\n  "b": [\n    1,\n    2\n  ]\n}\n'],
    ['four spaces, no final newline', '{\n    "a": {\n        "b": true\n    }\n}'],
    ['tabs', '{\n\t"a": {\n\t\t"b": "x"\n\t}\n}\n'],
    ['CRLF', '{\r\n  "a": 1\r\n}\r\n'],
    ['one line', '{"a":1,"b":{"c":[1,2]}}\n'],
    ['a BOM', '\uFEFF{\n  "a": 1\n}\n'],
  ])('%s survives a parse and write', (_name, text) => {
    const parsed = parseSettingsText(text);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(serializeJson(parsed.value, parsed.format)).toBe(text);
  });

  it('an empty object file gets 2-space JSON with a final newline', () => {
    const format = detectFormat('{}\n');
    expect(serializeJson({ a: 1 }, format)).toBe('{\n  "a": 1\n}\n');
  });

  it('merged text keeps the file’s indentation', () => {
    const text = '{\n    "model": "opus"\n}\n';
    const parsed = parseSettingsText(text);
    if (!parsed.ok) throw new Error('fixture');
    const out = serializeJson(mergeRegistration(parsed.value, registration).settings, parsed.format);
    expect(out.startsWith('{\n    "model": "opus",\n    "hooks": {\n        "SessionStart"')).toBe(true);
    expect(out.endsWith('}\n')).toBe(true);
  });
});
