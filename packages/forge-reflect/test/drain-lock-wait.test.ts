// A command that reads the log waits for a drain that is already running (the one a Stop hook
// starts), so what that drain is taking in is there when it reads; `ingest`'s own drain does not
// wait: it returns at once and leaves the work to the running one.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DRAIN_LOCK_NAME } from '../src/log/drain-lock.js';
import { drainSpool, openDrainedLog } from '../src/log/drain.js';
import { openDrainedLogForReading } from '../src/log/reading-log.js';
import { cleanupTempDirs, spoolEventFiles, tempDir, writeSpoolFile } from './helpers/spool.js';

const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');

// Another process holding the drain lock as a drain does, until it is told to let go (a line on
// its stdin) or for `holdMs`, whichever comes first.
const HOLDER = `
const Driver = require(process.argv[1]);
const db = new Driver(process.argv[2]);
db.pragma('journal_mode = MEMORY');
db.exec('BEGIN EXCLUSIVE');
process.stdout.write('locked\\n');
const release = () => { db.close(); process.exit(0); };
setTimeout(release, Number(process.argv[3]));
process.stdin.on('data', release);
`;

let holder: ChildProcess | undefined;
afterEach(() => {
  holder?.kill('SIGKILL');
  holder = undefined;
  cleanupTempDirs();
});

/** Starts the holder and resolves once it holds the lock. */
async function holdLock(stateDir: string, holdMs: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', HOLDER, sqlite, join(stateDir, 'spool', DRAIN_LOCK_NAME), String(holdMs)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  holder = child;
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('locked')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`the lock holder exited (${code}) before it held the lock`)));
  });
  return child;
}

function spoolThree(stateDir: string): void {
  for (const tool of ['Read', 'Edit', 'Bash']) {
    writeSpoolFile(stateDir, { event: 'PostToolUse', payload: JSON.stringify({ session_id: 's1', hook_event_name: 'PostToolUse', tool_name: tool }) });
  }
}

describe('a command and a drain that is already running', () => {
  it.each([
    ['a reading command (openDrainedLogForReading)', openDrainedLogForReading],
    ['a command that writes the log (openDrainedLog)', openDrainedLog],
  ])('%s waits for the running drain, then drains what is left and sees every event', async (_, open) => {
    const stateDir = tempDir();
    spoolThree(stateDir);
    // Let go after 700 ms: the command blocks until then, well inside its 5 s wait.
    await holdLock(stateDir, 700);
    const log = open(stateDir);
    try {
      expect(
        log
          .query({ limit: 10 })
          .map((e) => e.tool_name)
          .sort(),
      ).toEqual(['Bash', 'Edit', 'Read']);
    } finally {
      log.close();
    }
    expect(spoolEventFiles(stateDir)).toEqual([]);
  });

  it("ingest's drain does not wait: it says the lock is held and leaves the files", async () => {
    const stateDir = tempDir();
    spoolThree(stateDir);
    const child = await holdLock(stateDir, 60_000);
    const counts = drainSpool(stateDir);
    expect(counts.locked).toBe(true);
    expect(counts.drained).toBe(0);
    expect(spoolEventFiles(stateDir)).toHaveLength(3);
    child.stdin!.write('go\n');
    await new Promise((resolve) => child.on('exit', resolve));
    expect(drainSpool(stateDir).drained).toBe(3);
  });

  it('the wait is bounded: a drain that never lets go leaves the command reading the log as it is', async () => {
    const stateDir = tempDir();
    spoolThree(stateDir);
    await holdLock(stateDir, 60_000);
    const counts = drainSpool(stateDir, { lock: { waitMs: 300 } });
    expect(counts.locked).toBe(true);
    expect(spoolEventFiles(stateDir)).toHaveLength(3);
  });
});
