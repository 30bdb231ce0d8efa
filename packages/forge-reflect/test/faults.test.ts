/**
 * Faults: the drain killed with SIGKILL many times over a spool of thousands of events: at the end
 * every event is in the log exactly once, none rejected, none left.
 *
 * The kills are deterministic, not timed: the drain (the built package, dist/, as the CLI runs it)
 * SIGKILLs itself at a chosen point of a chosen batch: before the batch is written, inside its
 * transaction after k rows, right after its commit, or after k of its files are unlinked. Each point
 * has a state it must leave behind, checked after every kill: ids in the log and files in the spool
 * together hold every event, and the files whose ids are already in the log are exactly the ones
 * that point leaves (none, unless the commit happened and not all files were unlinked).
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { DRAIN_LOCK_NAME } from '../src/drain-lock.js';
import { drainSpool } from '../src/drain.js';
import { openEventLog } from '../src/event-log.js';
import { TRASH_PREFIX } from '../src/spool-trash.js';
import { cleanupTempDirs, DIST, spoolEventFiles, tempDir, writeSpoolFile } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const EVENTS = 3_000;
const BATCH = 10;
const KILLS = 24;
const POINTS = ['before-batch', 'in-transaction', 'after-commit', 'mid-unlink'] as const;
type Point = (typeof POINTS)[number];

// argv: drain.js url, event-log.js url, state dir, point, batch (0-based, in this drain), k, trashFrom, mover
// "mid-unlink" is the removal of the batch's files: unlinks, or renames into the trash folder (on
// this thread: mover 'inline'; with mover 'worker' a worker thread renames them, see below).
const DRAINER = `
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
const [drainUrl, logUrl, stateDir, point, nth, k, trashFrom, mover] = [process.argv[1], process.argv[2], process.argv[3], process.argv[4], Number(process.argv[5]), Number(process.argv[6]), Number(process.argv[7]), process.argv[8]];
const die = () => process.kill(process.pid, 'SIGKILL');
let unlinking = false;
let unlinked = 0;
const unlink = fs.unlinkSync;
fs.unlinkSync = (path, ...rest) => {
  if (unlinking && String(path).endsWith('.event') && ++unlinked > k) die();
  return unlink(path, ...rest);
};
const rename = fs.renameSync;
fs.renameSync = (from, to, ...rest) => {
  if (unlinking && String(to).includes('${TRASH_PREFIX}') && ++unlinked > k) die();
  return rename(from, to, ...rest);
};
syncBuiltinESMExports();
const { openEventLog } = await import(logUrl);
const { drainSpool } = await import(drainUrl);
const log = openEventLog(stateDir);
let rowsTried = 0;
log.db.function('fault', () => (++rowsTried === k ? die() : 0));
let call = 0;
const insertBatch = log.insertBatch;
const faulty = { ...log, insertBatch(rows) {
  const here = call++ === nth;
  if (here && point === 'before-batch') die();
  if (here && point === 'in-transaction') log.db.exec('CREATE TEMP TRIGGER fault BEFORE INSERT ON main.events BEGIN SELECT fault(); END');
  const result = insertBatch(rows);
  if (here && point === 'after-commit') die();
  if (here && point === 'mid-unlink') unlinking = true;
  return result;
} };
drainSpool(stateDir, { log: faulty, batchSize: ${BATCH}, warn: () => {}, trashFrom, removeTrash: () => {}, moverWorker: mover === 'worker' });
`;

function drainAndDie(stateDir: string, point: Point, batch: number, k: number, trashFrom: number, mover: Mover = 'inline'): Promise<NodeJS.Signals | null> {
  return new Promise((resolve, reject) => {
    const url = (file: string) => pathToFileURL(join(DIST, file)).href;
    const child = spawn(process.execPath, ['--input-type=module', '-e', DRAINER, url('drain.js'), url('event-log.js'), stateDir, point, String(batch), String(k), String(trashFrom), mover], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (_code, signal) => resolve(signal));
  });
}

function loggedIds(stateDir: string): string[] {
  const log = openEventLog(stateDir);
  try {
    return (log.db.prepare('SELECT id FROM events ORDER BY id').all() as { id: string }[]).map((r) => r.id);
  } finally {
    log.close();
  }
}

/** How many of a killed batch's files must still be in the spool with their ids in the log. */
function leftBoth(point: Point, k: number): number {
  if (point === 'after-commit') return BATCH;
  if (point === 'mid-unlink') return BATCH - k;
  return 0; // killed before the commit: the transaction rolled back as a whole
}

type Mover = 'inline' | 'worker';

/** A state dir with EVENTS tool events spooled as files; `all`: their ids, sorted. */
function spooledState(): { state: string; all: string[] } {
  const state = tempDir();
  const ids: string[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const name = writeSpoolFile(state, { event: 'PostToolUse', payload: JSON.stringify({ session_id: 'k', hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_use_id: `t${i}`, tool_response: { stdout: 'o'.repeat(i % 500) } }) });
    ids.push(name.slice(0, -'.event'.length));
  }
  return { state, all: ids.sort() };
}

describe.each([
  ['unlinks', 1e9],
  ['moves them into a trash folder', 1],
])('the drain SIGKILLed at each point of a batch, as it removes files it %s', (_how, trashFrom) => {
  it(`loses and doubles nothing over ${EVENTS} events and ${KILLS} kills`, async () => {
    const { state, all } = spooledState();
    for (let kill = 0; kill < KILLS; kill++) {
      const point = POINTS[kill % POINTS.length] as Point;
      // batch >= 1: batch 0 of a drain may hold files an earlier kill left committed, the ones after are new
      const batch = 1 + (kill % 3);
      const k = 1 + ((kill * 7) % (BATCH - 1));
      const before = loggedIds(state).length;
      expect(await drainAndDie(state, point, batch, k, trashFrom), `${point} of batch ${batch}`).toBe('SIGKILL');
      const logged = loggedIds(state);
      const spooled = spoolEventFiles(state).map((n) => n.slice(0, -'.event'.length));
      const inLog = new Set(logged);
      expect([...new Set([...logged, ...spooled])].sort()).toEqual(all); // nothing lost
      expect(spooled.filter((id) => inLog.has(id)), `${point} of batch ${batch}, k=${k}`).toHaveLength(leftBoth(point, k));
      const committedBatches = point === 'after-commit' || point === 'mid-unlink' ? batch + 1 : batch;
      expect(logged.length - before).toBeLessThanOrEqual(committedBatches * BATCH);
      expect(logged.length).toBeGreaterThan(before); // batches before the fault committed
    }
    const last = drainSpool(state, { warn: () => {}, trashFrom, removeTrash: () => {}, moverWorker: false });
    expect(last).toMatchObject({ rejected: 0, locked: false, busy: false });
    expect(last.alreadyPresent).toBe(leftBoth(POINTS[(KILLS - 1) % POINTS.length] as Point, 1 + (((KILLS - 1) * 7) % (BATCH - 1))));
    expect(spoolEventFiles(state)).toEqual([]);
    expect(loggedIds(state)).toEqual(all); // exactly once: ids are unique and all there
    const spool = join(state, 'spool');
    const trash = readdirSync(spool).filter((n) => n.startsWith(TRASH_PREFIX));
    expect(trash.length > 0).toBe(trashFrom === 1);
    expect(readdirSync(spool).filter((n) => n !== 'rejected' && n !== DRAIN_LOCK_NAME && !trash.includes(n))).toEqual([]);
    // A file reaches the trash only after its row is committed: each trashed id is in the log.
    const logged = new Set(loggedIds(state));
    const trashed = trash.flatMap((dir) => readdirSync(join(spool, dir)).map((n) => n.slice(0, -'.event'.length)));
    expect(trashed.filter((id) => !logged.has(id))).toEqual([]);
    // With trashFrom 1 every file ends in exactly one trash folder, whichever drain moved it.
    expect(trashed.length).toBe(trashFrom === 1 ? EVENTS : 0);
    expect(new Set(trashed).size).toBe(trashed.length);
  }, 120_000);
});

// A drain of many files moves them into the trash on a worker thread (src/spool-mover.ts) while it
// logs the next batch. Killed before, inside or after a batch's commit, the worker may be moving the
// batches before it: a committed file can then still be in the spool (the next drain finds it
// logged), but nothing is lost, nothing doubled, and no file reaches the trash before its row is
// committed. (DIST's drain finds the worker file beside it, as the CLI's does.)
describe('the drain SIGKILLed at each point of a batch while a worker thread moves its files into the trash', () => {
  it(`loses and doubles nothing over ${EVENTS} events and ${KILLS} kills`, async () => {
    const { state, all } = spooledState();
    const spool = join(state, 'spool');
    const trashedIds = () =>
      readdirSync(spool)
        .filter((n) => n.startsWith(TRASH_PREFIX))
        .flatMap((dir) => readdirSync(join(spool, dir)).map((n) => n.slice(0, -'.event'.length)));
    const points = POINTS.filter((p) => p !== 'mid-unlink'); // the renames are the worker's: no kill hook there
    for (let kill = 0; kill < KILLS; kill++) {
      const point = points[kill % points.length] as Point;
      const batch = 1 + (kill % 3);
      const k = 1 + ((kill * 7) % (BATCH - 1));
      const before = loggedIds(state).length;
      expect(await drainAndDie(state, point, batch, k, 1, 'worker'), `${point} of batch ${batch}`).toBe('SIGKILL');
      const logged = loggedIds(state);
      const inLog = new Set(logged);
      const spooled = spoolEventFiles(state).map((n) => n.slice(0, -'.event'.length));
      const trashed = trashedIds();
      expect([...new Set([...logged, ...spooled])].sort()).toEqual(all); // nothing lost
      expect(trashed.filter((id) => !inLog.has(id)), `${point} of batch ${batch}`).toEqual([]); // trashed only once committed
      expect(new Set([...spooled, ...trashed]).size).toBe(spooled.length + trashed.length); // in one place only
      const committedBatches = point === 'after-commit' ? batch + 1 : batch;
      expect(logged.length - before).toBeLessThanOrEqual(committedBatches * BATCH);
      // (no "more than before": the first batches of this drain may all be files a kill left committed)
      expect(logged.length).toBeGreaterThanOrEqual(before);
    }
    const last = drainSpool(state, { warn: () => {}, trashFrom: 1, removeTrash: () => {}, moverWorker: true });
    expect(last).toMatchObject({ rejected: 0, locked: false, busy: false });
    expect(spoolEventFiles(state)).toEqual([]);
    expect(loggedIds(state)).toEqual(all); // exactly once
    const trashed = trashedIds();
    expect(trashed.sort()).toEqual(all); // every file ends in exactly one trash folder
  }, 120_000);
});
