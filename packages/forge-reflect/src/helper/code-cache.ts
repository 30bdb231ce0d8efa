/**
 * The Stop hook's helper starts through this: it compiles the bundled helper (hook-helper.ts, given
 * as source text at build time) with a V8 code cache, runs it, and, when there was no usable cache,
 * writes one once the helper is done (after the hook has exited: see hook-helper.ts).
 *
 * Why: node compiles every function the first time it runs it. For the helper that compile sits on
 * the Stop hook's critical path at every turn, above a floor that is node's own start. With the
 * code cache the compiled functions are read back instead.
 *
 * Where: in the state dir, `.forge/cache/`, one file per helper build, node version and
 * architecture: the hook names the folder in its first fact on stdin (FORGE_H_CODE_CACHE), which
 * this reads before anything else and hands on to the helper with the rest. A code cache is code,
 * so one is used only when its folder and file are this user's and open to no one else (0700 and
 * 0600, as the hook makes them under umask 077) and the file is a regular file reached without a
 * link; SECURITY.md says what a cloned repo's `.forge/` means. V8 itself refuses a cache of another
 * V8 version, other flags or another source; the helper then compiles as usual and writes a new
 * one. `FORGE_CODE_CACHE=off` turns it off. Nothing here can fail the helper: any error only means
 * no cache.
 */
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { Script } from 'node:vm';

/** The helper's source text and its build id (a hash of that text), put here by the bundler. */
declare const HELPER_SOURCE: string;
declare const HELPER_BUILD_ID: string;

const CACHE_MAX_BYTES = 8 * 1024 * 1024;
const PREFIX = 'reflect-helper-';

/** The fact that names the cache folder, first on the helper's stdin. */
export const CACHE_FACT = 'FORGE_H_CODE_CACHE=';

/** The cache folder the hook named in its first fact, or null (none named, not absolute, or turned off). */
export function codeCacheDir(firstFact: string, env: Record<string, string | undefined>): string | null {
  if (env.FORGE_CODE_CACHE === 'off' || !firstFact.startsWith(CACHE_FACT)) return null;
  const dir = firstFact.slice(CACHE_FACT.length);
  return dir.startsWith('/') ? withoutTrailingSlashes(dir) || '/' : null;
}

/**
 * Reads stdin up to the end of its first NUL-terminated record (or its end, or 64 KiB): every byte
 * read, and the first record's text. Blocking reads of a pipe return what is there, so this takes
 * no more than the hook has already sent.
 */
function readFirstFact(): { read: Buffer; first: string } {
  const buffer = Buffer.allocUnsafe(64 * 1024);
  let filled = 0;
  let end = -1;
  try {
    while (filled < buffer.length && end < 0) {
      const n = readSync(0, buffer, filled, buffer.length - filled, null);
      if (n === 0) break;
      // A loop, not Buffer#indexOf: the first call of each Buffer method is costly in a fresh process.
      for (let i = filled; i < filled + n; i++) {
        if (buffer[i] === 0) {
          end = i;
          break;
        }
      }
      filled += n;
    }
  } catch {
    // stdin closed or unreadable: the helper reads what it can
  }
  const read = buffer.subarray(0, filled);
  return { read, first: read.toString('utf8', 0, end < 0 ? filled : end) };
}

// (String work without regexes here: a regex is compiled on first use, and this runs before
// anything else at every Stop.)
function withoutTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path[end - 1] === '/') end--;
  return path.slice(0, end);
}

/** The cache's file name: the helper build, node's version and the architecture (V8 checks the rest). */
export function codeCacheName(buildId: string, version: string, arch: string): string {
  let name = '';
  for (const c of `${PREFIX}${buildId}-${version}-${arch}.v8`)
    name += (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c === '.' || c === '_' || c === '-' ? c : '_';
  return name;
}

/** Owned by this user and open to no one else (0700 for the folder, 0600 for the file, as made). */
function ours(mode: number, uid: number): boolean {
  return uid === process.getuid?.() && (mode & 0o077) === 0;
}

/** The cached data when folder and file pass the checks above, else undefined. */
export function readCodeCache(dir: string, name: string): Buffer | undefined {
  let folderFd: number | undefined;
  let fd: number | undefined;
  try {
    // The folder opened (never through a link) and its fstat, not an lstat: fstat is needed for
    // the file anyway, and lstat's first call would be one more costly first call in a fresh process.
    folderFd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    const folder = fstatSync(folderFd);
    if (!folder.isDirectory() || !ours(folder.mode, folder.uid)) return undefined;
    fd = openSync(`${dir}/${name}`, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const file = fstatSync(fd);
    if (!file.isFile() || !ours(file.mode, file.uid) || file.size === 0 || file.size > CACHE_MAX_BYTES) return undefined;
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
    if (folderFd !== undefined) closeSync(folderFd);
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

// The helper's text in the CommonJS wrapper node's own loader gives a module, plus what was read of
// stdin. A constant of this script's top level, not a literal inside start(): V8 scans a function's
// text once to skip it and again to compile it, and this literal is most of this file.
const WRAPPED_SOURCE =
  typeof HELPER_SOURCE === 'string' ? `(function (exports, require, module, __filename, __dirname, FORGE_STDIN_READ) {${HELPER_SOURCE}\n})` : '';

function start(): void {
  const { read, first } = readFirstFact();
  const dir = codeCacheDir(first, process.env);
  const name = codeCacheName(HELPER_BUILD_ID, process.version, process.arch);
  const cached = dir === null ? undefined : readCodeCache(dir, name);
  const script = new Script(WRAPPED_SOURCE, {
    filename: __filename,
    ...(cached === undefined ? {} : { cachedData: cached }),
  });
  const run = script.runInThisContext() as (e: unknown, r: NodeRequire, m: NodeModule, f: string, d: string, stdin: Buffer) => void;
  run(module.exports, require, module, __filename, __dirname, read);
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
