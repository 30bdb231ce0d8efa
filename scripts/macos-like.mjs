#!/usr/bin/env node
// node scripts/macos-like.mjs: prints the bin/ folder of the stock-Mac stand-in (bash 3.2 and the
// FreeBSD userland), making it first if needed. The stand-in's own bin/ holds one entry per command,
// a symbolic link in the original; a copy that lost its links keeps each target as the file's text.
// Either way a bin/ of real links is made once in the cache (FORGE_MACOS_LIKE, default
// ~/.cache/forge-reflect/macos-like), each link pointing at the program itself, so a program that
// reads its name from argv[0] (egrep, readlink, `[`) still sees the name it was called by.
//
// The stand-in is found at FORGE_MACOS_LIKE_SRC, else ../shared/tools/macos-like beside the
// checkout, else /work/shared/tools/macos-like. Exit 1, naming the fix, when none is there.
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The stand-in's folder, or undefined. */
export function findSource(env = process.env) {
  const candidates = [env.FORGE_MACOS_LIKE_SRC, join(repo, '..', 'shared', 'tools', 'macos-like'), '/work/shared/tools/macos-like'];
  return candidates.find((c) => c && existsSync(join(c, 'bin')) && existsSync(join(c, 'bash-3.2.48', 'bin', 'bash')));
}

/** Where an entry of the stand-in points: its link target, or the target a lost link left as text. */
function targetOf(path) {
  const info = lstatSync(path);
  if (info.isSymbolicLink()) return readlinkSync(path);
  if (info.isFile() && info.size > 0 && info.size < 256) {
    const text = readFileSync(path, 'latin1').trim();
    if (/^[^\n\0]+$/.test(text) && !text.startsWith('#!') && !text.startsWith('\x7fELF')) return text;
  }
  return undefined;
}

/** The program an entry finally names, following links and link texts (at most 8 steps). */
function programOf(path) {
  let current = path;
  for (let step = 0; step < 8; step++) {
    const target = targetOf(current);
    if (target === undefined) return current;
    current = isAbsolute(target) ? target : resolve(dirname(current), target);
  }
  throw new Error(`${path}: more than 8 links deep`);
}

export function ensureMacosLike(env = process.env) {
  const source = findSource(env);
  if (!source) {
    throw new Error('the stock-Mac stand-in was not found: set FORGE_MACOS_LIKE_SRC to its folder (the one holding bin/ and bash-3.2.48/)');
  }
  const out = env.FORGE_MACOS_LIKE || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'forge-reflect', 'macos-like');
  const bin = join(out, 'bin');
  const stamp = join(out, 'source');
  const sourceReal = resolve(source);
  if (existsSync(join(bin, 'bash')) && existsSync(stamp) && readFileSync(stamp, 'utf8') === sourceReal) return bin;
  mkdirSync(out, { recursive: true, mode: 0o700 });
  const fresh = join(out, `.bin-${process.pid}`);
  rmSync(fresh, { recursive: true, force: true });
  mkdirSync(fresh, { mode: 0o700 });
  for (const name of readdirSync(join(source, 'bin'))) {
    const program = programOf(join(source, 'bin', name));
    if (!existsSync(program) || !(statSync(program).mode & 0o111)) throw new Error(`${join(source, 'bin', name)} names ${program}, which is no program`);
    symlinkSync(program, join(fresh, name));
  }
  rmSync(bin, { recursive: true, force: true });
  renameSync(fresh, bin);
  writeFileSync(stamp, sourceReal);
  return bin;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(`${ensureMacosLike()}\n`);
  } catch (error) {
    process.stderr.write(`macos-like: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
