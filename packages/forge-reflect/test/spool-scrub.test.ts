/**
 * The scrub of the spool log (src/log/scrub.ts) against real processes.
 *
 * Kills: a drain (the built package, dist/, as the CLI runs it) SIGKILLs itself at a chosen point
 * of its scrub: right after a commit, half way through writing the zeros, before their fdatasync,
 * or before it records them in the log. Each point leaves a state checked at once (raw bytes still
 * there, or zeros the log does not know of yet); then a drain must wipe what was committed and take
 * nothing twice (no record counted as already present), and every event is logged once.
 *
 * Appends: hook-like writers append records to spool/events.log while drains seal, read and scrub
 * it; one of them holds the log open from before a seal and goes on appending to the segment the
 * drain just overwrote. Every event is logged once, none is read twice or rejected, and nothing but
 * zeros is left of them. No figure here depends on timing: which drain takes which record varies,
 * the end state does not.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { drainSpool, type DrainCounts } from '../src/log/drain.js';
import { openEventLog } from '../src/log/event-log.js';
import { isSegmentName } from '../src/log/spool-log.js';
import { rejectedDirOf } from '../src/state-dir.js';
import { cleanupTempDirs, DIST, spoolRecord, tempDir, type SpoolRecord } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const PASSWORD = 'hunter2-Zq8vXw3Lp9';
const BATCH = 10;
const POINTS = ['after-commit', 'mid-write', 'before-sync', 'before-record'] as const;
type Point = (typeof POINTS)[number];

let serial = 0;
function secretRecord(): SpoolRecord {
  serial += 1;
  return spoolRecord(JSON.stringify({ session_id: 'scrub', hook_event_name: 'UserPromptSubmit', prompt: `deploy with password=${PASSWORD} (${serial})` }), {
    event: 'UserPromptSubmit',
  });
}

// argv: drain.js url, event-log.js url, state dir, point
const DRAINER = `
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
const [drainUrl, logUrl, stateDir, point] = process.argv.slice(1);
const die = () => process.kill(process.pid, 'SIGKILL');
if (point === 'mid-write') {
  const write = fs.writeSync;
  fs.writeSync = (fd, buffer, offset, length, position) => {
    write(fd, buffer, offset, Math.ceil(length / 2), position);
    die();
  };
}
if (point === 'before-sync') fs.fdatasyncSync = () => die();
syncBuiltinESMExports();
const { openEventLog } = await import(logUrl);
const { drainSpool } = await import(drainUrl);
const log = openEventLog(stateDir);
const faulty = { ...log,
  insertBatch(rows, mark) {
    const result = log.insertBatch(rows, mark);
    if (point === 'after-commit') die();
    return result;
  },
  markScrubbed(name, to) {
    if (point === 'before-record') die();
    log.markScrubbed(name, to);
  },
};
drainSpool(stateDir, { log: faulty, batchSize: ${BATCH}, warn: () => {} });
`;

function drainAndDie(stateDir: string, point: Point): Promise<NodeJS.Signals | null> {
  return new Promise((resolve, reject) => {
    const url = (file: string) => pathToFileURL(join(DIST, file)).href;
    const child = spawn(process.execPath, ['--input-type=module', '-e', DRAINER, url('log/drain.js'), url('log/event-log.js'), stateDir, point], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => resolve(signal));
  });
}

function spoolOf(state: string): string {
  const dir = join(state, 'spool');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

function segments(state: string): string[] {
  return readdirSync(spoolOf(state)).filter(isSegmentName).sort();
}

function loggedIds(state: string): string[] {
  const log = openEventLog(state);
  try {
    return (log.db.prepare('SELECT id FROM events ORDER BY id').all() as { id: string }[]).map((r) => r.id);
  } finally {
    log.close();
  }
}

function scrubs(state: string): Map<string, { done: number; scrubbed: number }> {
  const log = openEventLog(state);
  try {
    return log.segmentMarks();
  } finally {
    log.close();
  }
}

function allZeros(path: string): boolean {
  const bytes = readFileSync(path);
  return bytes.equals(Buffer.alloc(bytes.length));
}

/** Every segment drained to its end, recorded as scrubbed to there, and nothing but zeros on disk. */
function expectWiped(state: string): void {
  const marks = scrubs(state);
  for (const name of segments(state)) {
    const path = join(spoolOf(state), name);
    expect(marks.get(name), name).toEqual({ done: statSync(path).size, scrubbed: statSync(path).size });
    expect(allZeros(path), name).toBe(true);
  }
}

const sorted = (list: readonly string[]) => [...list].sort();

describe('a drain SIGKILLed at each point of its scrub', () => {
  it('leaves what that point says, and the next drain wipes it, taking every event once and none twice', async () => {
    const state = tempDir();
    const spool = spoolOf(state);
    const all: string[] = [];
    const add = (file: string, n: number): void => {
      const recs = Array.from({ length: n }, secretRecord);
      writeFileSync(file, Buffer.concat(recs.map((r) => r.bytes)), { flag: 'a', mode: 0o600 });
      all.push(...recs.map((r) => r.id));
    };
    for (const round of [0, 1]) {
      for (const point of POINTS) {
        // new records in the live log, and (from the second kill on) late ones in the newest segment
        add(join(spool, 'events.log'), 25);
        const newest = segments(state).at(-1);
        if (newest !== undefined) add(join(spool, newest), 5);
        const before = scrubs(state);
        expect(await drainAndDie(state, point), `${point}, round ${round}`).toBe('SIGKILL');
        const marks = scrubs(state);
        const behind = segments(state).filter((name) => {
          const mark = marks.get(name);
          return mark !== undefined && mark.scrubbed < mark.done && mark.scrubbed === (before.get(name)?.scrubbed ?? 0);
        });
        // killed in its first scrub: that segment's committed bytes are not recorded as scrubbed
        expect(behind.length, `${point}, round ${round}`).toBeGreaterThan(0);
        const first = behind[0] as string;
        const from = before.get(first)?.scrubbed ?? 0;
        const done = (marks.get(first) as { done: number }).done;
        const bytes = readFileSync(join(spool, first)).subarray(from, done);
        if (point === 'after-commit') expect(bytes.includes(PASSWORD), point).toBe(true); // not yet overwritten
        if (point === 'before-sync' || point === 'before-record') expect(bytes.equals(Buffer.alloc(bytes.length)), point).toBe(true);

        const next: DrainCounts = drainSpool(state, { warn: () => {}, batchSize: BATCH });
        expect(next, `${point}, round ${round}`).toMatchObject({ alreadyPresent: 0, rejected: 0, inFlight: 0, busy: false, locked: false });
        expect(loggedIds(state)).toEqual(sorted(all));
        expectWiped(state);
      }
    }
    expect(existsSync(rejectedDirOf(state))).toBe(false);
    for (const name of readdirSync(spool))
      if (statSync(join(spool, name)).isFile()) expect(readFileSync(join(spool, name)).includes(PASSWORD), name).toBe(false);
  }, 120_000);
});

// argv: records file (JSON: base64 records), log path, mode (each | hold), flags dir, writer name.
// each: opens the log for every record (as the hook does); hold: opens it once, writes half, says
// so, waits until told to go on (a drain has sealed the log under it), and writes the rest.
const WRITER = `
import { closeSync, existsSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
const [recordsFile, logPath, mode, flags, name] = process.argv.slice(1);
const records = JSON.parse(readFileSync(recordsFile, 'utf8')).map((b) => Buffer.from(b, 'base64'));
const pause = new Int32Array(new SharedArrayBuffer(4));
const wait = (ms) => Atomics.wait(pause, 0, 0, ms);
if (mode === 'hold') {
  const fd = openSync(logPath, 'a', 0o600);
  const half = records.length / 2;
  for (const r of records.slice(0, half)) writeSync(fd, r);
  writeFileSync(join(flags, name + '.half'), '');
  while (!existsSync(join(flags, 'go'))) wait(2);
  records.slice(half).forEach((r, i) => { writeSync(fd, r); if (i % 5 === 0) wait(1); });
  closeSync(fd);
} else {
  records.forEach((r, i) => {
    const fd = openSync(logPath, 'a', 0o600);
    writeSync(fd, r);
    closeSync(fd);
    if (i % 5 === 0) wait(1);
  });
}
writeFileSync(join(flags, name + '.done'), '');
`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean): Promise<void> {
  while (!check()) await sleep(5);
}

describe('hooks appending while drains seal, read and scrub the log', () => {
  it("keeps every byte appended after a drain's read point: each event logged once, none twice, none rejected, zeros left", async () => {
    const state = tempDir();
    const spool = spoolOf(state);
    const flags = tempDir();
    const live = join(spool, 'events.log');
    const writers = [
      { name: 'hold', mode: 'hold', count: 100 },
      { name: 'a', mode: 'each', count: 150 },
      { name: 'b', mode: 'each', count: 150 },
      { name: 'c', mode: 'each', count: 150 },
    ];
    const all: string[] = [];
    const exits: Array<Promise<number | null>> = [];
    for (const w of writers) {
      const recs = Array.from({ length: w.count }, secretRecord);
      all.push(...recs.map((r) => r.id));
      const file = join(flags, `${w.name}.json`);
      writeFileSync(file, JSON.stringify(recs.map((r) => r.bytes.toString('base64'))));
      const child = spawn(process.execPath, ['--input-type=module', '-e', WRITER, file, live, w.mode, flags, w.name], {
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      exits.push(
        new Promise((resolve, reject) => {
          child.on('error', reject);
          child.on('exit', (code) => resolve(code));
        }),
      );
    }
    const totals = { drained: 0, alreadyPresent: 0, rejected: 0 };
    const drain = (): void => {
      const c = drainSpool(state, { warn: () => {}, batchSize: BATCH });
      totals.drained += c.drained;
      totals.alreadyPresent += c.alreadyPresent;
      totals.rejected += c.rejected;
    };
    // the holder's first half is in the log: this drain seals it under the holder's open descriptor
    await until(() => existsSync(join(flags, 'hold.half')));
    drain();
    const sealed = segments(state);
    expect(sealed).toHaveLength(1);
    const holders = sealed[0] as string;
    const firstScrub = scrubs(state).get(holders)?.scrubbed ?? 0;
    expect(firstScrub).toBeGreaterThan(0);
    writeFileSync(join(flags, 'go'), '');
    const done = () => writers.every((w) => existsSync(join(flags, `${w.name}.done`)));
    while (!done()) {
      drain();
      await sleep(3);
    }
    expect(await Promise.all(exits)).toEqual(writers.map(() => 0));
    drain();
    expect(totals).toEqual({ drained: all.length, alreadyPresent: 0, rejected: 0 });
    expect(loggedIds(state)).toEqual(sorted(all));
    expect(existsSync(rejectedDirOf(state))).toBe(false);
    expectWiped(state);
    // the holder's second half went into the segment sealed under it, past what was overwritten then
    expect(statSync(join(spool, holders)).size).toBeGreaterThan(firstScrub);
  }, 120_000);
});
