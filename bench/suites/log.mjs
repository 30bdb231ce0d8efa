// The reading commands as the event log grows (issue 12). Logs of 10^3 … 10^6 events are built
// in-process (insertBatch, the drain's own insert), then each command is started as a user starts
// it. Two layouts:
//   history:   a year of history; the last 7 days always hold the same 1,000 events, so a
//              command's work should not grow with the log (target: 10^6 within 20% of 10^3,
//              the two logs timed run by run in turn; the points between are context);
//   in window: all 10^6 events inside the last 7 days, for `metrics --days 7` and `--days 90`
//              (target: <= 10x node -e 0 and <= 100 MiB peak RSS; SQL does the counting).
// Prints the growth exponent of each command's time against the log's size.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const name = 'log';
export const describe = 'reading commands against logs of 10^3 … 10^6 events';

const DAY_MS = 86_400_000;
const TOOLS = ['Bash', 'Edit', 'Read', 'Write', 'Grep'];
const WINDOW_EVENTS = 1_000;

/** ISO time with microseconds, as the log keeps it. */
const iso = (ms) => `${new Date(ms).toISOString().slice(0, 19)}.${String((ms % 1000) * 1000).padStart(6, '0')}Z`;

/**
 * `n` events: tool calls (every 7th failed, durations 10…1,009 ms), a turn every 20 events and a new
 * session every 200. Event i is at `at(i)` (ms).
 */
function* rows(n, at) {
  for (let i = 0; i < n; i += 1) {
    const ms = at(i);
    const session = `bench-${Math.floor(i / 200)}`;
    const turn = i % 20 === 19;
    const tool = TOOLS[i % TOOLS.length];
    yield {
      id: `${String(ms * 1000 + (i % 1000)).padStart(16, '0')}-${i}-bench`,
      session_id: session,
      agent_id: null,
      ts: iso(ms),
      runtime: 'claude-code',
      type: turn ? 'turn.stopped' : i % 7 === 3 ? 'tool.failed' : 'tool.executed',
      hook_event: turn ? 'Stop' : 'PostToolUse',
      tool_name: turn ? null : tool,
      tool_use_id: null,
      duration_ms: turn ? null : 10 + (i % 1000),
      cwd: '/home/dev/acme',
      payload: turn ? '{"hook_event_name":"Stop"}' : `{"tool_name":"${tool}","tool_input":{"command":"step ${i % 50}"}}`,
      truncated: 0,
    };
  }
}

async function fillLog(root, stateDir, n, at) {
  const { openEventLog } = await import(pathToFileURL(join(root, 'packages/forge-reflect/dist/log/event-log.js')).href);
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const log = openEventLog(stateDir);
  try {
    log.db.pragma('synchronous = OFF'); // building the fixture only; the drain keeps FULL
    let batch = [];
    for (const row of rows(n, at)) {
      batch.push(row);
      if (batch.length === 20_000) {
        log.insertBatch(batch);
        batch = [];
      }
    }
    log.insertBatch(batch);
  } finally {
    log.close();
  }
  // Write the fixture's dirty pages out now, so the kernel's writeback does not run during the timing.
  spawnSync('sync');
}

export async function run(ctx) {
  const { root, runs, quick, timeProcess, medianOf, lastBaseline, median, growthExponent } = ctx;
  const cli = join(root, 'packages/forge-reflect/bin/forge-reflect.js');
  const rss = join(root, 'bench/peak-rss.cjs');
  const work = mkdtempSync(join(tmpdir(), 'forge-bench-log-'));
  const now = Date.now();
  const commands = [
    ['events', ['events', '--limit', '50']],
    ['metrics --days 7', ['metrics', '--days', '7', '--json']],
    ['report', ['report', '--limit', '20']],
    ['corpus', ['corpus', '--out', '-']],
  ];
  const runOnce = (stateDir, argv) => {
    const r = timeProcess(process.execPath, [cli, ...argv], { env: { ...process.env, FORGE_DIR: stateDir, NO_COLOR: '1' } });
    if (r.status !== 0) throw new Error(`forge-reflect ${argv.join(' ')} failed in the benchmark`);
    return r.ms;
  };
  const timeCommand = (stateDir, argv, count) => medianOf(count, () => runOnce(stateDir, argv));
  /** Peak resident memory of one run, in MiB (reported by the process itself at exit). */
  const peakMiB = (stateDir, argv) => {
    const file = join(work, 'rss.txt');
    const r = timeProcess(process.execPath, ['--require', rss, cli, ...argv], { env: { ...process.env, FORGE_DIR: stateDir, FORGE_BENCH_RSS_FILE: file } });
    if (r.status !== 0) throw new Error(`forge-reflect ${argv.join(' ')} failed in the benchmark`);
    return Number(readFileSync(file, 'utf8')) / 1024;
  };
  try {
    const sizes = quick ? [1_000, 10_000, 100_000] : [1_000, 10_000, 100_000, 1_000_000];
    const points = Object.fromEntries(commands.map(([what]) => [what, []]));
    const paired = {};
    for (const size of sizes) {
      const stateDir = join(work, `history-${size}`);
      // The last WINDOW_EVENTS in the last 7 days; the rest spread over the year before.
      const old = size - WINDOW_EVENTS;
      await fillLog(root, stateDir, size, (i) =>
        i < old ? now - 365 * DAY_MS + Math.floor((i * (358 * DAY_MS)) / Math.max(old, 1)) : now - 7 * DAY_MS + 60_000 + (i - old) * 60_000,
      );
      for (const [what, argv] of commands) points[what].push({ size, ms: timeCommand(stateDir, argv, Math.min(runs, 11)) });
      if (size === sizes[sizes.length - 1]) {
        // The target itself: the smallest log against the largest, timed run by run in turn, so a
        // drift in the machine's load between the points of the curve cannot make or break it.
        const smallest = join(work, `history-${sizes[0]}`);
        for (const [what, argv] of commands) {
          const smallTimes = [];
          const large = medianOf(Math.max(runs, 11), () => {
            smallTimes.push(runOnce(smallest, argv));
            return runOnce(stateDir, argv);
          });
          paired[what] = { small: median(smallTimes), large };
        }
        rmSync(smallest, { recursive: true, force: true });
      }
      if (size !== sizes[0]) rmSync(stateDir, { recursive: true, force: true });
    }
    const out = [];
    for (const [what] of commands) {
      const p = points[what];
      const { small, large } = paired[what];
      out.push({
        what: `${what} vs log size`,
        exponent: growthExponent(p),
        points: p,
        target: `${p[p.length - 1].size.toLocaleString('en-US')} within 20% of ${p[0].size.toLocaleString('en-US')}`,
        met: (large - small) / small <= 0.2,
        note: `timed in turn: ${small.toFixed(1)} ms at ${p[0].size.toLocaleString('en-US')} events, ${large.toFixed(1)} ms at ${p[p.length - 1].size.toLocaleString('en-US')}`,
      });
    }
    if (quick) return [...out, { what: 'metrics, 10^6 events in the window', skipped: 'quick mode builds no 10^6-event log' }];

    const stateDir = join(work, 'window');
    const n = 1_000_000;
    await fillLog(root, stateDir, n, (i) => now - 6 * DAY_MS + Math.floor((i * 5 * DAY_MS) / n));
    for (const days of ['7', '90']) {
      const argv = ['metrics', '--days', days, '--json'];
      const ms = timeCommand(stateDir, argv, Math.min(runs, 11)); // a target figure: a median of >= 11
      const base = lastBaseline();
      const mib = peakMiB(stateDir, argv);
      out.push({ what: `metrics --days ${days}, 10^6 events in window`, median_ms: ms, ratio: ms / base, target: '<= 10x', met: ms / base <= 10 });
      out.push({ what: `metrics --days ${days}, peak memory`, rate: mib, unit: 'MiB', target: '<= 100 MiB', met: mib <= 100 });
    }
    return out;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
