/**
 * The Stop hook's helper starts through this: it compiles the bundled helper (hook-helper.ts, given
 * as source text at build time) with a V8 code cache, runs it, and, when there was no usable cache,
 * writes one once the helper is done with the hook (stdout closed: the hook no longer waits).
 *
 * Why: node compiles every function the first time it runs it. For the helper that was ~4 ms of a
 * ~32 ms Stop (node's own start is ~24 ms of it), on the hook's critical path at every turn. With the
 * code cache the compiled functions are read back instead.
 *
 * Where: `$XDG_CACHE_HOME/forge-reflect/`, else `$HOME/.cache/forge-reflect/`, one file per helper
 * build, node version and architecture. Not in the repo's `.forge/`: a file there could come from a
 * clone, and a code cache is code. A cache is used only when its folder and file are this user's,
 * writable by nobody else, and the file is a regular file reached without a link. V8 itself refuses
 * a cache of another V8 version, other flags or another source; the helper then compiles as usual
 * and writes a new one. `FORGE_CODE_CACHE=off` turns it off. Nothing here can fail the helper: any
 * error only means no cache.
 */
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { Script } from 'node:vm';

/** The helper's source text and its build id (a hash of that text), put here by the bundler. */
declare const HELPER_SOURCE: string;
declare const HELPER_BUILD_ID: string;

const CACHE_MAX_BYTES = 8 * 1024 * 1024;
const PREFIX = 'reflect-helper-';

/** The cache folder for this environment, or null (turned off, or no absolute HOME or XDG_CACHE_HOME). */
export function codeCacheDir(env: Record<string, string | undefined>): string | null {
  if (env.FORGE_CODE_CACHE === 'off') return null;
  const xdg = env.XDG_CACHE_HOME;
  if (xdg?.startsWith('/')) return `${xdg.replace(/\/+$/, '')}/forge-reflect`;
  const home = env.HOME;
  if (home?.startsWith('/')) return `${home.replace(/\/+$/, '')}/.cache/forge-reflect`;
  return null;
}

/** The cache's file name: the helper build, node's version and the architecture (V8 checks the rest). */
export function codeCacheName(buildId: string, version: string, arch: string): string {
  return `${PREFIX}${buildId}-${version}-${arch}.v8`.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** Owned by this user and writable by no one else. */
function ours(mode: number, uid: number): boolean {
  return uid === process.getuid?.() && (mode & 0o022) === 0;
}

/** The cached data when folder and file pass the checks above, else undefined. */
export function readCodeCache(dir: string, name: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    const folder = lstatSync(dir);
    if (!folder.isDirectory() || !ours(folder.mode, folder.uid)) return undefined;
    fd = openSync(`${dir}/${name}`, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const file = fstatSync(fd);
    if (!file.isFile() || !ours(file.mode, file.uid) || (file.mode & 0o077) !== 0 || file.size === 0 || file.size > CACHE_MAX_BYTES) return undefined;
    const data = Buffer.allocUnsafe(file.size);
    let read = 0;
    while (read < data.length) {
      const n = readSync(fd, data, read, data.length - read, read);
      if (n === 0) return undefined;
      read += n;
    }
    return data;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Writes the cache whole (a fresh temp name, 0600, then a rename), in a folder made 0700, and removes
 * the caches of other builds and node versions. Quiet on any failure.
 */
export function writeCodeCache(dir: string, name: string, data: Buffer): void {
  const temp = `${dir}/.${name}.${process.pid}.tmp`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const folder = lstatSync(dir);
    if (!folder.isDirectory() || !ours(folder.mode, folder.uid)) return;
    const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      writeSync(fd, data);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, `${dir}/${name}`);
    for (const other of readdirSync(dir)) {
      if (other !== name && other.startsWith(PREFIX) && other.endsWith('.v8')) unlinkSync(`${dir}/${other}`);
    }
  } catch {
    try {
      unlinkSync(temp);
    } catch {
      // never made
    }
  }
}

function start(): void {
  const dir = codeCacheDir(process.env);
  const name = codeCacheName(HELPER_BUILD_ID, process.version, process.arch);
  const cached = dir === null ? undefined : readCodeCache(dir, name);
  // The CommonJS wrapper, as node's own loader gives a module.
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${HELPER_SOURCE}\n})`, {
    filename: __filename,
    ...(cached === undefined ? {} : { cachedData: cached }),
  });
  const run = script.runInThisContext() as (e: unknown, r: NodeRequire, m: NodeModule, f: string, d: string) => void;
  run(module.exports, require, module, __filename, __dirname);
  // The helper is done with the hook: a cache written now costs the hook nothing.
  if (dir !== null && (cached === undefined || script.cachedDataRejected === true)) {
    try {
      writeCodeCache(dir, name, script.createCachedData());
    } catch {
      // no cache this time
    }
  }
}

// Started as the bundled helper (the bundler defines HELPER_SOURCE); imported by tests, it does nothing.
if (typeof HELPER_SOURCE === 'string') start();
