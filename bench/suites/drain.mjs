// Drain throughput, end to end: a backlog of events (the fixture payload shapes, round robin) already
// on disk as the event hook spools them, drained by `forge-reflect ingest` started as a user starts
// it (CLI start, read, parse, redact, insert). Targets (issue 12): >= 20,000 events/s over 10,000
// events, taken as a ratio to node -e 0 as the issue asks of its targets (below), both for records
// of the spool log and for a file each; the first `events` after a 100,000-event backlog <= 5 s
// (kept absolute: the stricter reading here, where 5 s is ~70 node starts, not the issue's ~227)
// and <= 150 MiB. Every run checks that the log then holds every event. Context: the CLI start of an
// empty ingest.
// A drain of many files lists them for a detached remover that unlinks them after the command
// returns (src/log/drained-lists.ts): each run waits for that removal before the next one starts, and
// its time is printed beside, as context.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const Sqlite = createRequire(import.meta.url)('better-sqlite3');

export const name = 'drain';
export const describe = 'spool → SQLite throughput, and the CLI start of ingest';

/** The reference payloads, compact (one line, as the runtimes send them); the files are pretty-printed. */
function payloads(root) {
  const dir = join(root, 'tests/fixtures/payloads');
  const read = (d) =>
    readdirSync(d)
      .filter((f) => f.endsWith('.json'))
      .map((f) => Buffer.from(JSON.stringify(JSON.parse(readFileSync(join(d, f), 'utf8')))));
  return [...read(dir), ...read(join(dir, 'other-runtimes'))];
}

/**
 * A backlog of `n` events as the event hook leaves it (docs/spool-format.md): `log`, records in
 * spool/events.log (a payload that fits: one line, the record at most 4,000 bytes, as every
 * reference payload does once compact); `files`, one spool file per event (a longer or multi-line
 * payload, and every Stop-hook event).
 */
function spool(stateDir, shapes, n, shape) {
  const dir = join(stateDir, 'spool');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let us = 1_763_806_500_000_000;
  const records = [];
  for (let i = 0; i < n; i += 1) {
    us += 7;
    const id = `${String(us).padStart(16, '0')}-4242-${(i & 0xffff).toString(16).padStart(4, '0')}`;
    const payload = shapes[i % shapes.length];
    const fields = { v: 1, source: 'event-hook', event: 'PostToolUse', received_us: us, pid: 4242, cwd: '/home/dev/acme-app', cap: 1048576 };
    if (shape === 'files') {
      writeFileSync(join(dir, `${id}.event`), Buffer.concat([Buffer.from(`${JSON.stringify(fields)}\n`), payload]), { mode: 0o600 });
    } else {
      records.push(Buffer.from(`\x1e${JSON.stringify({ ...fields, bytes: payload.length, id })}\x1f`), payload, Buffer.from('\n'));
    }
  }
  if (records.length > 0) writeFileSync(join(dir, 'events.log'), Buffer.concat(records), { mode: 0o600 });
}

export async function run(ctx) {
  const { root, quick, runs, nodeBaseline, timeProcess, medianOf, lastBaseline, median } = ctx;
  const shapes = payloads(root);
  const cli = join(root, 'packages/forge-reflect/bin/forge-reflect.js');
  const rss = join(root, 'bench/peak-rss.cjs');
  /** One CLI run over a fresh backlog of `n` spool files: wall ms and peak RSS (MiB). */
  const backlog = (n, argv, shape = 'log') => {
    const state = mkdtempSync(join(tmpdir(), 'forge-bench-drain-'));
    try {
      spool(state, shapes, n, shape);
      spawnSync('sync'); // the spool's dirty pages written out before the timing
      const rssFile = join(state, 'rss.txt');
      const r = timeProcess(process.execPath, ['--require', rss, cli, ...argv], {
        env: { ...process.env, FORGE_DIR: state, FORGE_BENCH_RSS_FILE: rssFile, NO_COLOR: '1' },
      });
      if (r.status !== 0) throw new Error(`forge-reflect ${argv.join(' ')} failed in the benchmark`);
      const spoolDir = join(state, 'spool');
      const db = new Sqlite(join(state, 'events.db'), { readonly: true });
      const count = db.prepare('SELECT count(*) FROM events').pluck().get();
      db.close();
      if (count !== n) throw new Error(`forge-reflect ${argv.join(' ')} logged ${count} of ${n} events`);
      // The launcher waits for the background remover (untimed) and says how long it ran on; without
      // it (no python3), the lists it removes last are watched until they are gone.
      let removalMs = r.settleMs;
      if (typeof removalMs !== 'number') {
        const lists = join(spoolDir, '.drained');
        const listed = () => (existsSync(lists) ? readdirSync(lists).length : 0);
        const returned = process.hrtime.bigint();
        while (listed() > 0) spawnSync('sleep', ['0.02']);
        removalMs = Number(process.hrtime.bigint() - returned) / 1e6;
      }
      // Then nothing is left: every file drained and removed.
      const left = readdirSync(spoolDir).filter((f) => f.endsWith('.event') || f === 'events.log').length;
      if (left !== 0) throw new Error(`${left} spool files left after forge-reflect ${argv.join(' ')} and its remover`);
      return { ms: r.ms, mib: Number(readFileSync(rssFile, 'utf8')) / 1024, removalMs };
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  };
  const n = quick ? 2_000 : 10_000;
  // The target, 20,000 events/s, was set on a machine where a clean node -e 0 took 22 ms,
  // and it asks for every target as a ratio to that baseline in the same run: 20,000/s x 22 ms =
  // 440 events drained in the time of one node start. Each run's rate is multiplied by a node -e 0
  // timed right after it; the events/s themselves are printed beside, as measured.
  const PER_START_TARGET = 440;
  /** Rates of `count` runs over fresh backlogs of `shape`, with the same rate in node -e 0 starts. */
  const drains = (count, shape) => {
    const rates = [];
    const perStart = [];
    const removals = [];
    for (let r = 0; r < count; r += 1) {
      const run = backlog(n, ['ingest'], shape);
      const rate = n / (run.ms / 1000);
      rates.push(rate);
      perStart.push(rate * (timeProcess(process.execPath, ['-e', '0']).ms / 1000));
      removals.push(run.removalMs);
    }
    return { rate: median(rates), perStart: median(perStart), removal: median(removals) };
  };
  const count = Math.min(runs, quick ? 3 : 11); // a median of >= 11 runs (issue 12), each over a fresh backlog
  const log = drains(count, 'log');
  // The same count of events, each in a spool file of its own: the issue's own case (a payload the
  // log does not take is spooled so today).
  const files = drains(count, 'files');
  const N = n.toLocaleString('en-US');
  const rows = [
    {
      what: `drain, ${N} events on disk as the hook spools them (the spool log), end to end (ingest): events per node -e 0 start`,
      rate: log.perStart,
      unit: 'events',
      target: `>= ${PER_START_TARGET} (20,000/s where node -e 0 took 22 ms)`,
      met: log.perStart >= PER_START_TARGET,
    },
    { what: '  the same, in events/s', rate: log.rate, unit: 'events/s', target: 'context (20,000/s as the issue wrote it, for its 22 ms node)' },
    {
      what: `drain, the same ${N} events as one spool file each: events per node -e 0 start`,
      rate: files.perStart,
      unit: 'events',
      target: `>= ${PER_START_TARGET} (20,000/s where node -e 0 took 22 ms)`,
      met: files.perStart >= PER_START_TARGET,
    },
    { what: '  the same, in events/s', rate: files.rate, unit: 'events/s', target: 'context (20,000/s as the issue wrote it, for its 22 ms node)' },
    { what: '  then those files removed by the background remover', median_ms: files.removal, target: 'context (after ingest returned)' },
  ];
  if (quick) rows.push({ what: 'first events after a 100,000-event backlog', skipped: 'quick mode spools no 100,000 events' });
  else {
    const big = Array.from({ length: Math.min(runs, 11) }, () => backlog(100_000, ['events', '--limit', '20']));
    const ms = median(big.map((b) => b.ms));
    const mib = Math.max(...big.map((b) => b.mib));
    rows.push({ what: 'first events after a 100,000-event backlog', median_ms: ms, ratio: ms / nodeBaseline, target: '<= 5 s', met: ms <= 5_000 });
    rows.push({ what: 'first events after 100,000: peak memory', rate: mib, unit: 'MiB', target: '<= 150 MiB', met: mib <= 150 });
  }
  const state = mkdtempSync(join(tmpdir(), 'forge-bench-ingest-'));
  try {
    const ingest = medianOf(runs, () => timeProcess(process.execPath, [cli, 'ingest'], { env: { ...process.env, FORGE_DIR: state } }).ms);
    rows.push({ what: 'forge-reflect ingest, empty spool (CLI start)', median_ms: ingest, ratio: ingest / lastBaseline(), target: 'none (context)' });
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
  return rows;
}
