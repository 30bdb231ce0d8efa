/**
 * opencode: the plugin generated from the hook map (drift, no npm dependencies), the payloads it
 * sent in the real client (tests/fixtures/runtimes/opencode/, opencode 1.18.33), recognition with
 * and without the envelope's runtime, the failed shell call and its exit code, and the plugin itself
 * driven with opencode's own captured hook inputs (fixtures raw/) against the vendored hooks.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { guessShape, recognise } from '../src/runtimes/shapes.js';
import { bindingsFor } from '../src/runtimes/hook-map.js';
import { parseRuntimes } from '../src/runtimes/index.js';
import { opencode, opencodeExitCode, OPENCODE_PLUGIN_FILE, OPENCODE_PLUGIN_MARK, opencodePluginText } from '../src/runtimes/opencode.js';
import { answerFromPayload, lastReflectionBlock } from '../src/sidecar/answer-block.js';
import { cleanupTempDirs, CLI, KIT_ROOT, tempDir } from './helpers/spool.js';

const DIR = join(KIT_ROOT, 'tests', 'fixtures', 'runtimes', 'opencode');
const fixture = (name: string) => JSON.parse(readFileSync(join(DIR, name), 'utf8')) as Record<string, unknown>;
const raw = (name: string) => (JSON.parse(readFileSync(join(DIR, 'raw', name), 'utf8')) as { args: unknown }).args;
const SESSION = 'ses_dc50be71effeoooIRXHpiHXykw';

afterEach(cleanupTempDirs);

describe('opencode registration: the plugin', () => {
  const text = opencodePluginText();

  it('runtime/opencode/forge-reflect.js is the generated plugin (drift), and install writes the same file', () => {
    expect(readFileSync(join(KIT_ROOT, 'runtime', 'opencode', 'forge-reflect.js'), 'utf8')).toBe(text);
    expect(opencode.hookFiles?.()).toEqual([{ rel: OPENCODE_PLUGIN_FILE, text, mode: 0o644 }]);
    expect(OPENCODE_PLUGIN_FILE).toBe('.opencode/plugins/forge-reflect.js');
    expect(text.startsWith(OPENCODE_PLUGIN_MARK)).toBe(true);
  });

  it('is plain ESM of node builtins only (no npm dependency for opencode to install), one exported plugin', () => {
    const imports = [...text.matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(0);
    for (const spec of imports) expect(spec).toMatch(/^node:/);
    expect(text).not.toMatch(/\brequire\(|import\(/);
    expect([...text.matchAll(/^export /gm)]).toHaveLength(1);
    expect(text).not.toMatch(/console\./);
    const dir = tempDir();
    writeFileSync(join(dir, 'p.mjs'), text);
    expect(spawnSync(process.execPath, ['--check', join(dir, 'p.mjs')]).status).toBe(0);
  });

  it('carries the hook map: each bound event with its script and seconds', () => {
    const table = JSON.parse(/^const EVENTS = (.*);$/m.exec(text)?.[1] as string) as Record<string, { hook: string; seconds: number }>;
    expect(Object.keys(table)).toEqual(bindingsFor('opencode').map((b) => b.event));
    expect(table['session.idle']).toEqual({ hook: 'reflect-stop-hook.sh', seconds: 30 });
    expect(table['tool.execute.after']).toEqual({ hook: 'reflect-event-hook.sh', seconds: 10 });
    expect(Object.keys(table)).toEqual(expect.arrayContaining(['session.created', 'chat.message', 'tool.execute.after', 'session.idle']));
  });

  it('--runtime opencode and all', () => {
    expect(parseRuntimes('opencode')).toEqual(['opencode']);
    expect(parseRuntimes('all')).toContain('opencode');
  });
});

const EXPECTED: Record<string, { type: string; hookEvent: string; toolName?: string; toolUseId?: string }> = {
  '001-session.created.json': { type: 'session.started', hookEvent: 'session.created' },
  '002-chat.message.json': { type: 'prompt.submitted', hookEvent: 'chat.message' },
  '003-tool.execute.after.json': { type: 'tool.executed', hookEvent: 'tool.execute.after', toolName: 'write', toolUseId: 'call_0_0' },
  '004-tool.execute.after.json': { type: 'tool.failed', hookEvent: 'tool.execute.after', toolName: 'bash', toolUseId: 'call_1_0' },
  '005-tool.execute.after.json': { type: 'tool.executed', hookEvent: 'tool.execute.after', toolName: 'bash', toolUseId: 'call_2_0' },
  '006-session.idle.json': { type: 'turn.stopped', hookEvent: 'session.idle' },
};

describe('opencode payloads (as the plugin sent them in opencode 1.18.33)', () => {
  it.each(Object.entries(EXPECTED))('%s: typed with the hint, and recognised as opencode by its shape alone', (name, want) => {
    const p = fixture(name);
    for (const r of [recognise(p, want.hookEvent, 'opencode'), guessShape(p, '')]) {
      expect(r.runtime).toBe('opencode');
      expect(r.type).toBe(want.type);
      expect(r.hookEvent).toBe(want.hookEvent);
      expect(r.sessionId).toBe(SESSION);
      if (want.toolName) expect(r.toolName).toBe(want.toolName);
      if (want.toolUseId) expect(r.toolUseId).toBe(want.toolUseId);
    }
  });

  it("the Stop hook's own event (hook arg Stop) is the turn's end too", () => {
    expect(recognise(fixture('006-session.idle.json'), 'Stop', 'opencode').type).toBe('turn.stopped');
  });

  it('the failed shell call carries exit code 3 (metadata.exit); the others exit 0 or have none', () => {
    expect(opencodeExitCode(fixture('004-tool.execute.after.json'))).toBe(3);
    expect(opencodeExitCode(fixture('005-tool.execute.after.json'))).toBe(0);
    expect(opencodeExitCode(fixture('003-tool.execute.after.json'))).toBeNull();
    // Only metadata.exit (an older plugin without exit_code) still types it.
    const { exit_code: _drop, ...bare } = fixture('004-tool.execute.after.json');
    expect(opencodeExitCode(bare)).toBe(3);
    expect(recognise(bare, 'tool.execute.after', 'opencode').type).toBe('tool.failed');
    expect(recognise(fixture('004-tool.execute.after.json'), 'tool.execute.after', 'opencode').durationMs).toBe(171);
  });

  it("a subagent's session going idle is subagent.stopped, under the parent session with the child as agent", () => {
    const p = { ...fixture('006-session.idle.json'), agent_id: 'ses_dc50be71effeCHILDsessionXYZ' };
    const r = recognise(p, 'session.idle', 'opencode');
    expect([r.type, r.sessionId, r.agentId]).toEqual(['subagent.stopped', SESSION, 'ses_dc50be71effeCHILDsessionXYZ']);
  });

  it('an event it does not know is event.unknown, kept as opencode; a stranger payload is not taken for opencode', () => {
    expect(recognise({ hook_event_name: 'permission.ask', session_id: SESSION }, 'permission.ask', 'opencode')).toMatchObject({
      runtime: 'opencode',
      type: 'event.unknown',
    });
    expect(guessShape({ hook_event_name: 'tool.execute.after', session_id: 'not-an-opencode-id' }, '').runtime).not.toBe('opencode');
  });

  it('session.idle carries the final answer with its reflection block', () => {
    const answer = answerFromPayload(JSON.stringify(fixture('006-session.idle.json')));
    const block = lastReflectionBlock(answer as string);
    expect(block.kind).toBe('block');
    expect(JSON.parse((block as { text: string }).text).confidence).toBe(0.55);
  });
});

function vendor(dir: string): void {
  mkdirSync(join(dir, '.claude', 'hooks', 'forge-reflect', 'lib'), { recursive: true });
  for (const name of ['reflect-event-hook.sh', 'reflect-stop-hook.sh'])
    writeFileSync(join(dir, '.claude', 'hooks', 'forge-reflect', name), readFileSync(join(KIT_ROOT, 'hooks', name)));
  for (const name of readdirSync(join(KIT_ROOT, 'hooks', 'lib')))
    writeFileSync(join(dir, '.claude', 'hooks', 'forge-reflect', 'lib', name), readFileSync(join(KIT_ROOT, 'hooks', 'lib', name)));
}

function spooled(dir: string): string {
  const spool = join(dir, '.forge', 'spool');
  if (!existsSync(spool)) return '';
  return readdirSync(spool)
    .filter((n) => !n.startsWith('.'))
    .map((n) => readFileSync(join(spool, n), 'latin1'))
    .join('\n');
}

type Hook = (input?: unknown, output?: unknown) => Promise<void>;
type Hooks = Record<string, Hook>;
let loads = 0;

/** The plugin as opencode loads it: from <repo>/.opencode/plugins/, its export called with a ctx. */
async function loadPlugin(dir: string, env: Record<string, string | undefined>, client: unknown = {}): Promise<Hooks> {
  mkdirSync(join(dir, '.opencode', 'plugins'), { recursive: true });
  const file = join(dir, OPENCODE_PLUGIN_FILE);
  writeFileSync(file, opencodePluginText());
  const mod = (await import(`${pathToFileURL(file).href}?load=${++loads}`)) as Record<string, (ctx: unknown) => Promise<Hooks>>;
  expect(Object.keys(mod)).toEqual(['ForgeReflect']);
  return withEnv(env, () =>
    (mod.ForgeReflect as (ctx: unknown) => Promise<Hooks>)({ client, directory: dir, worktree: dir, project: { id: 'x', worktree: dir } }),
  );
}

async function withEnv<T>(env: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env)) {
    saved[k] = process.env[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

const ON = {
  REFLECTION_MODE: 'solo',
  FORGE_REFLECT_CLI: 'off',
  FORGE_DIR: undefined,
  REFLECTION_DIR: undefined,
  FORGE_PROJECT_DIR: undefined,
  CLAUDE_PROJECT_DIR: undefined,
  QWEN_PROJECT_DIR: undefined,
};

/** opencode's captured session (write, `exit 3`, `echo ok`, the answer), fed to the plugin's hooks in the order opencode called them. */
async function playSession(hooks: Hooks): Promise<void> {
  const call = (name: string, file: string) => {
    const [input, output] = raw(file) as [unknown, unknown];
    return (hooks[name] as Hook)(input, output);
  };
  await (hooks.event as Hook)({ event: raw('0003-event.session.created.json') });
  await call('chat.message', '0005-chat.message.json');
  for (const [before, after] of [
    ['0086-tool.execute.before.json', '0090-tool.execute.after.json'],
    ['0119-tool.execute.before.json', '0124-tool.execute.after.json'],
    ['0152-tool.execute.before.json', '0157-tool.execute.after.json'],
  ] as const) {
    await call('tool.execute.before', before);
    await call('tool.execute.after', after);
  }
  await call('experimental.text.complete', '0192-experimental.text.complete.json');
  await (hooks.event as Hook)({ event: raw('0200-event.session.idle.json') });
}

describe('the plugin, driven with the hook inputs opencode gave it', () => {
  it('spools every mapped event as opencode, the failed call with its exit code, and writes the sidecar before session.idle returns', async () => {
    const dir = tempDir();
    vendor(dir);
    const hooks = await loadPlugin(dir, ON);
    await withEnv(ON, () => playSession(hooks));
    const spool = spooled(dir);
    expect(spool.match(/"runtime":"opencode"/g)?.length).toBeGreaterThanOrEqual(6);
    expect(spool).not.toMatch(/"runtime":"(claude-code|qwen|cline)"/);
    expect(spool.match(/"event":"tool\.execute\.after"/g)).toHaveLength(3);
    expect(spool).toContain('"exit_code":3');
    expect(spool).toContain('"event":"session.created"');
    expect(spool).toContain('"event":"chat.message"');
    const sidecars = readdirSync(join(dir, '.forge', 'reflections')).filter((n) => n.endsWith('.reflection.json'));
    expect(sidecars).toHaveLength(1);
    const sidecar = JSON.parse(readFileSync(join(dir, '.forge', 'reflections', sidecars[0] as string), 'utf8')) as Record<string, unknown>;
    expect(sidecar.agent).toBe('opencode');
    expect(sidecar.session_id).toBe('ses_dca761d0affeZj0ufZl9SAhgjE');
    expect(sidecar.confidence).toBe(0.6);
  });

  it('with no text kept, the answer comes from the client API (the last assistant message)', async () => {
    const dir = tempDir();
    vendor(dir);
    const answer = raw('0192-experimental.text.complete.json') as [unknown, { text: string }];
    const client = {
      session: {
        messages: async () => ({
          data: [
            { info: { role: 'user' }, parts: [] },
            { info: { role: 'assistant' }, parts: [{ type: 'text', text: answer[1].text }] },
          ],
        }),
      },
    };
    const hooks = await loadPlugin(dir, ON, client);
    await withEnv(ON, () => (hooks.event as Hook)({ event: raw('0200-event.session.idle.json') }));
    const sidecars = readdirSync(join(dir, '.forge', 'reflections')).filter((n) => n.endsWith('.reflection.json'));
    expect(sidecars).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(dir, '.forge', 'reflections', sidecars[0] as string), 'utf8')).confidence).toBe(0.6);
  });

  it('a model error: opencode goes idle twice, one sidecar (degraded), the error in the Stop payload; the next prompt opens a turn again', async () => {
    const dir = tempDir();
    vendor(dir);
    const hooks = await loadPlugin(dir, ON, { session: { messages: async () => ({ data: [{ info: { role: 'assistant' }, parts: [] }] }) } });
    const idle = raw('0200-event.session.idle.json');
    const [input, output] = raw('0005-chat.message.json') as [unknown, unknown];
    await withEnv(ON, async () => {
      await (hooks['chat.message'] as Hook)(input, output);
      await (hooks.event as Hook)({
        event: {
          type: 'session.error',
          properties: { sessionID: 'ses_dca761d0affeZj0ufZl9SAhgjE', error: { name: 'APIError', data: { message: 'model overloaded' } } },
        },
      });
      await (hooks.event as Hook)({ event: idle });
      await (hooks.event as Hook)({ event: idle });
    });
    const names = () => readdirSync(join(dir, '.forge', 'reflections')).filter((n) => n.endsWith('.reflection.json'));
    expect(names()).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(dir, '.forge', 'reflections', names()[0] as string), 'utf8')).provenance.degraded).toBe(true);
    expect(spooled(dir)).toContain('"error":"model overloaded"');
    expect(spooled(dir)).toMatch(/"self_report_note":"the turn ended on an error \(opencode: session.error, then session.idle: model overloaded\)/);
    await withEnv(ON, async () => {
      await (hooks['chat.message'] as Hook)(input, output);
      await (hooks.event as Hook)({ event: idle });
    });
    expect(names()).toHaveLength(2);
  });

  it('a subagent (a child session) is logged under its parent, and its idle writes no sidecar', async () => {
    const dir = tempDir();
    vendor(dir);
    const hooks = await loadPlugin(dir, ON);
    const created = raw('0003-event.session.created.json') as { properties: { info: Record<string, unknown> } };
    const child = 'ses_dca761d0affeCHILDchildCHILD';
    await withEnv(ON, async () => {
      await (hooks.event as Hook)({
        event: {
          type: 'session.created',
          properties: { sessionID: child, info: { ...created.properties.info, id: child, parentID: 'ses_dca761d0affeZj0ufZl9SAhgjE' } },
        },
      });
      const [input, output] = raw('0124-tool.execute.after.json') as [Record<string, unknown>, unknown];
      await (hooks['tool.execute.after'] as Hook)({ ...input, sessionID: child }, output);
      await (hooks.event as Hook)({ event: { type: 'session.idle', properties: { sessionID: child } } });
    });
    const spool = spooled(dir);
    expect(spool).not.toContain('"event":"session.created"');
    expect(spool).toContain(`"agent_id":"${child}"`);
    expect(spool).toContain('"session_id":"ses_dca761d0affeZj0ufZl9SAhgjE"');
    expect(spool).toContain('"event":"session.idle"');
    expect(existsSync(join(dir, '.forge', 'reflections'))).toBe(false);
  });

  it('with REFLECTION_MODE unset it registers nothing and writes nothing', async () => {
    const dir = tempDir();
    vendor(dir);
    const hooks = await loadPlugin(dir, { ...ON, REFLECTION_MODE: undefined });
    expect(hooks).toEqual({});
    expect(existsSync(join(dir, '.forge'))).toBe(false);
  });

  it('never throws into opencode: bad input, a failing client, the kit missing', async () => {
    const dir = tempDir();
    const hooks = await loadPlugin(dir, ON, {
      session: {
        messages: async () => {
          throw new Error('down');
        },
      },
    });
    await withEnv(ON, async () => {
      for (const [name, hook] of Object.entries(hooks)) {
        await expect(hook(), name).resolves.toBeUndefined();
        await expect(hook(null, null), name).resolves.toBeUndefined();
        await expect(hook({ sessionID: 42 }, { metadata: 'x' }), name).resolves.toBeUndefined();
      }
      await playSession(hooks);
    });
    expect(existsSync(join(dir, '.forge'))).toBe(false);
  });
});

describe('opencode doctor', () => {
  it('the kit’s plugin with the hooks vendored: ok; opencode’s npm install into .opencode/ is pointed out', () => {
    const dir = tempDir();
    vendor(dir);
    mkdirSync(join(dir, '.opencode', 'plugins'), { recursive: true });
    writeFileSync(join(dir, OPENCODE_PLUGIN_FILE), opencodePluginText());
    const checks = opencode.doctorChecks(dir, {});
    expect(checks.find((c) => c.name === 'opencode plugin')?.status).toBe('ok');
    expect(checks.find((c) => c.name === 'opencode hooks')).toBeUndefined();
    expect(checks.find((c) => c.name === 'opencode npm install')?.status).toBe('warn');
    writeFileSync(join(dir, '.opencode', 'package-lock.json'), '{"packages":{"":{"dependencies":{"@opencode-ai/plugin":"1.18.33"}}}}');
    expect(opencode.doctorChecks(dir, {}).find((c) => c.name === 'opencode npm install')).toBeUndefined();
  });

  it('an edited or foreign plugin warns; the hooks missing fails', () => {
    const dir = tempDir();
    mkdirSync(join(dir, '.opencode', 'plugins'), { recursive: true });
    writeFileSync(join(dir, OPENCODE_PLUGIN_FILE), `${opencodePluginText()}// edited\n`);
    expect(opencode.doctorChecks(dir, {}).find((c) => c.name === 'opencode plugin')?.status).toBe('warn');
    expect(opencode.doctorChecks(dir, {}).find((c) => c.name === 'opencode hooks')?.status).toBe('fail');
    writeFileSync(join(dir, OPENCODE_PLUGIN_FILE), 'export const Mine = async () => ({});\n');
    expect(opencode.doctorChecks(dir, {}).find((c) => c.name === 'opencode plugin')?.detail).toContain('not the kit');
  });
});

function cli(args: string[], cwd: string, env: Record<string, string> = {}) {
  const base = { ...process.env };
  for (const key of Object.keys(base)) if (/^(REFLECTION_|FORGE_|CLAUDE_|GEMINI_|CODEX_|QWEN_|OPENCODE)/.test(key)) delete base[key];
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, env: { ...base, NO_COLOR: '1', FORGE_REFLECT_CLI: 'off', ...env }, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function gitRepo(): string {
  const dir = join(tempDir('forge oc '), 'my repo');
  mkdirSync(dir, { recursive: true });
  spawnSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
  return dir;
}

/** Every file under a folder (but .git) with its bytes. */
function tree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (dir === root && entry.name === '.git') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        out[`${path.slice(root.length + 1)}/`] = '';
        walk(path);
      } else out[path.slice(root.length + 1)] = readFileSync(path, 'latin1');
    }
  };
  walk(root);
  return out;
}

describe('install / uninstall / doctor --runtime opencode (built CLI)', () => {
  it("writes the plugin beside a user's own, is idempotent, and uninstall gives back every byte", () => {
    const dir = gitRepo();
    mkdirSync(join(dir, '.opencode', 'plugins'), { recursive: true });
    writeFileSync(join(dir, '.opencode', 'plugins', 'mine.js'), 'export const Mine = async () => ({});\n');
    writeFileSync(join(dir, '.opencode', 'opencode.json'), '{ "theme": "x" }\n');
    const before = tree(dir);
    const install = cli(['install', '--runtime', 'opencode', '--json'], dir);
    expect(install.status, install.stderr).toBe(0);
    expect(readFileSync(join(dir, OPENCODE_PLUGIN_FILE), 'utf8')).toBe(opencodePluginText());
    expect(existsSync(join(dir, '.claude', 'hooks', 'forge-reflect', 'reflect-stop-hook.sh'))).toBe(true);
    expect(existsSync(join(dir, '.claude', 'settings.json'))).toBe(false);
    const manifest = JSON.parse(readFileSync(join(dir, '.claude', 'hooks', 'forge-reflect', 'install-manifest.json'), 'utf8'));
    expect(Object.keys(manifest.hook_files ?? {})).toEqual([OPENCODE_PLUGIN_FILE]);
    expect(cli(['install', '--runtime', 'opencode'], dir).stdout).toContain('Already installed');
    const doctor = JSON.parse(cli(['doctor', '--json'], dir, { HOME: tempDir() }).stdout) as { checks: Array<{ name: string; status: string }> };
    expect(doctor.checks.find((c) => c.name === 'opencode plugin')?.status).toBe('ok');
    const un = cli(['uninstall', '--runtime', 'opencode'], dir);
    expect(un.status, un.stderr).toBe(0);
    const after = tree(dir);
    delete after['.forge/'];
    delete after['.forge/.gitignore'];
    expect(after).toEqual(before);
  });

  it('in a repo without .opencode/, uninstall takes out the folders install created', () => {
    const dir = gitRepo();
    expect(cli(['install', '--runtime', 'opencode'], dir).status).toBe(0);
    expect(cli(['uninstall', '--runtime', 'opencode'], dir).status).toBe(0);
    expect(existsSync(join(dir, '.opencode'))).toBe(false);
    expect(existsSync(join(dir, '.claude'))).toBe(false);
  });

  it("refuses to replace a forge-reflect.js that is not the kit's; keeps an edited one at uninstall", () => {
    const dir = gitRepo();
    mkdirSync(join(dir, '.opencode', 'plugins'), { recursive: true });
    writeFileSync(join(dir, OPENCODE_PLUGIN_FILE), 'export const Theirs = async () => ({});\n');
    const refused = cli(['install', '--runtime', 'opencode'], dir);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('is not forge-reflect');
    expect(readFileSync(join(dir, OPENCODE_PLUGIN_FILE), 'utf8')).toBe('export const Theirs = async () => ({});\n');

    const other = gitRepo();
    expect(cli(['install', '--runtime', 'opencode'], other).status).toBe(0);
    writeFileSync(join(other, OPENCODE_PLUGIN_FILE), `${opencodePluginText()}// mine\n`);
    expect(cli(['uninstall', '--runtime', 'opencode'], other).status).toBe(0);
    expect(readFileSync(join(other, OPENCODE_PLUGIN_FILE), 'utf8')).toContain('// mine');
  });
});
