/**
 * Overwrites the bytes of a spool-log segment that a drain has committed with zeros, in place, and
 * waits until the zeros are on the disk (fdatasync): from then on the segment holds none of those
 * raw payloads, though the file itself stays while a hook could still append to it
 * (drain-segments.ts). A segment's reader skips zeros (spool-log.ts).
 *
 * Only bytes below the drain's committed offset are written, with a positioned write through a
 * descriptor opened without O_APPEND. A hook appends with O_APPEND, and the kernel places each
 * append at the end of the file as it is then, past every byte written here; so what a hook appends
 * after the drain's read point is never touched.
 *
 * The zeros replace the payload in the file's own blocks where the file system overwrites in place
 * (ext4, xfs); a copy-on-write one (btrfs, ZFS, APFS) writes them elsewhere and frees the old
 * blocks, as an unlink does.
 */
import { closeSync, constants, fdatasyncSync, fstatSync, openSync, writeSync } from 'node:fs';

/** Zeros written at a time. */
const ZEROS_BYTES = 1024 * 1024;
let zeros: Buffer | undefined;

/**
 * Overwrites `[from, to)` of the regular file at `path` with zeros and syncs it. False when it could
 * not (gone, a link, no regular file, shorter than `to`: not the file the offsets are for, or a
 * write failed); nothing is recorded then, and the next drain tries again.
 */
export function scrubRange(path: string, from: number, to: number): boolean {
  if (to <= from) return true;
  let fd: number;
  try {
    // Non-blocking: a FIFO with a segment's name is refused at its open, not waited on.
    fd = openSync(path, constants.O_WRONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch {
    return false;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size < to) return false;
    zeros ??= Buffer.alloc(ZEROS_BYTES);
    for (let at = from; at < to; ) at += writeSync(fd, zeros, 0, Math.min(zeros.length, to - at), at);
    fdatasyncSync(fd);
    return true;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}
