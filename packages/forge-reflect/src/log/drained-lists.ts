/**
 * The spool files a drain of many has committed, and their removal after it returns.
 *
 * Removing a small file costs far more than logging it where the file system frees its blocks
 * slowly (ext4 mounted with `discard`, say). Earlier versions renamed each committed file into a
 * trash folder for a background `rm -rf`, but even the renames were a large share of a big drain's
 * CPU. So a drain of many files now does
 * no per-file work for them: after each commit it appends the batch's file names to a list of its
 * own, `spool/.drained/<pid>-<ms>-<random>.list`, and once it is done a detached process unlinks
 * the listed files, then the list. Until then every drain reads the lists first and skips the
 * files they name: a listed file is never read again.
 *
 * Nothing is lost or doubled. A name is listed only after its row is committed, and the remover
 * removes only listed files. A drain killed between a commit and that batch's append leaves
 * committed files unlisted: the next drain finds them already logged, and lists them. A line cut
 * short by a kill names no file (names are matched whole; the remover takes only lines that are
 * spool file names). A list whose remover did not finish (killed, a reboot) is handed to a new one
 * by a later drain once it is an hour old; so is a trash folder an earlier version left.
 */
import type { ChildProcess } from 'node:child_process';
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readFileSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { nodeChildProcess } from '../lazy-builtins.js';
import { readFoundQuietly } from '../regular-file.js';
import { ID_SOURCE, SPOOL_SUFFIX } from './spool-event.js';
import { ensurePrivateDir } from '../state-dir.js';

/** The folder of the lists, in the spool. */
export const DRAINED_DIR_NAME = '.drained';
export const LIST_SUFFIX = '.list';
/** A drain of at least this many files lists them instead of unlinking each. */
export const DEFAULT_LIST_FROM = 256;
/** A list (or a legacy trash folder) this old was left by a remover that did not finish. */
export const STALE_LIST_MS = 60 * 60 * 1000;
/** Trash folders of earlier versions (`spool/.drained-<pid>-<ms>-<random>/`), removed once stale. */
export const LEGACY_TRASH_PREFIX = '.drained-';

export function drainedDirOf(spool: string): string {
  return `${spool}/${DRAINED_DIR_NAME}`;
}

/** A line of a list that names a file the remover may remove: a whole spool file name, nothing else. */
const LISTED_NAME = new RegExp(`^${ID_SOURCE}\\${SPOOL_SUFFIX}$`);

/** Whether the spool's `.drained` is a real folder: a link planted there is neither read nor emptied. */
function drainedDirIsReal(spool: string): boolean {
  try {
    return lstatSync(drainedDirOf(spool)).isDirectory();
  } catch {
    return false;
  }
}

export interface DrainedLists {
  /** The spool file names the lists hold: committed, not to be read again. */
  names: Set<string>;
  /** Lists and legacy trash folders whose remover did not finish (older than STALE_LIST_MS). */
  stale: string[];
}

function quietly(action: () => void): void {
  try {
    action();
  } catch {
    // gone meanwhile, or not ours to remove: a later drain sees it again
  }
}

/** A list's text, or undefined when it is gone or no regular file (never followed, never waited on). */
function readList(path: string): string | undefined {
  return readFoundQuietly(path, (fd) => (fstatSync(fd).isFile() ? readFileSync(fd, 'utf8') : undefined));
}

/**
 * The lists in a spool (read while the drain lock is held: a list is complete for every drain that
 * let the lock go) and what of them, and of `spoolNames`' legacy trash folders, is stale.
 */
export function readDrainedLists(spool: string, spoolNames: readonly string[], now: number): DrainedLists {
  const found: DrainedLists = { names: new Set(), stale: [] };
  const dir = drainedDirOf(spool);
  let entries: string[] = [];
  try {
    if (drainedDirIsReal(spool)) entries = readdirSync(dir);
  } catch {
    // no lists
  }
  for (const entry of entries) {
    const path = `${dir}/${entry}`;
    if (!entry.endsWith(LIST_SUFFIX)) continue;
    const text = readList(path);
    if (text === undefined) continue;
    for (const name of text.split('\n')) if (LISTED_NAME.test(name)) found.names.add(name);
    if (olderThan(path, now, STALE_LIST_MS)) found.stale.push(path);
  }
  for (const name of spoolNames) {
    if (!name.startsWith(LEGACY_TRASH_PREFIX)) continue;
    const path = `${spool}/${name}`;
    if (olderThan(path, now, STALE_LIST_MS, true)) found.stale.push(path);
  }
  return found;
}

function olderThan(path: string, now: number, ms: number, folder = false): boolean {
  try {
    const stats = lstatSync(path);
    return (folder ? stats.isDirectory() : stats.isFile()) && now - stats.mtimeMs > ms;
  } catch {
    return false;
  }
}

/** A list being written by a drain: committed names are appended batch by batch. */
export interface DrainedList {
  /** Appends committed names; false when the append (this one or an earlier) failed: the caller removes them itself. */
  add(names: readonly string[]): boolean;
  /** Closes the list; returns its path when it names any file, else removes it and returns undefined. */
  close(): string | undefined;
}

/**
 * Starts a new, private list in the spool's `.drained/` (created 0700 when missing). Throws when it
 * cannot, or when `.drained` is no folder (a link planted there would take the lists elsewhere).
 */
export function startDrainedList(spool: string, now: number): DrainedList {
  const dir = ensurePrivateDir(drainedDirOf(spool));
  if (!drainedDirIsReal(spool)) throw new Error(`${dir} is not a folder`);
  let path = '';
  let fd = -1;
  for (let attempt = 0; fd < 0; attempt += 1) {
    path = `${dir}/${process.pid}-${now}-${Math.random().toString(16).slice(2, 10)}${LIST_SUFFIX}`;
    try {
      fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND | (constants.O_NOFOLLOW ?? 0), 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw error;
    }
  }
  let listed = 0;
  let open = true;
  let broken = false;
  return {
    add(names) {
      if (broken) return false;
      if (names.length === 0) return true;
      const text = Buffer.from(`${names.join('\n')}\n`);
      try {
        if (writeSync(fd, text) === text.length) {
          listed += names.length;
          return true;
        }
      } catch {
        // below
      }
      // Disk full, say: the names of this batch and of every later one are the caller's to remove.
      // A line cut short names nothing, and no later line is appended after it.
      broken = true;
      return false;
    },
    close() {
      if (open) {
        open = false;
        quietly(() => closeSync(fd));
      }
      if (listed > 0) return path;
      quietly(() => unlinkSync(path));
      return undefined;
    },
  };
}

/**
 * The remover, in the spool: for each list (by its name in `.drained`, and only while `.drained` is
 * a real folder), the lines that are whole spool file names (`grep -a -x`: bytes that are no text,
 * a line a kill cut short, a path, remove nothing), unlinked, then the list; a list grep cannot read
 * is left for a later remover. A legacy trash folder is removed whole.
 */
const REMOVER = `cd -- "$1" || exit 1
shift
for p do
  case $p in
    *${LIST_SUFFIX})
      [ -d ${DRAINED_DIR_NAME} ] && [ ! -L ${DRAINED_DIR_NAME} ] || continue
      l=${DRAINED_DIR_NAME}/\${p##*/}
      names=$(LC_ALL=C grep -a -xE -- '${ID_SOURCE}\\${SPOOL_SUFFIX}' "$l")
      [ $? -le 1 ] || continue
      [ -z "$names" ] || printf '%s\\n' "$names" | xargs rm -f --
      rm -f -- "$l" ;;
    *) rm -rf -- "$p" ;;
  esac
done`;

/** Does what the remover does, in this process: where no shell can be started. */
export function removeListedHere(spool: string, paths: readonly string[]): void {
  for (const path of paths) {
    if (!path.endsWith(LIST_SUFFIX)) {
      quietly(() => rmSync(path, { recursive: true, force: true }));
      continue;
    }
    if (!drainedDirIsReal(spool)) continue;
    const list = `${drainedDirOf(spool)}/${path.slice(path.lastIndexOf('/') + 1)}`;
    const text = readList(list);
    if (text === undefined) continue;
    for (const name of text.split('\n')) if (LISTED_NAME.test(name)) quietly(() => unlinkSync(`${spool}/${name}`));
    quietly(() => unlinkSync(list));
  }
}

/**
 * Removes what lists name (then the lists) and legacy trash folders with a detached `sh` that
 * outlives this process (and is not in its process group, so a Ctrl-C of the command does not stop
 * it). Where it cannot be started, removes them here. Returns the child, for a caller that waits.
 */
export function removeListedInBackground(spool: string, paths: readonly string[]): ChildProcess | undefined {
  if (paths.length === 0) return undefined;
  try {
    const child = nodeChildProcess().spawn('sh', ['-c', REMOVER, 'forge-reflect-remover', spool, ...paths], { detached: true, stdio: 'ignore' });
    child.on('error', () => removeListedHere(spool, paths));
    child.unref();
    return child;
  } catch {
    removeListedHere(spool, paths);
    return undefined;
  }
}
