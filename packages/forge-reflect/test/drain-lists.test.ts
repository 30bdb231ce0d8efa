// A drain of many files lists the committed ones for a detached remover (src/log/drained-lists.ts); a
// drain of few unlinks each. Both must leave the log exactly the files' rows, and no later drain
// may read a listed file again.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkSpool } from '../src/doctor/checks.js';
import { DRAIN_LOCK_NAME } from '../src/log/drain-lock.js';
import { drainSpool } from '../src/log/drain.js';
import {
  DEFAULT_LIST_FROM,
  DRAINED_DIR_NAME,
  LEGACY_TRASH_PREFIX,
  readDrainedLists,
  removeListedHere,
  removeListedInBackground,
  STALE_LIST_MS,
} from '../src/log/drained-lists.js';
import { openEventLog } from '../src/log/event-log.js';
import { CLI, cleanupTempDirs, spoolEventFiles, tempDir, writeSpoolFile } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const quiet = { warn: () => {} };

function spoolOne(stateDir: string, toolUseId: string): string {
  return writeSpoolFile(stateDir, {
    payload: JSON.stringify({ session_id: 's', hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_use_id: toolUseId }),
    event: 'PostToolUse',
  });
}

function spoolMany(stateDir: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => spoolOne(stateDir, `t${i}`));
}

function storedToolUseIds(stateDir: string): string[] {
  const log = openEventLog(stateDir);
  try {
    return log.db.prepare('SELECT tool_use_id FROM events ORDER BY tool_use_id').pluck().all() as string[];
  } finally {
    log.close();
  }
}

const listedIn = (stateDir: string): string[] => [...readDrainedLists(join(stateDir, 'spool'), [], Date.now()).names].sort();

describe('a drain of many files', () => {
  it('lists exactly the committed files, hands the list to the remover, and never reads them again', () => {
    const stateDir = tempDir();
    const spool = join(stateDir, 'spool');
    const names = spoolMany(stateDir, 12);
    const handed: string[][] = [];
    const counts = drainSpool(stateDir, { ...quiet, listFrom: 10, batchSize: 5, removeListed: (paths) => handed.push([...paths]) });
    expect(counts).toMatchObject({ drained: 12, rejected: 0, alreadyPresent: 0 });
    expect(storedToolUseIds(stateDir)).toEqual(Array.from({ length: 12 }, (_, i) => `t${i}`).sort());
    // The files are still there (the remover here does nothing), all of them listed, in one list.
    expect(spoolEventFiles(stateDir).sort()).toEqual([...names].sort());
    expect(listedIn(stateDir)).toEqual([...names].sort());
    expect(handed).toHaveLength(1);
    const list = handed[0]?.[0] ?? '';
    expect(list.startsWith(join(spool, DRAINED_DIR_NAME, ''))).toBe(true);
    expect(readFileSync(list, 'utf8').split('\n').filter(Boolean).sort()).toEqual([...names].sort());
    expect(statSync(list).mode & 0o777).toBe(0o600);
    expect(statSync(join(spool, DRAINED_DIR_NAME)).mode & 0o777).toBe(0o700);
    // A later drain (one new file, so it runs) reads only that file: none of the twelve is read,
    // counted or listed again, and the young list is not handed to a remover a second time.
    spoolOne(stateDir, 'late');
    expect(drainSpool(stateDir, { ...quiet, listFrom: 10, removeListed: (paths) => handed.push([...paths]) })).toMatchObject({
      drained: 1,
      alreadyPresent: 0,
      rejected: 0,
    });
    expect(handed).toHaveLength(1);
    expect(spoolEventFiles(stateDir).sort()).toEqual([...names].sort());
    // With nothing new, a drain finds nothing to do.
    expect(drainSpool(stateDir, { ...quiet, listFrom: 10, removeListed: (paths) => handed.push([...paths]) })).toMatchObject({
      drained: 0,
      alreadyPresent: 0,
      rejected: 0,
    });
    // The remover then removes the listed files and the list: nothing else.
    removeListedHere(spool, handed[0] ?? []);
    expect(spoolEventFiles(stateDir)).toEqual([]);
    expect(readdirSync(spool).sort()).toEqual([DRAINED_DIR_NAME, DRAIN_LOCK_NAME].sort());
    expect(readdirSync(join(spool, DRAINED_DIR_NAME))).toEqual([]);
  });

  it('unlinks each file, with no list and no remover, below the threshold', () => {
    const stateDir = tempDir();
    spoolMany(stateDir, 9);
    let called = false;
    expect(drainSpool(stateDir, { ...quiet, listFrom: 10, removeListed: () => (called = true) })).toMatchObject({ drained: 9 });
    expect(called).toBe(false);
    expect(readdirSync(join(stateDir, 'spool'))).toEqual([DRAIN_LOCK_NAME]);
  });

  it('lists by default from DEFAULT_LIST_FROM files on', () => {
    const stateDir = tempDir();
    spoolMany(stateDir, DEFAULT_LIST_FROM);
    const handed: string[] = [];
    expect(drainSpool(stateDir, { ...quiet, removeListed: (paths) => handed.push(...paths) })).toMatchObject({ drained: DEFAULT_LIST_FROM });
    expect(handed).toHaveLength(1);
    expect(listedIn(stateDir)).toHaveLength(DEFAULT_LIST_FROM);
  });

  it('unlinks each file when it cannot start a list (.drained is no folder)', () => {
    const stateDir = tempDir();
    spoolMany(stateDir, 12);
    writeFileSync(join(stateDir, 'spool', DRAINED_DIR_NAME), 'in the way');
    const handed: string[] = [];
    expect(drainSpool(stateDir, { ...quiet, listFrom: 10, removeListed: (paths) => handed.push(...paths) })).toMatchObject({ drained: 12, rejected: 0 });
    expect(handed).toEqual([]);
    expect(spoolEventFiles(stateDir)).toEqual([]);
  });

  it('hands a list and a legacy trash folder left by a killed remover to a new one once stale, and leaves fresh ones', () => {
    const stateDir = tempDir();
    const spool = join(stateDir, 'spool');
    const [oldFile, freshFile] = [spoolOne(stateDir, 'listed-old'), spoolOne(stateDir, 'listed-fresh')];
    mkdirSync(join(spool, DRAINED_DIR_NAME), { mode: 0o700 });
    const oldList = join(spool, DRAINED_DIR_NAME, '1-1-aaaa.list');
    const freshList = join(spool, DRAINED_DIR_NAME, '1-2-bbbb.list');
    writeFileSync(oldList, `${oldFile}\n`);
    writeFileSync(freshList, `${freshFile}\n`);
    for (const name of [`${LEGACY_TRASH_PREFIX}1-1-old`, `${LEGACY_TRASH_PREFIX}1-2-new`]) {
      mkdirSync(join(spool, name));
      writeFileSync(join(spool, name, '1763806500000001-1-abcd.event'), 'drained earlier');
    }
    const old = new Date(Date.now() - STALE_LIST_MS - 60_000);
    utimesSync(oldList, old, old);
    utimesSync(join(spool, `${LEGACY_TRASH_PREFIX}1-1-old`), old, old);
    spoolOne(stateDir, 'new');
    const handed: string[] = [];
    expect(drainSpool(stateDir, { ...quiet, removeListed: (paths) => handed.push(...paths) })).toMatchObject({ drained: 1, alreadyPresent: 0 });
    expect(storedToolUseIds(stateDir)).toEqual(['new']); // the listed files were not read
    expect(handed).toEqual([oldList, join(spool, `${LEGACY_TRASH_PREFIX}1-1-old`)]);
  });
});

describe('the lists', () => {
  it('name only spool file names, and a list that is a FIFO or a link is not read', () => {
    const stateDir = tempDir();
    const spool = join(stateDir, 'spool');
    const dir = join(spool, DRAINED_DIR_NAME);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'a.list'), '1763806500000001-1-abcd.event\n../outside.event\n.hidden.event\nevents.log\n17638065000\n');
    writeFileSync(join(stateDir, 'elsewhere'), '1763806500000002-1-abcd.event\n');
    spawnSync('ln', ['-s', join(stateDir, 'elsewhere'), join(dir, 'b.list')]);
    expect(spawnSync('mkfifo', [join(dir, 'c.list')]).status).toBe(0);
    expect(lstatSync(join(dir, 'b.list')).isSymbolicLink()).toBe(true);
    expect([...readDrainedLists(spool, [], Date.now()).names]).toEqual(['1763806500000001-1-abcd.event']);
  });
});

describe.each([
  ['in the background (a detached sh)', 'background'],
  ['in this process (no shell)', 'here'],
])('the remover, %s', (_how, where) => {
  it('removes exactly the listed spool files, then the list, and a legacy trash folder whole', async () => {
    const root = tempDir();
    const spool = join(root, 'spool');
    mkdirSync(join(spool, DRAINED_DIR_NAME), { recursive: true });
    const listed = Array.from({ length: 300 }, (_, i) => `17638065000${String(i).padStart(5, '0')}-42-abcd.event`);
    const kept = '1763806599999999-42-abcd.event';
    for (const name of [...listed, kept]) writeFileSync(join(spool, name), 'x');
    const outside = '1763806588888888-42-abcd.event';
    writeFileSync(join(root, outside), 'not in the spool');
    const list = join(spool, DRAINED_DIR_NAME, '1-1-aaaa.list');
    // A line cut short by a kill, a path out of the spool, a name listed twice: none removes anything it should not.
    writeFileSync(list, `${listed.join('\n')}\n../${outside}\n${listed[0]}\n1763806599999999-42-ab`);
    const legacy = join(spool, `${LEGACY_TRASH_PREFIX}1-1-old`);
    mkdirSync(legacy);
    writeFileSync(join(legacy, `${listed[0]}`), 'x');
    if (where === 'background') {
      const child = removeListedInBackground(spool, [list, legacy]);
      expect(child).toBeDefined();
      const code = await new Promise<number | null>((resolve) => child?.on('exit', (c) => resolve(c)));
      expect(code).toBe(0);
    } else {
      removeListedHere(spool, [list, legacy]);
    }
    expect(readdirSync(spool).sort()).toEqual([DRAINED_DIR_NAME, kept].sort());
    expect(readdirSync(join(spool, DRAINED_DIR_NAME))).toEqual([]);
    expect(existsSync(join(root, outside))).toBe(true);
  });

  const remove = async (spool: string, paths: string[]): Promise<void> => {
    if (where === 'here') return removeListedHere(spool, paths);
    const child = removeListedInBackground(spool, paths);
    expect(child).toBeDefined();
    expect(await new Promise<number | null>((resolve) => child?.on('exit', (c) => resolve(c)))).toBe(0);
  };

  it('removes nothing through a .drained that is a link, and keeps the list it points at', async () => {
    const root = tempDir();
    const spool = join(root, 'spool');
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(spool);
    mkdirSync(elsewhere);
    const name = '1763806500000001-42-abcd.event';
    writeFileSync(join(spool, name), 'x');
    writeFileSync(join(elsewhere, 'a.list'), `${name}\n`);
    expect(spawnSync('ln', ['-s', elsewhere, join(spool, DRAINED_DIR_NAME)]).status).toBe(0);
    expect(readDrainedLists(spool, [], Date.now()).names.size).toBe(0); // not read through the link either
    await remove(spool, [join(spool, DRAINED_DIR_NAME, 'a.list')]);
    expect(existsSync(join(spool, name))).toBe(true);
    expect(existsSync(join(elsewhere, 'a.list'))).toBe(true);
  });

  it('takes the names out of a list with bytes that are no text (a NUL-filled tail) and removes nothing else', async () => {
    const root = tempDir();
    const spool = join(root, 'spool');
    mkdirSync(join(spool, DRAINED_DIR_NAME), { recursive: true });
    const [a, b] = ['1763806500000001-42-abcd.event', '1763806500000002-42-abcd.event'];
    const kept = ['Binary', 'file', 'matches'];
    for (const name of [a, b, ...kept]) writeFileSync(join(spool, name), 'x');
    const list = join(spool, DRAINED_DIR_NAME, '1-1-aaaa.list');
    writeFileSync(list, Buffer.concat([Buffer.from(`${a}\n${b}\n`), Buffer.alloc(64), Buffer.from('\nBinary file matches\n')]));
    await remove(spool, [list]);
    expect(readdirSync(spool).sort()).toEqual([DRAINED_DIR_NAME, ...kept].sort());
    expect(existsSync(list)).toBe(false);
  });

  it('starts nothing for nothing to remove', () => {
    if (where === 'background') expect(removeListedInBackground(tempDir(), [])).toBeUndefined();
    else {
      const spool = tempDir();
      writeFileSync(join(spool, 'kept.event'), 'x');
      removeListedHere(spool, []);
      expect(readdirSync(spool)).toEqual(['kept.event']);
    }
  });
});

describe('what waits in the spool', () => {
  it('doctor counts only files no drain has listed', () => {
    const stateDir = tempDir();
    const names = spoolMany(stateDir, 3);
    mkdirSync(join(stateDir, 'spool', DRAINED_DIR_NAME));
    writeFileSync(join(stateDir, 'spool', DRAINED_DIR_NAME, '1-1-aaaa.list'), `${names[0]}\n${names[1]}\n`);
    const check = checkSpool({ repo: null, stateDir, sidecarDir: join(stateDir, 'reflections'), env: {}, now: Date.now() });
    expect(check.detail).toMatch(/^1 event file\(s\) waiting, 0 rejected$/);
  });

  it('a CLI ingest of many files returns with them listed, and the next ingest reads none of them', () => {
    const stateDir = tempDir();
    spoolMany(stateDir, DEFAULT_LIST_FROM + 10);
    const run = () => spawnSync(process.execPath, [CLI, 'ingest', '--json'], { env: { ...process.env, FORGE_DIR: stateDir }, encoding: 'utf8' });
    const first = run();
    expect(first.status, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ drained: DEFAULT_LIST_FROM + 10, already_present: 0 });
    // Whether or not the background remover has finished, nothing waits and nothing is read again.
    const second = run();
    expect(second.status, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ drained: 0, already_present: 0, rejected: 0 });
    expect(storedToolUseIds(stateDir)).toHaveLength(DEFAULT_LIST_FROM + 10);
  });
});
