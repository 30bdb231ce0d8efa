/**
 * Reading a file the kit finds by name (in the state dir, in a repo, the hook's temp files), as
 * opposed to one a user names on the command line: only a regular file is read. It is opened
 * non-blocking, so a FIFO or a device planted under such a name is refused at once instead of
 * holding the command at its open (a FIFO's open waits for a writer, for ever); for a regular file
 * the flag changes nothing. Only node:fs: the Stop hook's helper bundles it too.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/**
 * Flags to open for reading a file found by name where a symbolic link is refused too (ELOOP): the
 * spool's files, a segment of the spool log, a Codex rollout.
 */
export const READ_NO_LINK_NO_WAIT = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * What `read` gives for the file at `path` opened with READ_NO_LINK_NO_WAIT (closed after), or
 * undefined when the open or `read` fails: for reads where a file that cannot be read is simply
 * not taken (the drain's quick read of a spool file, a list of drained files).
 */
export function readFoundQuietly<T>(path: string, read: (fd: number) => T): T | undefined {
  let fd: number;
  try {
    fd = openSync(path, READ_NO_LINK_NO_WAIT);
  } catch {
    return undefined;
  }
  try {
    return read(fd);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The error code of a name that is there but is no regular file (a FIFO, a device, a folder). */
export const NOT_REGULAR = 'ENOTREG';

/** The error for a name that is there but is no regular file. */
export function notRegularFile(path: string): Error {
  return Object.assign(new Error(`${path} is not a regular file`), { code: NOT_REGULAR, path });
}

/** What a read error says, for a message: its code, or "not a regular file". */
export function readErrorText(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === NOT_REGULAR) return 'not a regular file';
  return code ?? String(error);
}

/** The file's bytes in `buffer[0, length)` (no subarray: its first call costs the Stop hook's helper). */
function readWhole(path: string, lastBytes: number): { buffer: Buffer; length: number } {
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw notRegularFile(path);
    if (lastBytes < stats.size) {
      const buffer = Buffer.allocUnsafe(lastBytes);
      let length = 0;
      while (length < lastBytes) {
        const n = readSync(fd, buffer, length, lastBytes - length, stats.size - lastBytes + length);
        if (n === 0) break;
        length += n;
      }
      return { buffer, length };
    }
    // To the end, whatever fstat said: a file that grows meanwhile is read whole.
    let buffer = Buffer.allocUnsafe(stats.size + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        const bigger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(bigger, 0, 0, length);
        buffer = bigger;
      }
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    return { buffer, length };
  } finally {
    closeSync(fd);
  }
}

/**
 * The bytes of the regular file at `path`: to its end, or its last `lastBytes` bytes (as fstat
 * sizes it). Throws as readFileSync does (ENOENT, EACCES ...), and with code ENOTREG for anything
 * that is not a regular file.
 */
export function readRegularFile(path: string, lastBytes = Infinity): Buffer {
  const { buffer, length } = readWhole(path, lastBytes);
  return buffer.subarray(0, length);
}

/** readRegularFile as UTF-8 text. */
export function readRegularText(path: string, lastBytes = Infinity): string {
  const { buffer, length } = readWhole(path, lastBytes);
  return buffer.toString('utf8', 0, length);
}
