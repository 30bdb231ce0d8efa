/**
 * A stock Mac for the real client: the stand-in's bin/ (GNU bash 3.2.48 as `bash` and `sh`, the
 * FreeBSD userland, the host's git, node and perl; no timeout, flock, setsid or pkill) made by
 * scripts/macos-like.mjs, first and alone on the client's PATH, so the registration's `bash` and
 * every tool the hooks call are the Mac's, and a tool a Mac lacks is missing for them too. With it:
 * no /proc (FORGE_PROC_ROOT at a folder that does not exist) and Darwin's OSTYPE and uname.
 *
 * The PATH folder is a copy of the stand-in's bin/ (each entry a link to the same program) in which
 * `bash` is a spy: a script run by the stand-in's bash 3.2 that logs its version and arguments, then
 * execs that same bash (same pid, same stdin). The log shows which hooks ran, and that bash 3.2 ran
 * them: the suite cannot pass by using the host's bash 5 unseen. If the stand-in cannot be made the
 * suite fails; it is never skipped.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { KIT_ROOT } from './kit.js';

/** The stand-in's bin/ as scripts/macos-like.mjs makes it (once, in its cache): throws if it cannot. */
export function macosLikeBin(): string {
  let bin: string;
  try {
    bin = execFileSync(process.execPath, [join(KIT_ROOT, 'scripts', 'macos-like.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    throw new Error(`the stock-Mac stand-in could not be made (node scripts/macos-like.mjs): ${stderr || (error as Error).message}`);
  }
  if (!existsSync(join(bin, 'bash'))) throw new Error(`node scripts/macos-like.mjs printed ${bin}, which holds no bash`);
  return bin;
}

/** GNU-only commands a stock Mac has none of: none may be found on the Mac client's PATH. */
export const NOT_ON_A_MAC = ['timeout', 'flock', 'setsid', 'pkill', 'nproc', 'stdbuf', 'tac', 'sha256sum', 'md5sum'];

export interface SpiedRun {
  /** The bash version the spy ran under (the stand-in's: 3.2.48(…)-release). */
  version: string;
  /** Its arguments: for a hook, the script's path and the hook's own arguments. */
  args: string;
}

export interface MacClient {
  /** The environment entries that make the client's world a Mac's (merged over the client's own). */
  env: NodeJS.ProcessEnv;
  /** The first (and only) PATH folder: the stand-in's bin/ with `bash` the spy. */
  bin: string;
  /** The stand-in's real bash 3.2 (what the spy execs). */
  realBash: string;
  /** Every bash the client (its hooks, its Bash tool) started through PATH, in order. */
  runs(): SpiedRun[];
  /** Where `command -v NAME` finds NAME with the client's PATH, as the stand-in's `sh` sees it ('' when nowhere). */
  commandPath(name: string): string;
  cleanup(): void;
}

/** One Mac client's world: a fresh PATH folder and spy log, in a temp folder of their own. */
export function macClient(): MacClient {
  const standIn = macosLikeBin();
  const realBash = realpathSync(join(standIn, 'bash'));
  const home = mkdtempSync(join(tmpdir(), 'forge-e2e-mac-'));
  const bin = join(home, 'bin');
  mkdirSync(bin);
  for (const name of readdirSync(standIn)) {
    if (name === 'bash') continue;
    const target = readlinkSync(join(standIn, name));
    symlinkSync(isAbsolute(target) ? target : resolve(standIn, target), join(bin, name));
  }
  const log = join(home, 'bash-runs.log');
  writeFileSync(log, '');
  // Single quotes around the paths: neither holds one (mkdtemp's name and the stand-in's folders).
  for (const path of [log, realBash]) if (path.includes("'") || path.includes('\n')) throw new Error(`unusable path for the bash spy: ${path}`);
  writeFileSync(
    join(bin, 'bash'),
    `#!${realBash}\n` +
      "# The e2e suite's bash spy: log the version and arguments, then become the stand-in's bash 3.2.\n" +
      `printf '%s\\t%s\\n' "$BASH_VERSION" "$*" >>'${log}' 2>/dev/null\n` +
      `exec '${realBash}' "$@"\n`,
  );
  chmodSync(join(bin, 'bash'), 0o755);
  const env: NodeJS.ProcessEnv = {
    PATH: bin,
    FORGE_PROC_ROOT: join(home, 'no-proc-on-a-mac'),
    OSTYPE: 'darwin23',
    UNAME_s: 'Darwin',
    UNAME_r: '23.6.0',
    UNAME_m: 'arm64',
  };
  return {
    env,
    bin,
    realBash,
    runs: () =>
      readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => line.length > 0)
        .map((line) => {
          const tab = line.indexOf('\t');
          return { version: line.slice(0, tab), args: line.slice(tab + 1) };
        }),
    commandPath: (name) => {
      try {
        return execFileSync(join(bin, 'sh'), ['-c', 'command -v "$1" || :', 'sh', name], { encoding: 'utf8', env: { PATH: bin } }).trim();
      } catch {
        return '';
      }
    },
    cleanup: () => rmSync(home, { recursive: true, force: true }),
  };
}
