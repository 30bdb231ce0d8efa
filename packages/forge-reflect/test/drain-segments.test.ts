// The spool log through the drain (docs/spool-format.md, "The spool log"): the event hook appends
// small events to `spool/events.log` as records; a drain seals that log into a segment
// (`<sealed_us>-<pid>.seg`), reads segments from the offsets kept in `spool_segments`, commits
// rows and offset together, keeps bad bytes in spool/rejected/, leaves an incomplete tail of a fresh
// segment for later, and removes a segment once read to its end and quiet for 60 s.
//
// Time: every drain here gets `now` from a clock fixed at the test's start (T). A segment sealed at
// T whose file was written at or after T is fresh at T; "quiet" is T + 61 s with the file's mtime
// set back explicitly, so nothing depends on how long a test takes.
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { drainSpool, openDrainedLog, type DrainCounts, type DrainOptions } from '../src/log/drain.js';
import { openEventLog, type EventLog, type InsertResult, type SegmentMark } from '../src/log/event-log.js';
import type { EventRow } from '../src/events.js';
import { hasState } from '../src/log/reading-log.js';
import { isoFromMicros } from '../src/log/spool-event.js';
import { isSegmentName } from '../src/log/spool-log.js';
import { rejectedDirOf } from '../src/state-dir.js';
import { cleanupTempDirs, hookBashHasClock, KIT_ROOT, spoolEventFiles, spoolRecord, tempDir, writeSpoolFile, type SpoolRecord } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const QUIET_MS = 60_000;
const FIXTURES = join(KIT_ROOT, 'tests', 'fixtures', 'payloads');
/** The type each Claude Code hook event becomes (as drain.test.ts expects for the same fixtures). */
const TYPE_OF: Record<string, string> = {
  SessionStart: 'session.started',
  UserPromptSubmit: 'prompt.submitted',
  PostToolUse: 'tool.executed',
  PostToolUseFailure: 'tool.failed',
  SubagentStop: 'subagent.stopped',
  Stop: 'turn.stopped',
  SessionEnd: 'session.ended',
  PreCompact: 'context.compacting',
  Notification: 'notification',
};

interface Fixture {
  file: string;
  hookEvent: string;
  type: string;
  /** One line of JSON. */
  payload: string;
}

/** The reference payloads whose type is known, each as one line of JSON (as the hook appends them). */
function fixtures(): Fixture[] {
  const out: Fixture[] = [];
  for (const file of readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const value = JSON.parse(readFileSync(join(FIXTURES, file), 'utf8')) as Record<string, unknown>;
    const hookEvent = String(value.hook_event_name);
    const type = TYPE_OF[hookEvent];
    if (type !== undefined) out.push({ file, hookEvent, type, payload: JSON.stringify(value) });
  }
  return out;
}

type Rec = SpoolRecord;
const record = spoolRecord;

function toolRecord(i: number, extra = ''): Rec {
  return record(
    JSON.stringify({
      session_id: 'seg',
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_use_id: `t${i}`,
      tool_response: { stdout: `out ${i}${extra}` },
    }),
    { event: 'PostToolUse' },
  );
}

function spoolDir(stateDir: string): string {
  const dir = join(stateDir, 'spool');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

function liveLog(stateDir: string): string {
  return join(spoolDir(stateDir), 'events.log');
}

/** Appends records (or raw bytes) to a file of the spool, as hooks do with `>>`. */
function append(file: string, ...parts: Array<Rec | Buffer>): void {
  appendFileSync(file, Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : p.bytes))));
}

function segments(stateDir: string): string[] {
  return readdirSync(join(stateDir, 'spool')).filter(isSegmentName).sort();
}

function onlySegment(stateDir: string): string {
  const segs = segments(stateDir);
  expect(segs).toHaveLength(1);
  return join(stateDir, 'spool', segs[0] as string);
}

function withLog<T>(stateDir: string, f: (log: EventLog) => T): T {
  const log = openEventLog(stateDir);
  try {
    return f(log);
  } finally {
    log.close();
  }
}

function rows(stateDir: string): EventRow[] {
  return withLog(stateDir, (log) => log.db.prepare('SELECT * FROM events ORDER BY id').all() as EventRow[]);
}

function ids(stateDir: string): string[] {
  return rows(stateDir).map((r) => r.id);
}

function marks(stateDir: string): Array<{ name: string; done: number }> {
  return withLog(stateDir, (log) => log.db.prepare('SELECT name, done FROM spool_segments ORDER BY name').all() as Array<{ name: string; done: number }>);
}

function rejected(stateDir: string): string[] {
  const dir = rejectedDirOf(stateDir);
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/** Sets a file's mtime to `ms` (so a segment is quiet at T + 61 s, whenever the test runs). */
function setMtime(file: string, ms: number): void {
  utimesSync(file, ms / 1000, ms / 1000);
}

const sorted = (list: readonly string[]) => [...list].sort();

/** A log whose insertBatch runs `hook` (call number, rows, mark, the real insert). */
function wrapLog(
  log: EventLog,
  hook: (call: number, rows: readonly EventRow[], mark: SegmentMark | undefined, real: () => InsertResult) => InsertResult,
): EventLog {
  let call = 0;
  return { ...log, insertBatch: (batch, mark) => hook(call++, batch, mark, () => log.insertBatch(batch, mark)) };
}

function busyError(): Error {
  return Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
}

function makeDrain(stateDir: string, base: DrainOptions) {
  return (extra: DrainOptions = {}): DrainCounts => drainSpool(stateDir, { warn: () => {}, ...base, ...extra });
}

/** A fresh state folder whose spool/events.log holds `n` tool records; T is the test's fixed clock. */
function stateWithLog(n: number): { T: number; state: string; recs: ReturnType<typeof toolRecord>[] } {
  const state = tempDir();
  const recs = Array.from({ length: n }, (_, i) => toolRecord(i));
  append(liveLog(state), ...recs);
  return { T: Date.now(), state, recs };
}

describe('the records this file writes', () => {
  it('are byte for byte what the real event hook appends, and drain the same', () => {
    const T = Date.now();
    const repo = tempDir();
    const state = join(repo, '.forge');
    const payloads = ['{"session_id":"hk","hook_event_name":"PostToolUse","tool_name":"Bash"}', '{"session_id":"hk","hook_event_name":"Stop"}\n'];
    for (const [i, p] of payloads.entries()) {
      const event = i === 0 ? 'PostToolUse' : 'Stop';
      const r = spawnSync('bash', [join(KIT_ROOT, 'hooks', 'reflect-event-hook.sh'), event, 'claude-code'], {
        cwd: repo,
        input: p,
        env: { ...process.env, REFLECTION_MODE: 'solo', FORGE_DIR: state },
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(0);
    }
    if (!hookBashHasClock()) {
      // Without a clock the hook writes no record: each event a file of its own, written at once
      // under its final name (envelope with its length, then the payload), 16 zeros for the time.
      expect(existsSync(join(state, 'spool', 'events.log'))).toBe(false);
      const spool = join(state, 'spool');
      const files = spoolEventFiles(state).sort(
        (a, b) => statSync(join(spool, a)).mtimeMs - statSync(join(spool, b)).mtimeMs || Number(a.split('-')[1]) - Number(b.split('-')[1]),
      );
      expect(files).toHaveLength(2);
      const want = files.map((name, i) => {
        const m = /^0{16}-(\d+)-[0-9a-f]{8}\.event$/.exec(name);
        expect(m, name).not.toBeNull();
        const bytes = readFileSync(join(spool, name));
        const nl = bytes.indexOf(0x0a);
        const env = JSON.parse(bytes.subarray(0, nl).toString('utf8')) as Record<string, unknown>;
        expect(Object.keys(env)).toEqual(['v', 'source', 'event', 'runtime', 'received_us', 'pid', 'cwd', 'cap', 'clock', 'bytes']);
        expect(env).toMatchObject({
          v: 1,
          source: 'event-hook',
          event: i === 0 ? 'PostToolUse' : 'Stop',
          runtime: 'claude-code',
          received_us: 0,
          pid: Number(m?.[1]),
          clock: 'file',
          bytes: Buffer.byteLength(payloads[i] as string),
        });
        expect(bytes.subarray(nl + 1).toString('utf8')).toBe(payloads[i]);
        // the drain's id: the time of writing, to the microsecond, in place of the zeros
        return `${String(Math.round(statSync(join(spool, name)).mtimeMs * 1000)).padStart(16, '0')}${name.slice(16, -'.event'.length)}`;
      });
      expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 2, rejected: 0, inFlight: 0 });
      expect(ids(state)).toEqual(sorted(want));
      // Real times, this run's (a file's time may lag by a tick of the kernel's clock, 4 ms on Linux),
      // and the files matched the payloads in the order of those times: the order written.
      for (const id of want) {
        expect(Number(id.slice(0, 16))).toBeGreaterThanOrEqual((T - 10) * 1000);
        expect(Number(id.slice(0, 16))).toBeLessThanOrEqual(Date.now() * 1000);
      }
      return;
    }
    expect(spoolEventFiles(state)).toEqual([]);
    const written = readFileSync(liveLog(state));
    // split at each \x1e, rebuild every record with this file's writer from the hook's own envelope
    const parts = written.toString('utf8').split('\x1e').slice(1);
    expect(parts).toHaveLength(2);
    const ours = parts.map((part, i) => {
      const env = JSON.parse(part.slice(0, part.indexOf('\x1f'))) as Record<string, unknown>;
      expect(Object.keys(env)).toEqual(['v', 'source', 'event', 'runtime', 'received_us', 'pid', 'cwd', 'cap', 'bytes', 'id']);
      expect(env.bytes).toBe(Buffer.byteLength(payloads[i] as string));
      return { id: env.id as string, rec: record(payloads[i] as string, { envelope: () => env }) };
    });
    expect(Buffer.concat(ours.map((o) => o.rec.bytes))).toEqual(written);
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 2, rejected: 0, inFlight: 0 });
    expect(ids(state)).toEqual(sorted(ours.map((o) => o.id)));
  });
});

describe('records of the spool log through the drain', () => {
  it('logs 2,500 records once each with their ids, times and types, seals the log, and never reads them again', () => {
    const T = Date.now();
    const state = tempDir();
    const fx = fixtures();
    expect(fx.length).toBeGreaterThanOrEqual(9);
    const recs = Array.from({ length: 2_500 }, (_, i) => {
      const f = fx[i % fx.length] as Fixture;
      return { f, rec: record(f.payload, { event: f.hookEvent }) };
    });
    append(liveLog(state), ...recs.map((r) => r.rec));
    const size = statSync(liveLog(state)).size;
    expect(size).toBe(recs.reduce((n, r) => n + r.rec.bytes.length, 0));

    const log = openEventLog(state);
    const commits: Array<{ rows: number; mark: SegmentMark | undefined }> = [];
    const spy = wrapLog(log, (_call, batch, mark, real) => {
      commits.push({ rows: batch.length, mark: mark && { ...mark } });
      return real();
    });
    let counts: DrainCounts;
    try {
      counts = drainSpool(state, { warn: () => {}, now: () => T, batchSize: 1000, log: spy });
    } finally {
      log.close();
    }
    expect(counts).toMatchObject({ drained: 2_500, alreadyPresent: 0, rejected: 0, inFlight: 0, locked: false, busy: false });

    // sealed: no events.log, one fresh segment holding every byte, drained to its end
    expect(existsSync(liveLog(state))).toBe(false);
    const seg = onlySegment(state);
    const segName = seg.split('/').pop() as string;
    expect(statSync(seg).size).toBe(size);
    expect(marks(state)).toEqual([{ name: segName, done: size }]);
    // three batches, each committed with the offset just after its last record
    const endOf = (n: number) => recs.slice(0, n).reduce((sum, r) => sum + r.rec.bytes.length, 0);
    expect(commits.map((c) => c.rows)).toEqual([1000, 1000, 500]);
    expect(commits.map((c) => c.mark)).toEqual([
      { name: segName, done: endOf(1000) },
      { name: segName, done: endOf(2000) },
      { name: segName, done: endOf(2500) },
    ]);

    const stored = rows(state);
    expect(stored).toHaveLength(2_500);
    const byId = new Map(recs.map((r) => [r.rec.id, r]));
    expect(sorted(stored.map((r) => r.id))).toEqual(sorted([...byId.keys()]));
    for (const row of stored) {
      const { f, rec } = byId.get(row.id) as { f: Fixture; rec: Rec };
      expect(row.ts, f.file).toBe(isoFromMicros(rec.receivedUs));
      expect(row.type, f.file).toBe(f.type);
      expect(row.runtime, f.file).toBe('claude-code');
      expect(row.cwd).toBe('/home/dev/acme-app');
      expect(row.truncated).toBe(0);
      expect(JSON.parse(row.payload), f.file).toEqual(JSON.parse(f.payload));
    }
    expect(rejected(state)).toEqual([]);

    // a second drain: nothing new, nothing read again
    const again = drainSpool(state, { warn: () => {}, now: () => T, batchSize: 1000 });
    expect(again).toMatchObject({ drained: 0, alreadyPresent: 0, rejected: 0, inFlight: 0, busy: false });
    expect(ids(state)).toHaveLength(2_500);
    expect(segments(state)).toEqual([segName]);
    expect(marks(state)).toEqual([{ name: segName, done: size }]);
  });

  it('reads records appended to a segment after it was sealed (a hook that opened the log before), and only those', () => {
    const T = Date.now();
    const state = tempDir();
    const drain = makeDrain(state, { now: () => T });
    const first = Array.from({ length: 5 }, (_, i) => toolRecord(i));
    append(liveLog(state), ...first);
    expect(drain()).toMatchObject({ drained: 5, alreadyPresent: 0 });
    const seg = onlySegment(state);
    const late = Array.from({ length: 3 }, (_, i) => toolRecord(100 + i));
    append(seg, ...late);
    expect(drain()).toMatchObject({ drained: 3, alreadyPresent: 0, rejected: 0, inFlight: 0 });
    expect(ids(state)).toEqual(sorted([...first, ...late].map((r) => r.id)));
    expect(marks(state)).toEqual([{ name: seg.split('/').pop(), done: statSync(seg).size }]);
    // and both: more late records in the old segment and new ones in a new events.log
    const later = [toolRecord(200)];
    const fresh = [toolRecord(300), toolRecord(301)];
    append(seg, ...later);
    append(liveLog(state), ...fresh);
    expect(drain()).toMatchObject({ drained: 3, alreadyPresent: 0 });
    expect(ids(state)).toEqual(sorted([...first, ...late, ...later, ...fresh].map((r) => r.id)));
    expect(segments(state)).toHaveLength(2);
  });

  it('leaves a partial last record of a fresh segment in flight, logs it once it is whole, and rejects a partial tail once the segment is quiet', () => {
    const T = Date.now();
    const state = tempDir();
    const whole = [toolRecord(1), toolRecord(2), toolRecord(3)];
    const fourth = toolRecord(4);
    const cutAt = fourth.bytes.length - 20;
    append(liveLog(state), ...whole, fourth.bytes.subarray(0, cutAt));

    const fresh = makeDrain(state, { now: () => T });
    expect(fresh()).toMatchObject({ drained: 3, inFlight: 1, rejected: 0, alreadyPresent: 0 });
    expect(rejected(state)).toEqual([]);
    expect(ids(state)).toEqual(sorted(whole.map((r) => r.id)));
    const seg = onlySegment(state);
    const segName = seg.split('/').pop() as string;
    const wholeBytes = whole.reduce((n, r) => n + r.bytes.length, 0);
    expect(marks(state)).toEqual([{ name: segName, done: wholeBytes }]);
    // still short: still in flight, still not logged or rejected
    expect(fresh()).toMatchObject({ drained: 0, inFlight: 1, rejected: 0 });

    // its writer finishes
    append(seg, fourth.bytes.subarray(cutAt));
    expect(fresh()).toMatchObject({ drained: 1, inFlight: 0, rejected: 0, alreadyPresent: 0 });
    expect(fresh()).toMatchObject({ drained: 0, inFlight: 0, alreadyPresent: 0 });
    expect(ids(state)).toEqual(sorted([...whole, fourth].map((r) => r.id)));

    // another writer is killed halfway; 61 s later, with nothing written since, the tail is rejected
    const fifth = toolRecord(5);
    const tail = fifth.bytes.subarray(0, 40);
    append(seg, tail);
    const tailAt = statSync(seg).size - tail.length;
    expect(fresh()).toMatchObject({ drained: 0, inFlight: 1, rejected: 0 });
    setMtime(seg, T - 1_000);
    const quiet = drainSpool(state, { warn: () => {}, now: () => T + QUIET_MS + 1_000 });
    expect(quiet).toMatchObject({ drained: 0, inFlight: 0, rejected: 1, alreadyPresent: 0 });
    const stem = `${segName}-at-${tailAt}`;
    expect(rejected(state)).toEqual([`${stem}.event`, `${stem}.reason`]);
    expect(readFileSync(join(rejectedDirOf(state), `${stem}.event`))).toEqual(Buffer.from(tail));
    expect(readFileSync(join(rejectedDirOf(state), `${stem}.reason`), 'utf8').trim()).not.toBe('');
    // read to its end and quiet: removed, and its offset forgotten
    expect(segments(state)).toEqual([]);
    expect(marks(state)).toEqual([]);
    expect(ids(state)).toEqual(sorted([...whole, fourth].map((r) => r.id)));
  });

  it('logs every whole record around a record cut short in the middle, and keeps the cut one in rejected/ with a reason', () => {
    const T = Date.now();
    const state = tempDir();
    const before = Array.from({ length: 5 }, (_, i) => toolRecord(i));
    const cut = toolRecord(99, 'x'.repeat(50));
    const cutBytes = cut.bytes.subarray(0, cut.bytes.length - 30); // its payload is 29 bytes short
    const after = Array.from({ length: 5 }, (_, i) => toolRecord(10 + i));
    append(liveLog(state), ...before, cutBytes, ...after);
    const counts = drainSpool(state, { warn: () => {}, now: () => T });
    expect(counts).toMatchObject({ drained: 10, rejected: 1, inFlight: 0, alreadyPresent: 0 });
    expect(ids(state)).toEqual(sorted([...before, ...after].map((r) => r.id)));
    const segName = segments(state)[0] as string;
    const at = before.reduce((n, r) => n + r.bytes.length, 0);
    const stem = `${segName}-at-${at}`;
    expect(rejected(state)).toEqual([`${stem}.event`, `${stem}.reason`]);
    expect(readFileSync(join(rejectedDirOf(state), `${stem}.event`))).toEqual(Buffer.from(cutBytes));
    // a reason, after the time it was written (its wording depends on where the cut record's named end falls)
    expect(readFileSync(join(rejectedDirOf(state), `${stem}.reason`), 'utf8')).toMatch(/^\S+Z \S.*\n$/);
    expect(marks(state)).toEqual([{ name: segName, done: statSync(join(state, 'spool', segName)).size }]);
  });

  it('keeps bytes outside any record and a record with a bad envelope in rejected/, and logs the rest', () => {
    const T = Date.now();
    const state = tempDir();
    const a = toolRecord(1);
    const junk = Buffer.from('stray bytes\n');
    const noId = record('{"session_id":"s","hook_event_name":"Stop"}', { envelope: ({ id: _id, ...e }) => e });
    const b = toolRecord(2);
    append(liveLog(state), a, junk, noId, b);
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 2, rejected: 2, inFlight: 0 });
    expect(ids(state)).toEqual(sorted([a.id, b.id]));
    const segName = segments(state)[0] as string;
    expect(rejected(state)).toEqual(
      sorted([
        `${segName}-at-${a.bytes.length}.event`,
        `${segName}-at-${a.bytes.length}.reason`,
        `${segName}-at-${a.bytes.length + junk.length}.event`,
        `${segName}-at-${a.bytes.length + junk.length}.reason`,
      ]),
    );
    expect(readFileSync(join(rejectedDirOf(state), `${segName}-at-${a.bytes.length}.event`))).toEqual(junk);
    expect(readFileSync(join(rejectedDirOf(state), `${segName}-at-${a.bytes.length + junk.length}.event`))).toEqual(noId.bytes);
  });

  it('keeps a whole record whose payload is no event (not JSON, or empty) in rejected/, and logs the records around it', () => {
    const T = Date.now();
    const state = tempDir();
    const a = toolRecord(1);
    const notJson = record('this is not json');
    const empty = record('');
    const b = toolRecord(2);
    append(liveLog(state), a, notJson, empty, b);
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 2, rejected: 2, inFlight: 0 });
    expect(ids(state)).toEqual(sorted([a.id, b.id]));
    const segName = segments(state)[0] as string;
    const at1 = a.bytes.length;
    const at2 = at1 + notJson.bytes.length;
    expect(rejected(state)).toEqual(
      sorted([`${segName}-at-${at1}.event`, `${segName}-at-${at1}.reason`, `${segName}-at-${at2}.event`, `${segName}-at-${at2}.reason`]),
    );
    expect(readFileSync(join(rejectedDirOf(state), `${segName}-at-${at1}.event`))).toEqual(notJson.bytes);
    expect(readFileSync(join(rejectedDirOf(state), `${segName}-at-${at1}.reason`), 'utf8')).toMatch(/not JSON/);
    expect(readFileSync(join(rejectedDirOf(state), `${segName}-at-${at2}.event`))).toEqual(empty.bytes);
    expect(readFileSync(join(rejectedDirOf(state), `${segName}-at-${at2}.reason`), 'utf8')).toMatch(/empty/);
    expect(marks(state)).toEqual([{ name: segName, done: statSync(join(state, 'spool', segName)).size }]);
  });

  it('reads records across the 4 MiB read chunk without losing or splitting one', () => {
    const T = Date.now();
    const state = tempDir();
    // ~3.9 KB records (the hook's largest) well past 4 MiB
    const recs = Array.from({ length: 1_300 }, (_, i) => toolRecord(i, ` ${'z'.repeat(3_550 + (i % 101))}`));
    for (const r of recs) expect(r.bytes.length).toBeLessThanOrEqual(4_000);
    append(liveLog(state), ...recs);
    expect(statSync(liveLog(state)).size).toBeGreaterThan(4 * 1024 * 1024 + 100_000);
    expect(drainSpool(state, { warn: () => {}, now: () => T, batchSize: 500 })).toMatchObject({
      drained: recs.length,
      rejected: 0,
      inFlight: 0,
      alreadyPresent: 0,
    });
    expect(ids(state)).toEqual(sorted(recs.map((r) => r.id)));
    const seg = onlySegment(state);
    expect(marks(state)).toEqual([{ name: seg.split('/').pop(), done: statSync(seg).size }]);
  });
});

describe('exactly once', () => {
  it('a drain killed after a commit goes on from that commit: nothing twice, nothing skipped', () => {
    const { T, state, recs } = stateWithLog(25);
    const log = openEventLog(state);
    const dying = wrapLog(log, (call, _batch, _mark, real) => {
      const result = real();
      if (call === 1) throw new Error('killed right after the commit of batch 2');
      return result;
    });
    try {
      expect(() => drainSpool(state, { warn: () => {}, now: () => T, batchSize: 10, log: dying })).toThrow();
    } finally {
      log.close();
    }
    const seg = onlySegment(state);
    const segName = seg.split('/').pop() as string;
    expect(ids(state)).toEqual(sorted(recs.slice(0, 20).map((r) => r.id)));
    expect(marks(state)).toEqual([{ name: segName, done: recs.slice(0, 20).reduce((n, r) => n + r.bytes.length, 0) }]);

    expect(drainSpool(state, { warn: () => {}, now: () => T, batchSize: 10 })).toMatchObject({ drained: 5, alreadyPresent: 0, rejected: 0 });
    expect(ids(state)).toEqual(sorted(recs.map((r) => r.id)));
    expect(marks(state)).toEqual([{ name: segName, done: statSync(seg).size }]);
  });

  it('a drain killed before its transaction commits leaves the offset where it was', () => {
    const { T, state, recs } = stateWithLog(25);
    const log = openEventLog(state);
    const dying = wrapLog(log, (call, _batch, _mark, real) => {
      if (call === 1) throw new Error('killed before the commit of batch 2');
      return real();
    });
    try {
      expect(() => drainSpool(state, { warn: () => {}, now: () => T, batchSize: 10, log: dying })).toThrow();
    } finally {
      log.close();
    }
    const segName = segments(state)[0] as string;
    expect(marks(state)).toEqual([{ name: segName, done: recs.slice(0, 10).reduce((n, r) => n + r.bytes.length, 0) }]);
    expect(drainSpool(state, { warn: () => {}, now: () => T, batchSize: 10 })).toMatchObject({ drained: 15, alreadyPresent: 0 });
    expect(ids(state)).toEqual(sorted(recs.map((r) => r.id)));
  });

  it('a segment whose offset was lost is read again: its records count as already present, none is inserted twice', () => {
    const { T, state, recs } = stateWithLog(12);
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 12 });
    withLog(state, (log) => log.db.prepare('DELETE FROM spool_segments').run());
    expect(marks(state)).toEqual([]);
    // its drained bytes as they were before that drain overwrote them (one killed before its scrub)
    writeFileSync(onlySegment(state), Buffer.concat(recs.map((r) => r.bytes)));
    const late = toolRecord(50);
    append(onlySegment(state), late);
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 1, alreadyPresent: 12, rejected: 0 });
    const logged = ids(state);
    expect(logged).toEqual(sorted([...recs, late].map((r) => r.id)));
    expect(new Set(logged).size).toBe(logged.length);
    expect(withLog(state, (log) => log.count())).toBe(13);
    const seg = onlySegment(state);
    expect(marks(state)).toEqual([{ name: seg.split('/').pop(), done: statSync(seg).size }]);
  });

  it('a scrubbed segment whose offset was lost is read again: its zeros are stepped over, neither logged nor rejected', () => {
    const { T, state, recs } = stateWithLog(12);
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 12 });
    withLog(state, (log) => log.db.prepare('DELETE FROM spool_segments').run());
    const late = toolRecord(50);
    append(onlySegment(state), late);
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 1, alreadyPresent: 0, rejected: 0, inFlight: 0 });
    expect(ids(state)).toEqual(sorted([...recs, late].map((r) => r.id)));
    expect(rejected(state)).toEqual([]);
    expect(readFileSync(onlySegment(state)).equals(Buffer.alloc(statSync(onlySegment(state)).size))).toBe(true);
  });

  it('a segment drained to its end but not removed (killed before the removal) is removed by the next quiet drain, reading nothing', () => {
    const { T, state, recs } = stateWithLog(4);
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 4 });
    const seg = onlySegment(state);
    setMtime(seg, T - 1_000);
    expect(drainSpool(state, { warn: () => {}, now: () => T + QUIET_MS + 1_000 })).toMatchObject({ drained: 0, alreadyPresent: 0, rejected: 0, inFlight: 0 });
    expect(existsSync(seg)).toBe(false);
    expect(marks(state)).toEqual([]);
    expect(ids(state)).toEqual(sorted(recs.map((r) => r.id)));
  });

  it('the offset of a segment removed by a drain killed before it forgot the offset is forgotten later', () => {
    const T = Date.now();
    const state = tempDir();
    append(liveLog(state), toolRecord(1));
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 1 });
    const seg = onlySegment(state);
    const oldName = seg.split('/').pop() as string;
    unlinkSync(seg); // removed, then killed
    expect(marks(state).map((m) => m.name)).toEqual([oldName]);
    const next = toolRecord(2);
    append(liveLog(state), next);
    expect(drainSpool(state, { warn: () => {}, now: () => T + QUIET_MS + 1_000 })).toMatchObject({ drained: 1, alreadyPresent: 0 });
    const names = marks(state).map((m) => m.name);
    expect(names).not.toContain(oldName);
    expect(names).toEqual(segments(state));
  });
});

/** The scrub marks: how far each segment is drained and overwritten with zeros. */
function scrubs(stateDir: string): Array<{ name: string; done: number; scrubbed: number }> {
  return withLog(
    stateDir,
    (log) => log.db.prepare('SELECT name, done, scrubbed FROM spool_segments ORDER BY name').all() as Array<{ name: string; done: number; scrubbed: number }>,
  );
}

/** Whether `bytes[from, to)` are all zeros. */
function zeros(bytes: Buffer, from = 0, to = bytes.length): boolean {
  return bytes.subarray(from, to).equals(Buffer.alloc(to - from));
}

/** A tool record whose payload holds a password (in a prompt-like string) the drain redacts. */
const PASSWORD = 'hunter2-Zq8vXw3Lp9';
function secretRecord(i: number): Rec {
  return record(JSON.stringify({ session_id: 'sec', hook_event_name: 'UserPromptSubmit', prompt: `log in with password=${PASSWORD}${i}` }), {
    event: 'UserPromptSubmit',
  });
}

describe('what a drain committed is overwritten with zeros (log/scrub.ts)', () => {
  it('leaves no byte of a committed record in the segment, and no password anywhere in the spool, while the file stays', () => {
    const T = Date.now();
    const state = tempDir();
    const recs = [secretRecord(1), toolRecord(2), secretRecord(3)];
    append(liveLog(state), ...recs);
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 3, rejected: 0 });
    const seg = onlySegment(state);
    const bytes = readFileSync(seg);
    expect(bytes.length).toBe(recs.reduce((n, r) => n + r.bytes.length, 0)); // fresh: kept for late appends
    expect(zeros(bytes)).toBe(true);
    expect(scrubs(state)).toEqual([{ name: seg.split('/').pop(), done: bytes.length, scrubbed: bytes.length }]);
    const spool = join(state, 'spool');
    for (const name of readdirSync(spool, { recursive: true }) as string[]) {
      const path = join(spool, name);
      if (statSync(path).isFile()) expect(readFileSync(path).includes(PASSWORD), name).toBe(false);
    }
    expect(JSON.parse(rows(state)[0]?.payload as string)).toMatchObject({ session_id: 'sec' });
    // nothing for the next drain: it reads nothing and writes no zeros again
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 0, alreadyPresent: 0 });
    expect(ids(state)).toEqual(sorted(recs.map((r) => r.id)));
  });

  it("keeps every byte a hook appends after the drain's read point, a record still being written included", () => {
    const T = Date.now();
    const state = tempDir();
    const drain = makeDrain(state, { now: () => T });
    const first = [secretRecord(1), secretRecord(2)];
    append(liveLog(state), ...first);
    expect(drain()).toMatchObject({ drained: 2 });
    const seg = onlySegment(state);
    const head = first.reduce((n, r) => n + r.bytes.length, 0);
    // a hook that opened events.log before it was sealed appends to the segment
    const late = secretRecord(3);
    const half = secretRecord(4);
    const cut = half.bytes.length - 15;
    append(seg, late, half.bytes.subarray(0, cut));
    expect(drain()).toMatchObject({ drained: 1, inFlight: 1, rejected: 0 });
    let bytes = readFileSync(seg);
    expect(zeros(bytes, 0, head + late.bytes.length)).toBe(true);
    expect(bytes.subarray(head + late.bytes.length)).toEqual(half.bytes.subarray(0, cut)); // untouched
    expect(scrubs(state)[0]).toMatchObject({ done: head + late.bytes.length, scrubbed: head + late.bytes.length });
    // its writer finishes: the whole record is logged, then overwritten too
    append(seg, half.bytes.subarray(cut));
    expect(drain()).toMatchObject({ drained: 1, inFlight: 0, rejected: 0, alreadyPresent: 0 });
    bytes = readFileSync(seg);
    expect(zeros(bytes)).toBe(true);
    expect(ids(state)).toEqual(sorted([...first, late, half].map((r) => r.id)));
    expect(JSON.parse(rows(state).find((r) => r.id === half.id)?.payload as string).prompt).not.toContain(PASSWORD);
  });

  it('a drain killed between its commit and the scrub: the next drain wipes the committed bytes and takes nothing twice', () => {
    const { T, state, recs } = stateWithLog(25);
    const log = openEventLog(state);
    const dying = wrapLog(log, (call, _batch, _mark, real) => {
      const result = real();
      if (call === 2) throw new Error('killed right after the last commit, before the scrub');
      return result;
    });
    try {
      expect(() => drainSpool(state, { warn: () => {}, now: () => T, batchSize: 10, log: dying })).toThrow();
    } finally {
      log.close();
    }
    const seg = onlySegment(state);
    const size = statSync(seg).size;
    expect(ids(state)).toHaveLength(25);
    expect(scrubs(state)).toEqual([{ name: seg.split('/').pop(), done: size, scrubbed: 0 }]);
    expect(readFileSync(seg)).toEqual(Buffer.concat(recs.map((r) => r.bytes))); // not yet overwritten
    // the next command that reads the log (its drain takes the settled-segments shortcut otherwise)
    const reading = openDrainedLog(state, { warn: () => {}, now: () => T });
    reading.close();
    expect(zeros(readFileSync(seg))).toBe(true);
    expect(scrubs(state)).toEqual([{ name: seg.split('/').pop(), done: size, scrubbed: size }]);
    expect(ids(state)).toEqual(sorted(recs.map((r) => r.id)));
    expect(rejected(state)).toEqual([]);
  });

  it('a drain killed after writing the zeros but before recording them: the next drain writes them again and takes nothing twice', () => {
    const { T, state, recs } = stateWithLog(6);
    const log = openEventLog(state);
    const dying: EventLog = {
      ...log,
      markScrubbed: () => {
        throw new Error('killed before the scrub was recorded');
      },
    };
    try {
      expect(() => drainSpool(state, { warn: () => {}, now: () => T, log: dying })).toThrow('killed before the scrub was recorded');
    } finally {
      log.close();
    }
    const seg = onlySegment(state);
    expect(zeros(readFileSync(seg))).toBe(true);
    expect(scrubs(state)[0]).toMatchObject({ scrubbed: 0 });
    const late = toolRecord(9);
    append(seg, late);
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 1, alreadyPresent: 0, rejected: 0 });
    const size = statSync(seg).size;
    expect(zeros(readFileSync(seg))).toBe(true);
    expect(scrubs(state)[0]).toMatchObject({ done: size, scrubbed: size });
    expect(ids(state)).toEqual(sorted([...recs, late].map((r) => r.id)));
  });

  it('wipes a segment an earlier version drained (no scrub recorded) at the next drain, before its removal', () => {
    const { T, state, recs } = stateWithLog(4);
    const log = openEventLog(state);
    const noScrub: EventLog = { ...log, markScrubbed: () => {} };
    try {
      // what an earlier version left: drained, the mark's scrub at 0 and the bytes as they were
      drainSpool(state, { warn: () => {}, now: () => T, log: noScrub });
    } finally {
      log.close();
    }
    const seg = onlySegment(state);
    writeFileSync(seg, Buffer.concat(recs.map((r) => r.bytes)));
    setMtime(seg, T - 1_000);
    const name = seg.split('/').pop() as string;
    // fresh: wiped, kept
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 0, alreadyPresent: 0 });
    expect(zeros(readFileSync(seg))).toBe(true);
    expect(scrubs(state)).toEqual([{ name, done: statSync(seg).size, scrubbed: statSync(seg).size }]);
    // quiet: removed
    setMtime(seg, T - 1_000);
    expect(drainSpool(state, { warn: () => {}, now: () => T + QUIET_MS + 1_000 })).toMatchObject({ drained: 0, alreadyPresent: 0 });
    expect(existsSync(seg)).toBe(false);
    expect(ids(state)).toEqual(sorted(recs.map((r) => r.id)));
  });

  it('overwrites bytes it kept in rejected/ in the segment too, the copy in rejected/ staying as it came', () => {
    const T = Date.now();
    const state = tempDir();
    const a = secretRecord(1);
    const junk = Buffer.from(`stray password=${PASSWORD}\n`);
    append(liveLog(state), a, junk, toolRecord(2));
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 2, rejected: 1 });
    expect(zeros(readFileSync(onlySegment(state)))).toBe(true);
    const segName = segments(state)[0] as string;
    expect(readFileSync(join(rejectedDirOf(state), `${segName}-at-${a.bytes.length}.event`))).toEqual(junk);
  });
});

describe('segment removal', () => {
  it('removes a quiet segment read to its end, and keeps a fresh one', () => {
    const T = Date.now();
    const state = tempDir();
    const a = [toolRecord(1), toolRecord(2)];
    append(liveLog(state), ...a);
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 2 });
    const old = onlySegment(state);
    const oldName = old.split('/').pop() as string;
    // fresh: kept, though read to its end
    expect(drainSpool(state, { warn: () => {}, now: () => T + 1_000 })).toMatchObject({ drained: 0 });
    expect(existsSync(old)).toBe(true);

    const b = [toolRecord(3)];
    append(liveLog(state), ...b);
    setMtime(old, T - 1_000);
    const later = T + QUIET_MS + 1_000;
    expect(drainSpool(state, { warn: () => {}, now: () => later })).toMatchObject({ drained: 1, alreadyPresent: 0 });
    expect(existsSync(old)).toBe(false);
    const left = segments(state);
    expect(left).toHaveLength(1);
    expect(left[0]).not.toBe(oldName);
    expect(marks(state)).toEqual([{ name: left[0], done: statSync(join(state, 'spool', left[0] as string)).size }]);
    expect(ids(state)).toEqual(sorted([...a, ...b].map((r) => r.id)));
  });

  it('keeps a segment sealed long ago while it was written to in the last 60 s', () => {
    const T = Date.now();
    const state = tempDir();
    append(liveLog(state), toolRecord(1));
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 1 });
    const seg = onlySegment(state);
    const late = toolRecord(2);
    append(seg, late);
    setMtime(seg, T + QUIET_MS); // written 1 s before the drain below
    expect(drainSpool(state, { warn: () => {}, now: () => T + QUIET_MS + 1_000 })).toMatchObject({ drained: 1 });
    expect(existsSync(seg)).toBe(true);
  });
});

describe('what is not a record of the spool log', () => {
  it('reads nothing through an events.log that is a symlink, and does not throw', () => {
    const T = Date.now();
    const state = tempDir();
    const outside = tempDir();
    const target = join(outside, 'elsewhere.log');
    const recs = [toolRecord(1), toolRecord(2)];
    append(target, ...recs);
    const before = readFileSync(target);
    symlinkSync(target, liveLog(state));
    const counts = drainSpool(state, { warn: () => {}, now: () => T });
    expect(counts).toMatchObject({ drained: 0, rejected: 0, alreadyPresent: 0 });
    expect(readFileSync(target)).toEqual(before);
    expect(lstatSync(liveLog(state)).isSymbolicLink()).toBe(true);
    expect(segments(state)).toEqual([]);
    expect(existsSync(join(state, 'events.db')) ? ids(state) : []).toEqual([]);
  });

  it('reads nothing through a segment name that is a symlink', () => {
    const T = Date.now();
    const state = tempDir();
    const outside = tempDir();
    const target = join(outside, 'elsewhere.log');
    append(target, toolRecord(1), toolRecord(2));
    const before = readFileSync(target);
    symlinkSync(target, join(spoolDir(state), '1763806500000000-1.seg'));
    const real = toolRecord(3);
    append(liveLog(state), real); // so the drain has a real segment to read too
    expect(() => drainSpool(state, { warn: () => {}, now: () => T })).not.toThrow();
    expect(ids(state)).toEqual([real.id]);
    expect(readFileSync(target)).toEqual(before);
  });

  it('logs records and classic <id>.event files side by side', () => {
    const T = Date.now();
    const state = tempDir();
    const files = [0, 1, 2].map((i) =>
      writeSpoolFile(state, {
        event: 'PostToolUse',
        payload: JSON.stringify({ session_id: 'mix', hook_event_name: 'PostToolUse', tool_name: 'Read', tool_use_id: `f${i}` }),
      }).replace(/\.event$/, ''),
    );
    const recs = [toolRecord(1), toolRecord(2), toolRecord(3), toolRecord(4)];
    append(liveLog(state), ...recs);
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 7, rejected: 0, alreadyPresent: 0 });
    expect(ids(state)).toEqual(sorted([...files, ...recs.map((r) => r.id)]));
    expect(spoolEventFiles(state)).toEqual([]);
    expect(
      rows(state)
        .filter((r) => r.tool_name === 'Read')
        .map((r) => r.tool_use_id)
        .sort(),
    ).toEqual(['f0', 'f1', 'f2']);
  });

  it('redacts the payload of a record with the default rules', () => {
    const T = Date.now();
    const state = tempDir();
    // under a sensitive key any value is redacted; in free text, a key the openai_key pattern knows
    // (sk- and 20+ characters with a digit and a letter: test/redact.test.ts, helpers/secrets.ts)
    const underKey = 'sk-abcdefghijklmnopqrstuvwx';
    const inText = 'sk-4bcdefgh1jklmnopqrstuvwx9yz';
    const r = record(
      JSON.stringify({
        session_id: 'red',
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'deploy', api_key: underKey },
        tool_response: { stdout: `key is ${inText}` },
      }),
      { event: 'PostToolUse' },
    );
    append(liveLog(state), r);
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 1, rejected: 0 });
    const [row] = rows(state);
    expect(row?.id).toBe(r.id);
    for (const secret of [underKey, inText]) expect(row?.payload).not.toContain(secret.slice(3, 20));
    const payload = JSON.parse(row?.payload as string) as { tool_input: { api_key: string; command: string }; tool_response: { stdout: string } };
    expect(payload.tool_input.api_key).toBe('[REDACTED:api_key]');
    expect(payload.tool_input.command).toBe('deploy');
    expect(payload.tool_response.stdout).toBe('key is [REDACTED:openai_key]');
    // nor anywhere in the database files
    withLog(state, (log) => log.db.pragma('wal_checkpoint(TRUNCATE)'));
    const db = Buffer.concat(
      readdirSync(state)
        .filter((f) => f.startsWith('events.db'))
        .map((f) => readFileSync(join(state, f))),
    );
    expect(db.includes(Buffer.from('[REDACTED:api_key]'))).toBe(true);
    for (const secret of [underKey, inText]) expect(db.includes(Buffer.from(secret))).toBe(false);
  });

  it('hasState is true with only spool/events.log, or only a segment, and false with neither', () => {
    const state = tempDir();
    spoolDir(state);
    expect(hasState(state)).toBe(false);
    append(liveLog(state), toolRecord(1));
    expect(hasState(state)).toBe(true);
    expect(existsSync(join(state, 'events.db'))).toBe(false);
    unlinkSync(liveLog(state));
    writeFileSync(join(spoolDir(state), '1763806500000000-1.seg'), toolRecord(2).bytes);
    expect(hasState(state)).toBe(true);
  });
});

describe('a busy database', () => {
  it('leaves every offset where it was and loses nothing while another connection holds the write lock', () => {
    const T = Date.now();
    const state = tempDir();
    const first = Array.from({ length: 5 }, (_, i) => toolRecord(i));
    append(liveLog(state), ...first);
    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 5 });
    const seg = onlySegment(state);
    const segName = seg.split('/').pop() as string;
    const before = marks(state);
    expect(before).toEqual([{ name: segName, done: statSync(seg).size }]);
    const late = [toolRecord(10), toolRecord(11)];
    append(seg, ...late);
    const fresh = [toolRecord(20), toolRecord(21), toolRecord(22)];
    append(liveLog(state), ...fresh);

    const log = openEventLog(state);
    const blocker = openEventLog(state);
    try {
      blocker.db.exec('BEGIN EXCLUSIVE');
      log.db.pragma('busy_timeout = 0');
      const counts = drainSpool(state, { warn: () => {}, now: () => T, log });
      expect(counts).toMatchObject({ busy: true, drained: 0 });
    } finally {
      if (blocker.db.inTransaction) blocker.db.exec('ROLLBACK');
      blocker.close();
      log.close();
    }
    expect(marks(state)).toEqual(before);
    expect(ids(state)).toEqual(sorted(first.map((r) => r.id)));
    // nothing lost: the live log may have been sealed, but its bytes are all in a segment
    const onDisk = Buffer.concat(segments(state).map((n) => readFileSync(join(state, 'spool', n))));
    for (const r of [...late, ...fresh]) expect(onDisk.includes(r.bytes), r.id).toBe(true);

    expect(drainSpool(state, { warn: () => {}, now: () => T })).toMatchObject({ drained: 5, alreadyPresent: 0, busy: false });
    expect(ids(state)).toEqual(sorted([...first, ...late, ...fresh].map((r) => r.id)));
    for (const m of marks(state)) expect(m.done).toBe(statSync(join(state, 'spool', m.name)).size);
  });

  it('a batch that stays busy in the middle of a segment keeps the offset of the last commit', () => {
    const { T, state, recs } = stateWithLog(25);
    const log = openEventLog(state);
    const busy = wrapLog(log, (call, _batch, _mark, real) => {
      if (call === 1) throw busyError();
      return real();
    });
    try {
      expect(drainSpool(state, { warn: () => {}, now: () => T, batchSize: 10, log: busy })).toMatchObject({ busy: true, drained: 10 });
    } finally {
      log.close();
    }
    const segName = segments(state)[0] as string;
    expect(marks(state)).toEqual([{ name: segName, done: recs.slice(0, 10).reduce((n, r) => n + r.bytes.length, 0) }]);
    expect(ids(state)).toEqual(sorted(recs.slice(0, 10).map((r) => r.id)));
    expect(drainSpool(state, { warn: () => {}, now: () => T, batchSize: 10 })).toMatchObject({ drained: 15, alreadyPresent: 0, busy: false });
    expect(ids(state)).toEqual(sorted(recs.map((r) => r.id)));
  });
});

// A record cut short whose named length ends on the next record's newline: the next record, whole
// and valid, is logged (an early scanAt rejected it together with the cut one).
describe("a record cut short so that its named length ends on the next record's newline", () => {
  it('the whole record after it is logged; only the cut one lands in rejected/', () => {
    const T = Date.now();
    const state = tempDir();
    const cut = toolRecord(1, 'p'.repeat(600));
    const next = toolRecord(2);
    const last = toolRecord(3);
    const payloadAt = cut.bytes.indexOf(0x1f) + 1;
    const payloadLength = cut.bytes.length - payloadAt - 1; // less its \n
    // written: k payload bytes of `cut`, so its named end is the last byte of `next`
    const k = payloadLength - next.bytes.length;
    expect(k).toBeGreaterThan(0);
    const cutBytes = cut.bytes.subarray(0, payloadAt + k);
    append(liveLog(state), cutBytes, next, last);
    const counts = drainSpool(state, { warn: () => {}, now: () => T });
    const segName = segments(state)[0] as string;
    expect(ids(state)).toEqual(sorted([next.id, last.id]));
    expect(counts).toMatchObject({ drained: 2, rejected: 1 });
    expect(readFileSync(join(rejectedDirOf(state), `${segName}-at-0.event`))).toEqual(Buffer.from(cutBytes));
  });
});
