/**
 * What a session left running: every process that carries the session's mark in its environment
 * (the client, each hook, the Stop hook's helper, the detached drain inherit it), read from
 * /proc/<pid>/environ. A hook kit must leave nothing behind once the drain is done: a helper that
 * never exits costs a node process a turn, for ever.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

export const MARK_NAME = 'E2E_SESSION_MARK';

export function newMark(): string {
  return randomBytes(8).toString('hex');
}

export interface LeftProcess {
  pid: number;
  command: string;
}

/** Processes whose environment holds MARK_NAME=mark (none where /proc cannot say). */
export function marked(mark: string): LeftProcess[] {
  if (!existsSync('/proc/self/environ')) return [];
  const needle = `${MARK_NAME}=${mark}`;
  const out: LeftProcess[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${name}/environ`, 'latin1').split('\0');
      if (!environ.includes(needle)) continue;
      const command = readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0').filter(Boolean).join(' ');
      out.push({ pid: Number(name), command });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

/**
 * Waits (at most `ms`) until no marked process is left; returns those still running then, after
 * killing them (they are this suite's own), so one failure does not load the tests after it.
 */
export async function leftRunning(mark: string, ms = 20_000): Promise<LeftProcess[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = marked(mark);
    if (left.length === 0) return [];
    if (Date.now() > deadline) {
      for (const p of left) {
        try {
          process.kill(p.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      return left;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
