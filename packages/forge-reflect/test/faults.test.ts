/**
 * Faults: the drain killed with SIGKILL many times over a spool of thousands of events: at the end
 * every event is in the log exactly once, none rejected, none left.
 *
 * The kills are deterministic, not timed: the drain (the built package, dist/, as the CLI runs it)
 * SIGKILLs itself at a chosen point of a chosen batch: before the batch is written, inside its
 * transaction after k rows, right after its commit, or as it removes the batch's files: after k of
 * them are unlinked, or (a drain of many) right after their names are listed for the remover. Each
 * point has a state it must leave behind, checked after every kill: ids in the log and files in
 * the spool together hold every event, and the files waiting in the spool (not listed) whose ids
 * are already in the log are exactly the ones that point leaves (none, unless the commit happened
 * and not all files were removed or listed).
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { DRAIN_LOCK_NAME } from '../src/log/drain-lock.js';
import { drainSpool } from '../src/log/drain.js';
import { openEventLog } from '../src/log/event-log.js';
import { DRAINED_DIR_NAME, readDrainedLists, removeListedHere, STALE_LIST_MS } from '../src/log/drained-lists.js';
import { cleanupTempDirs, DIST, spoolEventFiles, tempDir, writeSpoolFile } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const EVENTS = 3_000;
const BATCH = 10;
const KILLS = 24;
const POINTS = ['before-batch', 'in-transaction', 'after-commit', 'mid-removal'] as const;
type Point = (typeof POINTS)[number];

// argv: drain.js url, event-log.js url, state dir, point, batch (0-based, in this drain), k, listFrom
// "mid-removal" is the removal of the batch's files: after k unlinks, or, in a drain that lists
// them, right after the batch's names are appended to its list (the one write after the commit).
const DRAINER = `
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
const [drainUrl, logUrl, stateDir, point, nth, k, listFrom] = [process.argv[1], process.argv[2], process.argv[3], process.argv[4], Number(process.argv[5]), Number(process.argv[6]), Number(process.argv[7])];
const die = () => process.kill(process.pid, 'SIGKILL');
let removing = false;
let unlinked = 0;
const unlink = fs.unlinkSync;
fs.unlinkSync = (path, ...rest) => {
  if (removing && String(path).endsWith('.event') && ++unlinked > k) die();
  return unlink(path, ...rest);
};
const write = fs.writeSync;
fs.writeSync = (...args) => {
  const written = write(...args);
  if (removing) die();
  return written;
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
  if (here && point === 'mid-removal') removing = true;
  return result;
} };
drainSpool(stateDir, { log: faulty, batchSize: ${BATCH}, warn: () => {}, listFrom, removeListed: () => {} });
`;

function drainAndDie(stateDir: string, point: Point, batch: number, k: number, listFrom: number): Promise<NodeJS.Signals | null> {
  return new Promise((resolve, reject) => {
    const url = (file: string) => pathToFileURL(join(DIST, file)).href;
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', DRAINER, url('log/drain.js'), url('log/event-log.js'), stateDir, point, String(batch), String(k), String(listFrom)],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
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

/** How many of a killed batch's files must still wait in the spool (not listed) with their ids in the log. */
function leftBoth(point: Point, k: number, listing: boolean): number {
  if (point === 'after-commit') return BATCH;
  if (point === 'mid-removal') return listing ? 0 : BATCH - k;
  return 0; // killed before the commit: the transaction rolled back as a whole
}

const listedIds = (state: string): Set<string> =>
  new Set([...readDrainedLists(join(state, 'spool'), [], Date.now()).names].map((n) => n.slice(0, -'.event'.length)));

/** A state dir with EVENTS tool events spooled as files; `all`: their ids, sorted. */
function spooledState(): { state: string; all: string[] } {
  const state = tempDir();
  const ids: string[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const name = writeSpoolFile(state, {
      event: 'PostToolUse',
      payload: JSON.stringify({
        session_id: 'k',
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        tool_use_id: `t${i}`,
        tool_response: { stdout: 'o'.repeat(i % 500) },
      }),
    });
    ids.push(name.slice(0, -'.event'.length));
  }
  return { state, all: ids.sort() };
}

describe.each([
  ['unlinks', 1e9],
  ['lists for the remover', 1],
])('the drain SIGKILLed at each point of a batch, as it removes files it %s', (_how, listFrom) => {
  const listing = listFrom === 1;
  it(`loses and doubles nothing over ${EVENTS} events and ${KILLS} kills`, async () => {
    const { state, all } = spooledState();
    for (let kill = 0; kill < KILLS; kill++) {
      const point = POINTS[kill % POINTS.length] as Point;
      // batch >= 1: batch 0 of a drain may hold files an earlier kill left committed, the ones after are new
      const batch = 1 + (kill % 3);
      const k = 1 + ((kill * 7) % (BATCH - 1));
      const before = loggedIds(state).length;
      expect(await drainAndDie(state, point, batch, k, listFrom), `${point} of batch ${batch}`).toBe('SIGKILL');
      const logged = loggedIds(state);
      const inLog = new Set(logged);
      const listed = listedIds(state);
      const spooled = spoolEventFiles(state).map((n) => n.slice(0, -'.event'.length));
      expect([...new Set([...logged, ...spooled])].sort()).toEqual(all); // nothing lost
      expect([...listed].filter((id) => !inLog.has(id))).toEqual([]); // listed only once committed
      const waiting = spooled.filter((id) => !listed.has(id));
      expect(
        waiting.filter((id) => inLog.has(id)),
        `${point} of batch ${batch}, k=${k}`,
      ).toHaveLength(leftBoth(point, k, listing));
      const committedBatches = point === 'after-commit' || point === 'mid-removal' ? batch + 1 : batch;
      expect(logged.length - before).toBeLessThanOrEqual(committedBatches * BATCH);
      expect(logged.length).toBeGreaterThan(before); // batches before the fault committed
    }
    const handed: string[] = [];
    const last = drainSpool(state, { warn: () => {}, listFrom, removeListed: (paths) => handed.push(...paths) });
    expect(last).toMatchObject({ rejected: 0, locked: false, busy: false });
    const lastPoint = POINTS[(KILLS - 1) % POINTS.length] as Point;
    expect(last.alreadyPresent).toBe(leftBoth(lastPoint, 1 + (((KILLS - 1) * 7) % (BATCH - 1)), listing));
    expect(loggedIds(state)).toEqual(all); // exactly once: ids are unique and all there
    const listed = listedIds(state);
    expect(spoolEventFiles(state).filter((n) => !listed.has(n.slice(0, -'.event'.length)))).toEqual([]); // nothing waits
    const spool = join(state, 'spool');
    if (!listing) {
      expect(handed).toEqual([]);
      expect(spoolEventFiles(state)).toEqual([]);
      expect(readdirSync(spool).filter((n) => n !== 'rejected' && n !== DRAIN_LOCK_NAME)).toEqual([]);
      return;
    }
    // Every file is listed, once or more (a file a kill left committed and unlisted is listed by the
    // drain that found it), and only the last drain's list went to the remover: the killed drains'
    // lists are young. Once they are stale, a drain hands them over too, and then nothing is left.
    expect([...listed].sort()).toEqual(all);
    expect(handed).toHaveLength(1);
    removeListedHere(spool, handed);
    const later = drainSpool(state, {
      warn: () => {},
      listFrom,
      now: () => Date.now() + STALE_LIST_MS + 60_000,
      removeListed: (paths) => removeListedHere(spool, paths),
    });
    expect(later).toMatchObject({ drained: 0, alreadyPresent: 0, rejected: 0 });
    expect(spoolEventFiles(state)).toEqual([]);
    expect(readdirSync(join(spool, DRAINED_DIR_NAME))).toEqual([]);
  }, 120_000);
});
