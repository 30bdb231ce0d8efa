/**
 * Faults: the drain killed with SIGKILL at random points, many times over, over a spool of
 * thousands of events: at the end every event is in the log exactly once, none rejected, none left.
 * The drain runs from the built package (dist/), as the CLI does.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { drainSpool } from '../src/drain.js';
import { openEventLog } from '../src/event-log.js';
import { cleanupTempDirs, DIST, spoolEventFiles, tempDir, writeSpoolFile } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const EVENTS = 3_000;
const KILLS = 25;

const DRAINER = `
const { drainSpool } = await import(process.argv[1]);
drainSpool(process.argv[2], { batchSize: 10, warn: () => {} });
`;

let seed = 0x1234abcd;
const rnd = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 0x1_0000_0000;
};

function killAfter(stateDir: string, ms: number): Promise<string | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', DRAINER, pathToFileURL(join(DIST, 'drain.js')).href, stateDir], { stdio: 'ignore' });
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('exit', (_code, signal) => {
      clearTimeout(timer);
      resolve(signal);
    });
  });
}

describe('the drain killed with SIGKILL at random points', () => {
  it(`loses and doubles nothing over ${EVENTS} events and ${KILLS} kills`, async () => {
    const state = tempDir();
    const ids: string[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const name = writeSpoolFile(state, { event: 'PostToolUse', payload: JSON.stringify({ session_id: 'k', hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_use_id: `t${i}`, tool_response: { stdout: 'o'.repeat(i % 500) } }) });
      ids.push(name.slice(0, -'.event'.length));
    }
    let killed = 0;
    for (let k = 0; k < KILLS && spoolEventFiles(state).length > 0; k++) {
      // node starts in ~50-80 ms here; kills land before, inside and between transactions
      if ((await killAfter(state, 30 + Math.floor(rnd() * 150))) === 'SIGKILL') killed++;
    }
    expect(killed).toBeGreaterThanOrEqual(5);
    expect(spoolEventFiles(state).length).toBeLessThan(EVENTS); // some batches committed between kills
    const last = drainSpool(state, { warn: () => {}, lock: { staleMs: 0 } });
    expect(last.rejected).toBe(0);
    expect(spoolEventFiles(state)).toEqual([]);
    const log = openEventLog(state);
    try {
      const rows = log.db.prepare('SELECT id FROM events ORDER BY id').all() as { id: string }[];
      expect(rows.map((r) => r.id)).toEqual([...ids].sort());
    } finally {
      log.close();
    }
    expect(readdirSync(join(state, 'spool')).filter((n) => n !== 'rejected' && !n.startsWith('.drain.lock'))).toEqual([]);
  }, 120_000);
});
