/**
 * Reading a file the kit finds by name (in the state dir, in a repo), as opposed to one a user names
 * on the command line: only a regular file is read. It is opened non-blocking, so a FIFO or a device
 * planted under such a name is refused at once instead of holding the command at its open (a FIFO's
 * open waits for a writer, for ever); for a regular file the flag changes nothing.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** The error code of a name that is there but is no regular file (a FIFO, a device, a folder). */
export const NOT_REGULAR = 'ENOTREG';

/** What a read error says, for a message: its code, or "not a regular file". */
export function readErrorText(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === NOT_REGULAR) return 'not a regular file';
  return code ?? String(error);
}

/**
 * The bytes of the regular file at `path`, to its end. Throws as readFileSync does (ENOENT, EACCES
 * ...), and with code ENOTREG for anything that is not a regular file.
 */
export function readRegularFile(path: string): Buffer {
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: NOT_REGULAR, path });
    // To the end, whatever fstat said: a file that grows meanwhile is read whole.
    let buffer = Buffer.allocUnsafe(stats.size + 1);
    let filled = 0;
    for (;;) {
      if (filled === buffer.length) {
        const bigger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(bigger, 0, 0, filled);
        buffer = bigger;
      }
      const n = readSync(fd, buffer, filled, buffer.length - filled, null);
      if (n === 0) break;
      filled += n;
    }
    return buffer.subarray(0, filled);
  } finally {
    closeSync(fd);
  }
}

/** readRegularFile as UTF-8 text. */
export function readRegularText(path: string): string {
  return readRegularFile(path).toString('utf8');
}
