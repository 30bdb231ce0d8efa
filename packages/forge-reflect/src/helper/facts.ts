/** The facts from the hook's stdin (protocol.ts), and the wait for that stdin's end. */
import { readSync } from 'node:fs';
import { END_RECORD, parseFacts, type Facts as HookFacts } from './protocol.js';

/** The facts from the hook (protocol.ts), and the user's REFLECTION_RISK_THRESHOLD from the environment. */
export type Facts = HookFacts & { REFLECTION_RISK_THRESHOLD?: string };

/**
 * What the start (code-cache.ts) already read of stdin to find the code cache's folder, passed
 * in by its module wrapper; the rest is read here.
 */
declare const FORGE_STDIN_READ: Buffer | undefined;

/** Whether stdin is still open after the facts (they ended with END_RECORD, not with its end). */
let stdinOpen = false;

function endsWithEndRecord(data: Buffer): boolean {
  // Byte by byte: Buffer.from, subarray and equals would each pay their costly first call.
  const start = data.length - END_RECORD.length;
  if (start < 0 || (start > 0 && data[start - 1] !== 0)) return false;
  for (let i = 0; i < END_RECORD.length; i++) if (data[start + i] !== END_RECORD.charCodeAt(i)) return false;
  return true;
}

/** The facts: stdin up to the hook's end record, or to its end (a hook that gave up, or a test). */
export function readFacts(): HookFacts {
  let data = (typeof FORGE_STDIN_READ === 'undefined' ? undefined : FORGE_STDIN_READ) ?? Buffer.alloc(0);
  try {
    while (!endsWithEndRecord(data)) {
      const chunk = Buffer.allocUnsafe(65536);
      const n = readSync(0, chunk, 0, chunk.length, null);
      if (n === 0) return parseFacts(data.toString('utf8'));
      data = data.length === 0 ? chunk.subarray(0, n) : Buffer.concat([data, chunk.subarray(0, n)]);
    }
  } catch {
    return parseFacts(data.toString('utf8'));
  }
  stdinOpen = true;
  return parseFacts(data.toString('utf8'));
}

/**
 * Reads stdin to its end (the hook's exit), when the facts ended with the end record; whatever comes
 * after that record is dropped.
 */
export function waitForEnd(): void {
  if (!stdinOpen) return;
  const sink = Buffer.allocUnsafe(4096);
  try {
    while (readSync(0, sink, 0, sink.length, null) > 0) {
      // dropped
    }
  } catch {
    // stdin cannot be read (a non-blocking one): nothing to wait for
  }
}
