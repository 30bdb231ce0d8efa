// A drain of many files renames them into a trash folder that a detached `rm` removes
// (src/spool-trash.ts); a drain of few unlinks each. Both must leave the log exactly the files'
// rows and the spool without a single drained file.
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DRAIN_LOCK_NAME } from '../src/drain-lock.js';
import { drainSpool } from '../src/drain.js';
import { openEventLog } from '../src/event-log.js';
import { DEFAULT_TRASH_FROM, removeInBackground, STALE_TRASH_MS, TRASH_PREFIX } from '../src/spool-trash.js';
import { cleanupTempDirs, spoolEventFiles, tempDir, writeSpoolFile } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const quiet = { warn: () => {} };

function spoolMany(stateDir: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) =>
    writeSpoolFile(stateDir, { payload: JSON.stringify({ session_id: 's', hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_use_id: `t${i}` }), event: 'PostToolUse' }),
  );
}

function storedToolUseIds(stateDir: string): string[] {
  const log = openEventLog(stateDir);
  try {
    return (log.db.prepare('SELECT tool_use_id FROM events ORDER BY tool_use_id').pluck().all() as string[]);
  } finally {
    log.close();
  }
}

describe('a drain of many files', () => {
  it('moves exactly the committed files into one trash folder and hands it to the remover', () => {
    const stateDir = tempDir();
    const names = spoolMany(stateDir, 12);
    const handed: string[][] = [];
    const counts = drainSpool(stateDir, { ...quiet, trashFrom: 10, batchSize: 5, removeTrash: (dirs) => handed.push([...dirs]) });
    expect(counts).toMatchObject({ drained: 12, rejected: 0, alreadyPresent: 0 });
    expect(spoolEventFiles(stateDir)).toEqual([]);
    expect(handed).toHaveLength(1);
    expect(handed[0]).toHaveLength(1);
    const trash = handed[0]?.[0] ?? '';
    expect(trash.startsWith(join(stateDir, 'spool', TRASH_PREFIX))).toBe(true);
    expect(readdirSync(trash).sort()).toEqual([...names].sort());
    expect(readdirSync(join(stateDir, 'spool')).sort()).toEqual([DRAIN_LOCK_NAME, trash.split('/').pop()].sort());
    expect(storedToolUseIds(stateDir)).toEqual(Array.from({ length: 12 }, (_, i) => `t${i}`).sort());
    // What is in the trash is never read again: a later drain (with one new file, so it runs) sees
    // only that file, not the twelve already drained.
    writeSpoolFile(stateDir, { payload: JSON.stringify({ session_id: 's', hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_use_id: 'late' }), event: 'PostToolUse' });
    expect(drainSpool(stateDir, { ...quiet, trashFrom: 10, removeTrash: () => handed.push(['again']) })).toMatchObject({ drained: 1, alreadyPresent: 0, rejected: 0 });
    expect(handed).toHaveLength(1);
  });

  it('unlinks each file, with no trash folder and no remover, below the threshold', () => {
    const stateDir = tempDir();
    spoolMany(stateDir, 9);
    let called = false;
    expect(drainSpool(stateDir, { ...quiet, trashFrom: 10, removeTrash: () => (called = true) })).toMatchObject({ drained: 9 });
    expect(called).toBe(false);
    expect(readdirSync(join(stateDir, 'spool'))).toEqual([DRAIN_LOCK_NAME]);
  });

  it('uses the trash by default from DEFAULT_TRASH_FROM files on', () => {
    const stateDir = tempDir();
    spoolMany(stateDir, DEFAULT_TRASH_FROM);
    const handed: string[] = [];
    expect(drainSpool(stateDir, { ...quiet, removeTrash: (dirs) => handed.push(...dirs) })).toMatchObject({ drained: DEFAULT_TRASH_FROM });
    expect(handed).toHaveLength(1);
    expect(readdirSync(handed[0] ?? '')).toHaveLength(DEFAULT_TRASH_FROM);
  });

  it('hands a trash folder left by a killed rm to the remover once it is stale, and leaves a fresh one', () => {
    const stateDir = tempDir();
    const spool = join(stateDir, 'spool');
    spoolMany(stateDir, 1);
    for (const name of [`${TRASH_PREFIX}1-1-old`, `${TRASH_PREFIX}1-2-new`]) {
      mkdirSync(join(spool, name));
      writeFileSync(join(spool, name, '1763806500000001-1-abcd.event'), 'drained earlier');
    }
    const old = new Date(Date.now() - STALE_TRASH_MS - 60_000);
    utimesSync(join(spool, `${TRASH_PREFIX}1-1-old`), old, old);
    const handed: string[] = [];
    expect(drainSpool(stateDir, { ...quiet, removeTrash: (dirs) => handed.push(...dirs) })).toMatchObject({ drained: 1, alreadyPresent: 0 });
    expect(handed).toEqual([join(spool, `${TRASH_PREFIX}1-1-old`)]);
  });
});

describe('the background remover', () => {
  it('removes the folders with a detached rm that this process can wait for', async () => {
    const root = tempDir();
    const dirs = [join(root, 'a'), join(root, 'b')];
    for (const dir of dirs) {
      mkdirSync(dir);
      for (let i = 0; i < 50; i += 1) writeFileSync(join(dir, `${i}.event`), 'x');
    }
    const child = removeInBackground(dirs);
    expect(child).toBeDefined();
    const code = await new Promise<number | null>((resolve) => child?.on('exit', (c) => resolve(c)));
    expect(code).toBe(0);
    expect(dirs.map((d) => existsSync(d))).toEqual([false, false]);
    expect(existsSync(root)).toBe(true);
  });

  it('starts nothing for no folders', () => {
    expect(removeInBackground([])).toBeUndefined();
  });
});
