import { readRegularText } from '../regular-file.js';

/**
 * The text of a regular file, or its last `max` bytes; null when it is missing, not a regular file
 * or unreadable (regular-file.ts: open, fstat and read, which the helper's start has already run
 * once, not readFileSync, whose first call is costly in a fresh process; non-blocking, so
 * a FIFO planted at the path cannot hold the helper at the open).
 */
export function readText(path: string | undefined, max = Infinity): string | null {
  if (!path) return null;
  try {
    return readRegularText(path, max);
  } catch {
    return null;
  }
}
