/**
 * The metrics rollups (src/log/rollups.ts) against the definitions they replace: on
 * random logs inserted in random batches, out of order and with duplicates, every count equals
 * what the SQL over the raw events gives, the median is within 1% of the exact one, and stagnation
 * equals a replay of each session's calls. A log written at schema version 5 migrates to the same
 * rollups.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS, openEventLog, SCHEMA_VERSION, sqliteDriver, type Database } from '../src/log/event-log.js';
import type { EventRow } from '../src/events.js';
import { STAGNATION_THRESHOLD } from '../src/loops/metrics-core.js';
import { gatherMetricsData } from '../src/loops/metrics-store.js';
import { planWindow } from '../src/loops/metrics-window.js';
import { callSignature } from '../src/log/stagnation.js';
import { bucketOf, DenseHistogram, medianFromBuckets } from '../src/log/histogram.js';
import { median } from '../src/loops/metrics-core.js';
import { isoMicros } from '../src/since.js';
import { eventsDbPathOf } from '../src/state-dir.js';
import { cleanupTempDirs, DIST, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const HOUR = 3_600_000;
const T0 = Date.parse('2026-11-20T00:00:00Z');

/** The definitions as they were computed before the rollups, over the raw events. */
const TOOL_WINDOW = "FROM events WHERE type IN ('tool.executed', 'tool.failed') AND ts >= ? AND ts <= ?";
const REF_COUNTS = `SELECT coalesce(tool_name, '(unknown)') AS tool, sum(type = 'tool.executed') AS ok, sum(type = 'tool.failed') AS failed,
  count(duration_ms) AS timed, coalesce(sum(duration_ms), 0) AS duration_sum ${TOOL_WINDOW} GROUP BY 1 ORDER BY 1`;
const REF_DURATIONS = `SELECT coalesce(tool_name, '(unknown)') AS tool, duration_ms AS d ${TOOL_WINDOW} AND duration_ms IS NOT NULL`;
const REF_SESSIONS = "SELECT count(DISTINCT session_id) FROM events WHERE session_id IS NOT NULL AND session_id <> 'unknown' AND ts >= ? AND ts <= ?";
const REF_STAGNATION_SQL = `WITH calls AS (
  SELECT coalesce(session_id, '') AS s, ts, id, type,
         coalesce(tool_name, '') || char(0) || coalesce(json_extract(payload, '$.tool_input'), '') AS sig
  ${TOOL_WINDOW} AND json_valid(payload)),
runs AS (
  SELECT s, sig, type,
         row_number() OVER (PARTITION BY s ORDER BY ts, id) - row_number() OVER (PARTITION BY s, sig, type ORDER BY ts, id) AS island
  FROM calls)
SELECT count(*) FROM (SELECT 1 FROM runs WHERE type = 'tool.failed' GROUP BY s, sig, island HAVING count(*) >= ${STAGNATION_THRESHOLD})`;

/** Stagnation by its window rule: runs whose 3rd consecutive same failing call is in [since, until]. */
function refStagnation(db: Database, since: string, until: string): number {
  const calls = db
    .prepare(
      "SELECT coalesce(session_id, '') AS s, ts, id, type, tool_name, payload FROM events WHERE type IN ('tool.executed', 'tool.failed') ORDER BY s, ts, id",
    )
    .all() as Array<{ s: string; ts: string; id: string; type: string; tool_name: string | null; payload: string }>;
  let count = 0;
  let session: string | undefined;
  let sig: string | undefined;
  let len = 0;
  for (const c of calls) {
    if (c.s !== session) {
      session = c.s;
      len = 0;
    }
    if (c.type === 'tool.executed') {
      len = 0;
      continue;
    }
    const s = callSignature(c.tool_name, c.payload);
    if (s === undefined) continue;
    len = len > 0 && s === sig ? len + 1 : 1;
    sig = s;
    if (len === STAGNATION_THRESHOLD && c.ts >= since && c.ts <= until) count += 1;
  }
  return count;
}

/** A small seeded generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

const TOOLS = ['Bash', 'Edit', 'Read', null] as const;
const SESSIONS = ['s1', 's2', 's3', 'unknown', '', null] as const;

function randomLog(rnd: () => number, n: number): EventRow[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const rows: EventRow[] = [];
  let at = T0 + Math.floor(rnd() * HOUR);
  for (let i = 0; i < n; i++) {
    at += Math.floor(rnd() * 20 * 60_000); // ~3 days for 500 events, same times now and then
    const kind = rnd();
    const type: EventRow['type'] = kind < 0.3 ? 'tool.executed' : kind < 0.9 ? 'tool.failed' : kind < 0.96 ? 'turn.stopped' : 'notification';
    const tool = type.startsWith('tool.') ? (rnd() < 0.7 ? 'Bash' : pick(TOOLS)) : null;
    const r = rnd();
    const duration = !type.startsWith('tool.') || r < 0.1 ? null : r < 0.15 ? 0 : r < 0.2 ? Math.floor(rnd() * 40) + 0.5 : Math.floor(Math.exp(rnd() * 10));
    const input = rnd() < 0.7 ? { command: 'npm test' } : pick([{ command: 'npm run lint' }, 'raw text']);
    const payload = rnd() < 0.05 ? JSON.stringify('{"tool_name": "Bash", "tool_inp') : JSON.stringify({ tool_name: tool, tool_input: input });
    rows.push({
      id: `${String(at * 1000).padStart(16, '0')}-${i}-${Math.floor(rnd() * 0xffff).toString(16)}`,
      session_id: pick(SESSIONS),
      agent_id: null,
      ts: isoMicros(at),
      runtime: 'claude-code',
      type,
      hook_event: null,
      tool_name: tool,
      tool_use_id: null,
      duration_ms: duration,
      cwd: null,
      payload,
      truncated: 0,
    });
  }
  return rows;
}

/** Inserts `rows` shuffled locally (out of order across batches), in random batches, with re-sent duplicates. */
function insertMessily(rnd: () => number, insert: (rows: EventRow[]) => void, rows: EventRow[]): void {
  const order = [...rows];
  for (let i = 0; i < order.length; i++) {
    const j = Math.min(order.length - 1, i + Math.floor(rnd() * 6));
    [order[i], order[j]] = [order[j] as EventRow, order[i] as EventRow];
  }
  for (let i = 0; i < order.length; ) {
    const size = 1 + Math.floor(rnd() * 60);
    const batch = order.slice(i, i + size);
    if (i > 0 && rnd() < 0.3) batch.push(order[Math.floor(rnd() * i)] as EventRow); // a re-drained duplicate
    insert(batch);
    i += size;
  }
}

function expectSameAsRaw(db: Database, since: string, until: string): void {
  const got = gatherMetricsData(db, since, until);
  const label = `[${since}, ${until}]`;
  const counts = db.prepare(REF_COUNTS).all(since, until) as Array<{ tool: string; ok: number; failed: number; timed: number; duration_sum: number }>;
  const tools = [...got.tools].sort((a, b) => (a.tool < b.tool ? -1 : 1));
  expect(
    tools.map(({ duration_median: _m, ...c }) => c),
    label,
  ).toEqual(counts);
  const durations = db.prepare(REF_DURATIONS).all(since, until) as Array<{ tool: string; d: number }>;
  for (const t of tools) {
    const exact = median(durations.filter((d) => d.tool === t.tool).map((d) => d.d));
    if (exact === null || t.duration_median === null) expect(t.duration_median, `${label} ${t.tool}`).toBe(exact);
    else expect(Math.abs(t.duration_median - exact), `${label} ${t.tool}: ${t.duration_median} vs ${exact}`).toBeLessThanOrEqual(Math.max(exact * 0.01, 0.5));
  }
  expect(got.sessions, label).toBe(Number(db.prepare(REF_SESSIONS).pluck().get(since, until)));
  expect(got.stagnant_runs, label).toBe(refStagnation(db, since, until));
}

/** Windows with edges anywhere: inside one hour, on hour and day boundaries, across days. */
function windows(rnd: () => number): Array<[string, string]> {
  const out: Array<[string, string]> = [
    [isoMicros(T0 - 10 * 24 * HOUR), isoMicros(T0 + 10 * 24 * HOUR)],
    [isoMicros(T0 + 24 * HOUR), isoMicros(T0 + 48 * HOUR)],
    [isoMicros(T0 + 5 * HOUR), isoMicros(T0 + 53 * HOUR)],
    [isoMicros(T0 + 5 * HOUR + 60_000), isoMicros(T0 + 5 * HOUR + 50 * 60_000)],
    [isoMicros(T0 + 5 * HOUR + 60_000), isoMicros(T0 + 6 * HOUR + 50 * 60_000)],
  ];
  for (let i = 0; i < 12; i++) {
    const a = T0 + Math.floor(rnd() * 80 * HOUR);
    out.push([isoMicros(a), isoMicros(a + Math.floor(rnd() * 70 * HOUR))]);
  }
  return out;
}

describe('the rollups give what the raw events give', () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`random log #${seed}: counts, sessions and stagnation exact, medians within 1%, in every window`, () => {
      const rnd = random(seed);
      const log = openEventLog(tempDir());
      try {
        insertMessily(rnd, (rows) => log.insertBatch(rows), randomLog(rnd, 500));
        for (const [since, until] of windows(rnd)) expectSameAsRaw(log.db, since, until);
        // Over a window holding every event, stagnation is the SQL definition it replaces.
        const all = [isoMicros(T0 - 10 * 24 * HOUR), isoMicros(T0 + 10 * 24 * HOUR)] as const;
        const runs = gatherMetricsData(log.db, ...all).stagnant_runs;
        expect(runs).toBe(
          Number(
            log.db
              .prepare(REF_STAGNATION_SQL)
              .pluck()
              .get(...all),
          ),
        );
        expect(runs).toBeGreaterThan(5); // the fixture is meant to stagnate
      } finally {
        log.close();
      }
    });
  }

  it('stagnation window rule: a run counts when its 3rd consecutive failure is in the window', () => {
    const log = openEventLog(tempDir());
    try {
      const fail = (i: number, minutes: number): EventRow => ({
        id: `${String((T0 + minutes * 60_000) * 1000).padStart(16, '0')}-${i}-a`,
        session_id: 's',
        agent_id: null,
        ts: isoMicros(T0 + minutes * 60_000),
        runtime: 'claude-code',
        type: 'tool.failed',
        hook_event: null,
        tool_name: 'Bash',
        tool_use_id: null,
        duration_ms: 5,
        cwd: null,
        payload: '{"tool_input":{"command":"make"}}',
        truncated: 0,
      });
      // failures at minutes 10, 20, 30, 40: one run, recorded at minute 30.
      log.insertBatch([fail(1, 10), fail(2, 20), fail(3, 30), fail(4, 40)]);
      const at = (m: number) => isoMicros(T0 + m * 60_000);
      expect(gatherMetricsData(log.db, at(25), at(50)).stagnant_runs).toBe(1); // began before the window: counted
      expect(gatherMetricsData(log.db, at(0), at(29)).stagnant_runs).toBe(0); // its 3rd failure is later
      expect(gatherMetricsData(log.db, at(35), at(50)).stagnant_runs).toBe(0); // 3 failures were reached before
    } finally {
      log.close();
    }
  });
});

describe('the window plan', () => {
  it('splits [since, until] into edge ranges, whole hours and whole days that meet exactly', () => {
    expect(planWindow('2026-11-18T10:06:34.203000Z', '2026-11-25T10:06:34.203000Z')).toEqual({
      r1Lo: '2026-11-18T10:06:34.203000Z',
      r1Hi: '2026-11-18T11',
      h1Lo: '2026-11-18T11',
      h1Hi: '2026-11-19T00',
      dayLo: '2026-11-19',
      dayHi: '2026-11-25',
      h2Lo: '2026-11-25T00',
      h2Hi: '2026-11-25T10',
      r2Lo: '2026-11-25T10',
      r2Hi: '2026-11-25T10:06:34.203000Z',
    });
    // on an hour boundary: that hour is whole; within one hour: all from the events
    expect(planWindow('2026-11-18T00:00:00.000000Z', '2026-11-18T03:00:00.000000Z')).toMatchObject({
      h1Lo: '2026-11-18T00',
      h1Hi: '2026-11-18T03',
      dayLo: '',
      r2Lo: '2026-11-18T03',
    });
    expect(planWindow('2026-11-18T10:01:00.000000Z', '2026-11-18T10:59:00.000000Z')).toMatchObject({
      h1Lo: '',
      dayLo: '',
      r1Lo: '',
      r2Lo: '2026-11-18T10:01:00.000000Z',
      r2Hi: '2026-11-18T10:59:00.000000Z',
    });
    expect(planWindow('yesterday', 'today')).toMatchObject({ h1Lo: '', dayLo: '', r2Lo: 'yesterday', r2Hi: 'today' });
  });
});

describe('the duration histogram', () => {
  it('finds the median within 1% of the exact one, exactly when the middle value is alone or at an end of its bucket', () => {
    const rnd = random(42);
    for (let trial = 0; trial < 200; trial++) {
      const values = Array.from({ length: 1 + Math.floor(rnd() * 300) }, () => (rnd() < 0.5 ? Math.floor(Math.exp(rnd() * 14)) : Math.exp(rnd() * 14)));
      const h = new DenseHistogram();
      for (const v of values) h.addValue(v);
      const exact = median(values) as number;
      const got = h.median() as number;
      expect(Math.abs(got - exact), `${got} vs ${exact}`).toBeLessThanOrEqual(exact * 0.01 + 1e-9);
      // stored and read back: the same buckets
      const back = new DenseHistogram();
      back.addStored(h.encode());
      expect(back.buckets()).toEqual(h.buckets());
    }
    const distinct = new DenseHistogram();
    for (const v of [100, 300, 200, 1000, 0, 0, 7]) distinct.addValue(v);
    expect(distinct.median()).toBe(100);
    expect(medianFromBuckets([])).toBeNull();
  });

  it('buckets are 2% wide and ordered like the values', () => {
    expect(bucketOf(0)).toBeLessThan(bucketOf(1));
    expect(bucketOf(-5)).toBeLessThan(bucketOf(0));
    for (let v = 1; v < 1e7; v *= 1.37) {
      const b = bucketOf(v);
      expect(1.02 ** b).toBeLessThanOrEqual(v * (1 + 1e-12));
      expect(1.02 ** (b + 1)).toBeGreaterThan(v * (1 - 1e-12));
      expect(bucketOf(v * 1.001)).toBeGreaterThanOrEqual(b);
    }
  });

  it('stores whole milliseconds as varints and anything else as float64', () => {
    const whole = new DenseHistogram();
    for (const v of [0, 1, 5, 5, 120, 2 ** 40]) whole.addValue(v);
    expect(whole.encode()[0]).toBe(1);
    const fractional = new DenseHistogram();
    for (const v of [0.5, 3.25, 7]) fractional.addValue(v);
    const blob = fractional.encode();
    expect(blob[0]).toBe(2);
    const back = new DenseHistogram();
    back.addStored(blob);
    expect(back.buckets()).toEqual(fractional.buckets());
  });
});

describe('migration 6: a log written at version 5 gets the same rollups', () => {
  it('backfills the rollups from the events, and later inserts continue from them', () => {
    const rnd = random(7);
    const rows = randomLog(rnd, 600);
    const first = rows.slice(0, 400);
    const later = rows.slice(400);
    // A version-5 log with the first rows, written as the older version wrote them (no rollups).
    const oldDir = tempDir();
    openEventLog(oldDir).close(); // creates the folder and file
    {
      const Driver = sqliteDriver();
      const path = eventsDbPathOf(oldDir);
      rmSync(path);
      const db = new Driver(path);
      for (const m of MIGRATIONS.slice(0, 5)) db.exec(m as string);
      db.pragma('user_version = 5');
      const insert = db.prepare(
        'INSERT OR IGNORE INTO events (id, session_id, agent_id, ts, runtime, type, hook_event, tool_name, tool_use_id, duration_ms, cwd, payload, truncated) VALUES (@id, @session_id, @agent_id, @ts, @runtime, @type, @hook_event, @tool_name, @tool_use_id, @duration_ms, @cwd, @payload, @truncated)',
      );
      for (const r of first) insert.run(r);
      db.close();
    }
    const upgraded = openEventLog(oldDir);
    const fresh = openEventLog(tempDir());
    try {
      expect(typeof MIGRATIONS[5]).toBe('function'); // migration 6: the rollups and their backfill
      expect(upgraded.schemaVersion()).toBe(SCHEMA_VERSION);
      fresh.insertBatch(first);
      const tables = ['tool_hours', 'tool_days', 'session_hours', 'session_days', 'stagnation_streaks', 'stagnant_runs'];
      const dump = (db: Database) => Object.fromEntries(tables.map((t) => [t, db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2`).all()]));
      const decoded = (db: Database) =>
        (db.prepare('SELECT hour, tool, durations FROM tool_hours ORDER BY 1, 2').all() as Array<{ hour: string; tool: string; durations: Uint8Array }>).map(
          (r) => {
            const h = new DenseHistogram();
            h.addStored(r.durations);
            return [r.hour, r.tool, h.buckets()];
          },
        );
      expect(decoded(upgraded.db)).toEqual(decoded(fresh.db));
      const withoutBlobs = (db: Database) => JSON.stringify(dump(db), (k, v) => (k === 'durations' ? undefined : v));
      expect(withoutBlobs(upgraded.db)).toBe(withoutBlobs(fresh.db));
      insertMessily(rnd, (batch) => upgraded.insertBatch(batch), later);
      insertMessily(rnd, (batch) => fresh.insertBatch(batch), later);
      for (const [since, until] of windows(rnd)) {
        expectSameAsRaw(upgraded.db, since, until);
        expect(gatherMetricsData(upgraded.db, since, until)).toEqual(gatherMetricsData(fresh.db, since, until));
      }
    } finally {
      upgraded.close();
      fresh.close();
    }
  });
});

/** Inserts batches of 40 calls (with 10 re-sent earlier ones) into the log until killed. */
const INSERTER = `
const [url, dir, t0] = process.argv.slice(1);
const { openEventLog } = await import(url);
const log = openEventLog(dir);
const iso = (ms) => new Date(ms).toISOString().slice(0, 23) + '000Z';
const row = (k) => {
  const h = (k * 2654435761) % 1000;
  const at = Number(t0) + k * 7_000;
  return { id: String(at * 1000).padStart(16, '0') + '-' + k + '-k', session_id: 's' + (k % 3), agent_id: null, ts: iso(at), runtime: 'claude-code',
    type: h < 600 ? 'tool.failed' : 'tool.executed', hook_event: null, tool_name: k % 11 === 0 ? 'Edit' : 'Bash', tool_use_id: null, duration_ms: h % 7 === 0 ? null : h,
    cwd: null, payload: JSON.stringify({ tool_input: { command: k % 5 === 0 ? 'make test' : 'make' } }), truncated: 0 };
};
for (let k = Math.max(0, log.count() - 25); ; k += 40) {
  const batch = [];
  for (let j = 0; j < 40; j++) batch.push(row(k + j));
  for (let j = 0; j < 10; j++) batch.push(row(Math.max(0, k - 1 - j * 3)));
  log.insertBatch(batch);
  process.stdout.write('.');
}
`;

describe('SIGKILL during inserts', () => {
  it('leaves rollups that agree with the events: a batch and its rollups commit together or not at all', async () => {
    const dir = tempDir();
    openEventLog(dir).close();
    for (let round = 0; round < 4; round++) {
      const child = spawn(process.execPath, ['--input-type=module', '-e', INSERTER, pathToFileURL(join(DIST, 'log', 'event-log.js')).href, dir, String(T0)], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let committed = 0;
      await new Promise<void>((resolve) =>
        child.stdout.on('data', (chunk: Buffer) => {
          committed += chunk.length;
          if (committed >= 3) resolve(); // 3 batches committed, then killed at some point of the next ones
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 30 + round * 60));
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    const log = openEventLog(dir);
    try {
      expect(log.count()).toBeGreaterThan(100);
      const end = isoMicros(T0 + (log.count() + 100) * 7_000);
      expectSameAsRaw(log.db, isoMicros(T0 - HOUR), end);
      expectSameAsRaw(log.db, isoMicros(T0 + 30 * 60_000), end);
      expect(gatherMetricsData(log.db, isoMicros(T0 - HOUR), end).stagnant_runs).toBeGreaterThan(0);
    } finally {
      log.close();
    }
  }, 30_000);
});
