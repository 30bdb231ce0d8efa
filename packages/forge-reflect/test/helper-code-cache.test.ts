/**
 * The Stop hook's helper compiles itself with a V8 code cache kept in the state dir's cache/ folder,
 * which the hook names in its first fact (src/helper/code-cache.ts). These tests run the built helper
 * (hooks/lib/reflect-helper.cjs) as the hook runs it, facts on stdin, and check: a first run writes the cache (0600 in a 0700 folder), a
 * second run uses it (V8 took it: the file is left as it was), the sidecar is the same with and
 * without it, and a cache that is not safe to use (a link, writable by others, garbage) is never
 * used as it is: the helper compiles as usual and writes its own.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codeCacheDir, codeCacheName, readCodeCache, writeCodeCache } from '../src/helper/code-cache.js';

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const HELPER = join(REPO_ROOT, 'hooks/lib/reflect-helper.cjs');

let work: string;
beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'forge-code-cache-'));
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

/**
 * Runs the built helper once with the facts of a small Stop, the cache folder `cache` named first
 * (none: not named); returns its status line and the sidecar text.
 */
function runHelper(cache: string | null, env: Record<string, string> = {}): { status: string; sidecar: string } {
  const payload = join(work, 'payload');
  const statusFile = join(work, 'status');
  const out = join(work, 'out.json');
  rmSync(out, { force: true });
  writeFileSync(
    payload,
    '{"v":1}\n{"session_id":"s1","last_assistant_message":"done\\n\\n```reflection\\n{\\"confidence\\":0.7,\\"most_likely_wrong\\":{\\"surface\\":\\"auth\\",\\"description\\":\\"token refresh\\"},\\"known_not_in_diff\\":null}\\n```\\n"}',
  );
  writeFileSync(statusFile, '# branch.oid 0123456789012345678901234567890123456789\0# branch.head main\0? src/auth/token.ts\0? docs/a.md\0');
  const facts = [
    ...(cache === null ? [] : [`FORGE_H_CODE_CACHE=${cache}`]),
    `FORGE_H_OUT=${out}`,
    `FORGE_H_STATUS=${statusFile}`,
    'FORGE_H_STATUS_BASE=snapshot',
    'FORGE_H_GIT_OK=1',
    `FORGE_H_PAYLOAD=${payload}`,
    'FORGE_H_SESSION_ID=s1',
    'FORGE_H_TASK_REF=repo#main',
    'FORGE_H_AGENT=claude-code',
    'FORGE_H_REPO=repo',
    'FORGE_H_TIMESTAMP=2026-11-27T00:00:00.000000Z',
    'FORGE_H_MODE=solo',
    'FORGE_H_ATTEMPT=1',
    'FORGE_H_CLOSE_STDOUT=1',
  ]
    .map((f) => `${f}\0`)
    .join('');
  const clean = { ...process.env };
  delete clean.FORGE_CODE_CACHE;
  const result = spawnSync(process.execPath, [HELPER], { input: facts, env: { ...clean, ...env }, encoding: 'utf8' });
  expect(result.status).toBe(0);
  return { status: result.stdout, sidecar: readFileSync(out, 'utf8') };
}

describe('the helper code cache, through the built helper', () => {
  it('is written by the first run, 0600 in a 0700 folder, and used as it is by the next', () => {
    const dir = join(work, 'state', 'cache');
    mkdirSync(join(work, 'state'), { mode: 0o700 });
    const first = runHelper(dir);
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(new RegExp(`^reflect-helper-[0-9a-f]{16}-${process.version.replace(/\./g, '\\.')}-${process.arch}\\.v8$`));
    const cache = join(dir, files[0] as string);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(cache).mode & 0o777).toBe(0o600);
    const before = statSync(cache);
    const second = runHelper(dir);
    // V8 accepted it: the helper left it alone (a refused cache is written anew, a new inode).
    const after = statSync(cache);
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(second).toEqual(first);
    expect(first.status).toBe('ok answer\n');
    expect(JSON.parse(first.sidecar).risk.surface).toBe('auth');
  });

  it('gives the same sidecar with the cache turned off or not named, and then writes none', () => {
    const dir = join(work, 'cache');
    const cached = runHelper(dir);
    runHelper(dir);
    expect(runHelper(join(work, 'other'), { FORGE_CODE_CACHE: 'off' })).toEqual(cached);
    expect(runHelper(null)).toEqual(cached);
    expect(runHelper('relative/cache')).toEqual(cached);
    expect(existsSync(join(work, 'other'))).toBe(false);
    expect(existsSync(join(work, 'relative'))).toBe(false);
  });

  it('never uses a cache that is garbage, writable by others or a link: the helper compiles as usual and writes its own', () => {
    const dir = join(work, 'cache');
    const expected = runHelper(dir);
    const name = readdirSync(dir)[0] as string;
    const cache = join(dir, name);
    const good = readFileSync(cache);

    // Garbage of the right kind of file: V8 refuses it, the helper writes a good one over it.
    const garbage = Buffer.alloc(good.length, 7);
    writeFileSync(cache, garbage, { mode: 0o600 });
    expect(runHelper(dir)).toEqual(expected);
    expect(readFileSync(cache).equals(garbage)).toBe(false);
    const rewritten = statSync(cache).ino;
    runHelper(dir);
    expect(statSync(cache).ino).toBe(rewritten); // and V8 takes the new one

    // Readable by the group (as a checkout under umask 022 makes it): not read, replaced by a private one.
    chmodSync(cache, 0o640);
    const shared = statSync(cache).ino;
    expect(runHelper(dir)).toEqual(expected);
    expect(statSync(cache).ino).not.toBe(shared);
    expect(statSync(cache).mode & 0o777).toBe(0o600);

    // A link planted at the name: not followed; the link itself is replaced, its target untouched.
    const target = join(work, 'elsewhere.v8');
    writeFileSync(target, good, { mode: 0o600 });
    rmSync(cache);
    symlinkSync(target, cache);
    expect(readCodeCache(dir, name)).toBeUndefined();
    expect(runHelper(dir)).toEqual(expected);
    expect(statSync(cache).isFile()).toBe(true);
    expect(readFileSync(target).equals(good)).toBe(true);

    // The folder a link: neither read nor written through.
    const real = join(work, 'real-cache');
    mkdirSync(real, { mode: 0o700 });
    writeFileSync(join(real, name), good, { mode: 0o600 });
    const linked = join(work, 'linked-cache');
    symlinkSync(real, linked);
    expect(readCodeCache(linked, name)).toBeUndefined();
    expect(runHelper(linked)).toEqual(expected);
    expect(readdirSync(real)).toEqual([name]);
    expect(readFileSync(join(real, name)).equals(good)).toBe(true);
  });
});

describe('the built helper, as node reads it', () => {
  it('is ASCII and escapes no character above U+00FF, so the helper literal V8 scans at every Stop stays one-byte', () => {
    const built = readFileSync(HELPER, 'utf8');
    expect(built).not.toMatch(/[^\x00-\x7f]/);
    // An odd run of backslashes before `u` escapes a character of the literal itself (an escape in
    // the helper's own text shows as `\\u` here); any such character at U+0100 or above would make
    // V8 hold the whole literal as a two-byte string.
    expect(built).not.toMatch(/(?<!\\)(?:\\\\)*\\u(?:\{0*[1-9a-f][0-9a-f]{2,}\}|(?!00)[0-9a-f]{4})/i);
  });
});

describe('the code cache, its parts', () => {
  it('takes the folder from the first fact only, absolute, and none when off', () => {
    expect(codeCacheDir('FORGE_H_CODE_CACHE=/r/.forge/cache', {})).toBe('/r/.forge/cache');
    expect(codeCacheDir('FORGE_H_CODE_CACHE=/r/.forge/cache//', {})).toBe('/r/.forge/cache');
    expect(codeCacheDir('FORGE_H_CODE_CACHE=rel/cache', {})).toBeNull();
    expect(codeCacheDir('FORGE_H_OUT=/x', {})).toBeNull();
    expect(codeCacheDir('', {})).toBeNull();
    expect(codeCacheDir('FORGE_H_CODE_CACHE=/r/.forge/cache', { FORGE_CODE_CACHE: 'off' })).toBeNull();
  });

  it('names the file by build, node version and architecture, in file-name-safe characters', () => {
    expect(codeCacheName('abc', 'v20.20.2', 'x64')).toBe('reflect-helper-abc-v20.20.2-x64.v8');
    expect(codeCacheName('a/b', 'v1 2', 'x')).toBe('reflect-helper-a_b-v1_2-x.v8');
  });

  it('reads back what it wrote, refuses a folder open to others, and removes the caches of other builds', () => {
    const dir = join(work, 'cache');
    writeCodeCache(dir, 'reflect-helper-old-v1-x64.v8', Buffer.from('old'));
    writeCodeCache(dir, 'reflect-helper-new-v1-x64.v8', Buffer.from('new'));
    expect(readdirSync(dir)).toEqual(['reflect-helper-new-v1-x64.v8']);
    expect(readCodeCache(dir, 'reflect-helper-new-v1-x64.v8')?.toString()).toBe('new');
    chmodSync(dir, 0o750); // readable by the group: refused too (the folder is made 0700)
    expect(readCodeCache(dir, 'reflect-helper-new-v1-x64.v8')).toBeUndefined();
    chmodSync(dir, 0o777);
    expect(readCodeCache(dir, 'reflect-helper-new-v1-x64.v8')).toBeUndefined();
    writeCodeCache(dir, 'reflect-helper-newer-v1-x64.v8', Buffer.from('newer'));
    expect(readdirSync(dir)).toEqual(['reflect-helper-new-v1-x64.v8']);
  });
});
