// Drain throughput, end to end: a backlog of spool files (the fixture payload shapes, round robin)
// already on disk, drained by `forge-reflect ingest` started as a user starts it (CLI start, read,
// parse, redact, insert, unlink). Targets (issue 12): >= 20,000 events/s over 10,000 files; the first
// `events` after a 100,000-event backlog <= 5 s and <= 150 MiB. Also the CLI start of an empty ingest.
// A drain of many files renames them into a trash folder that a detached `rm` removes after the
// command returns (src/spool-trash.ts): each run waits for that removal before the next one starts,
// and its time is printed beside, as context.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const name = 'drain';
export const describe = 'spool → SQLite throughput, and the CLI start of ingest';

function payloads(root) {
  const dir = join(root, 'tests/fixtures/payloads');
  const read = (d) => readdirSync(d).filter((f) => f.endsWith('.json')).map((f) => readFileSync(join(d, f)));
  return [...read(dir), ...read(join(dir, 'other-runtimes'))];
}

function spool(stateDir, shapes, n) {
  const dir = join(stateDir, 'spool');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let us = 1_763_806_500_000_000;
  for (let i = 0; i < n; i += 1) {
    us += 7;
    const envelope = JSON.stringify({ v: 1, source: 'event-hook', event: 'PostToolUse', received_us: us, pid: 4242, cwd: '/home/dev/acme-app', cap: 1048576 });
    const name = `${String(us).padStart(16, '0')}-4242-${(i & 0xffff).toString(16).padStart(4, '0')}.event`;
    writeFileSync(join(dir, name), Buffer.concat([Buffer.from(`${envelope}\n`), shapes[i % shapes.length]]), { mode: 0o600 });
  }
}

export async function run(ctx) {
  const { root, quick, runs, nodeBaseline, timeProcess, medianOf, lastBaseline, median } = ctx;
  const shapes = payloads(root);
  const cli = join(root, 'packages/forge-reflect/bin/forge-reflect.js');
  const rss = join(root, 'bench/peak-rss.cjs');
  /** One CLI run over a fresh backlog of `n` spool files: wall ms and peak RSS (MiB). */
  const backlog = (n, argv) => {
    const state = mkdtempSync(join(tmpdir(), 'forge-bench-drain-'));
    try {
      spool(state, shapes, n);
      spawnSync('sync'); // the spool's dirty pages written out before the timing
      const rssFile = join(state, 'rss.txt');
      const r = timeProcess(process.execPath, ['--require', rss, cli, ...argv], { env: { ...process.env, FORGE_DIR: state, FORGE_BENCH_RSS_FILE: rssFile, NO_COLOR: '1' } });
      if (r.status !== 0) throw new Error(`forge-reflect ${argv.join(' ')} failed in the benchmark`);
      const spoolDir = join(state, 'spool');
      const left = readdirSync(spoolDir).filter((f) => f.endsWith('.event')).length;
      if (left !== 0) throw new Error(`${left} spool files left after forge-reflect ${argv.join(' ')}`);
      const trash = readdirSync(spoolDir).filter((f) => f.startsWith('.drained-')).map((f) => join(spoolDir, f));
      const returned = process.hrtime.bigint();
      while (trash.some((dir) => existsSync(dir))) spawnSync('sleep', ['0.02']);
      const removalMs = Number(process.hrtime.bigint() - returned) / 1e6;
      return { ms: r.ms, mib: Number(readFileSync(rssFile, 'utf8')) / 1024, removalMs };
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  };
  const n = quick ? 2_000 : 10_000;
  const rates = [];
  const perStart = [];
  const removals = [];
  // Target figures: a median of >= 11 runs (issue 12), each over a fresh backlog.
  for (let r = 0; r < Math.min(runs, quick ? 3 : 11); r += 1) {
    const run = backlog(n, ['ingest']);
    const seconds = run.ms / 1000;
    rates.push(n / seconds);
    removals.push(run.removalMs);
    // Events drained in the time one node -e 0 takes, timed right after: the rate in this machine's units.
    perStart.push((n / seconds) * (timeProcess(process.execPath, ['-e', '0']).ms / 1000));
  }
  const rate = median(rates);
  const rows = [
    { what: `drain, ${n.toLocaleString('en-US')} files on disk, end to end (ingest)`, rate, unit: 'events/s', target: '>= 20,000 events/s', met: rate >= 20_000 },
    // The 20,000/s was set where node -e 0 took ~22 ms: 440 events per node start. Context only.
    { what: '  the same, per node -e 0 start', rate: median(perStart), unit: 'events', target: 'context (20,000/s at 22 ms = 440)' },
    { what: '  then the drained files removed by the background rm', median_ms: median(removals), target: 'context (after ingest returned)' },
  ];
  if (quick) rows.push({ what: 'first events after a 100,000-event backlog', skipped: 'quick mode spools no 100,000 files' });
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
