#!/usr/bin/env node
// npm run bench [-- --quick] [-- --runs N] [-- --check] [-- --spawn-sync] [-- suite ...]
//
// Times the kit where speed matters and prints each figure as a ratio to a bare `node -e 0`
// started in the same run, so the numbers compare across machines. Both sides get the same
// environment treatment: NODE_EXTRA_CA_CERTS and NODE_OPTIONS are removed, as the Stop hook removes
// them for its helper (a CA bundle there is parsed at every start); the raw `node -e 0` with the
// environment as it is is printed beside, for context only. Suites live in bench/suites/;
// each exports `name`, `describe` and `run(ctx)` returning rows { what, median_ms, ratio?, rate?,
// target }. Not a test: the figures are printed (and written to bench/results/latest.json), and
// the exit status is 0 unless a suite crashed; `--check` also fails when a target is missed.
// Processes are started by bench/launch.py (posix_spawn) when python3 is here; `--spawn-sync` starts
// them with Node's spawnSync instead, as the bench did before (every small figure then carries the
// launcher's own cost).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describeSteal, readCpu, stealShare } from './cpu-steal.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const cpuAtStart = readCpu();
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const check = args.includes('--check');
const runsIndex = args.indexOf('--runs');
const runs = runsIndex >= 0 ? Number(args[runsIndex + 1]) : quick ? 3 : 21;
if (!Number.isInteger(runs) || runs < 1) {
  process.stderr.write('bench: --runs takes a whole number, e.g. --runs 21\n');
  process.exit(2);
}
const wanted = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--runs');

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The environment every timed process gets (the baseline's too): this one less NODE_EXTRA_CA_CERTS and NODE_OPTIONS. */
export function cleanEnv(extra = {}) {
  const env = { ...process.env, ...extra };
  delete env.NODE_EXTRA_CA_CERTS;
  delete env.NODE_OPTIONS;
  return env;
}

// Every timed process, the baseline's too, is started by bench/launch.py (posix_spawn from a small
// Python process) when python3 is here: Node's spawnSync adds a cost of its own to each process,
// as much as a whole `sh -c 'exit 0'`. Without python3 the
// bench falls back to spawnSync and says so. The launcher also waits, untimed, for whatever a timed
// process leaves running (the Stop hook's helper lives on after the hook), so no figure, and
// no baseline, runs beside the one before it.
const launchPy = join(here, 'launch.py');
const launcher = (() => {
  if (args.includes('--spawn-sync'))
    return { name: 'node spawnSync (asked for with --spawn-sync; what a timed process leaves running is not waited for)', python: null };
  const probe = spawnSync('python3', ['-c', 'import os; os.posix_spawn'], { stdio: 'ignore' });
  return probe.status === 0
    ? { name: 'posix_spawn from bench/launch.py (python3)', python: 'python3' }
    : { name: 'node spawnSync (no python3 here for bench/launch.py; what a timed process leaves running is not waited for)', python: null };
})();

/**
 * Wall time of one process, in ms: the clean environment unless `env` is given, and that cleaned too
 * (`keepEnv: true` keeps it as it is: the raw baseline only).
 */
function timeProcess(command, commandArgs, options = {}) {
  const { keepEnv, ...spawnOptions } = options;
  const env = keepEnv
    ? { ...options.env }
    : options.env
      ? (() => {
          const e = { ...options.env };
          delete e.NODE_EXTRA_CA_CERTS;
          delete e.NODE_OPTIONS;
          return e;
        })()
      : cleanEnv();
  if (launcher.python) {
    const head = JSON.stringify({ argv: [command, ...commandArgs], cwd: options.cwd ?? process.cwd(), env });
    const input = Buffer.concat([Buffer.from(`${head}\n`), Buffer.from(options.input ?? '')]);
    const result = spawnSync(launcher.python, [launchPy], { input, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 1 << 30 });
    if (result.status !== 0) throw new Error(`bench/launch.py could not run ${command}: ${String(result.stderr).trim()}`);
    const newline = result.stdout.indexOf(10);
    const timing = JSON.parse(result.stdout.subarray(0, newline).toString());
    if (timing.left > 0) throw new Error(`${command} left ${timing.left} process(es) running 10 s after it exited (bench/launch.py)`);
    return { ms: timing.ms, status: timing.status, settleMs: timing.settle_ms, stdout: result.stdout.subarray(newline + 1) };
  }
  const start = process.hrtime.bigint();
  const result = spawnSync(command, commandArgs, { stdio: ['pipe', 'pipe', 'pipe'], ...spawnOptions, env });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  // EPIPE: the child exited without reading its stdin. A hook with the mode off does exactly that
  // (invariant 1: nothing read), so it is a result, not a failure.
  if (result.error && result.error.code !== 'EPIPE') throw result.error;
  return { ms, status: result.status, stdout: result.stdout };
}

/**
 * The median of `count` runs of `once`. Each run is followed by a clean `node -e 0` started from
 * this same process, so every figure has a baseline taken under the same load and from a parent of
 * the same size (spawning from a process that has grown costs more): `lastBaseline()` gives it.
 */
let lastBaselineMs = Number.NaN;
function medianOf(count, once) {
  const times = [];
  const baseline = [];
  for (let i = 0; i < count; i += 1) {
    times.push(once(i));
    baseline.push(timeProcess(process.execPath, ['-e', '0']).ms);
  }
  lastBaselineMs = median(baseline);
  return median(times);
}
const lastBaseline = () => lastBaselineMs;

// Interleaved: a clean and a raw `node -e 0` in turn, so load on the machine hits both alike; and
// a clean one started by spawnSync, for the launcher's share (context only).
const cleanTimes = [];
const rawTimes = [];
const syncTimes = [];
const timeSync = (env) => {
  const start = process.hrtime.bigint();
  spawnSync(process.execPath, ['-e', '0'], { stdio: 'ignore', env });
  return Number(process.hrtime.bigint() - start) / 1e6;
};
for (let i = 0; i < Math.max(runs, 11); i += 1) {
  cleanTimes.push(timeProcess(process.execPath, ['-e', '0']).ms);
  rawTimes.push(timeProcess(process.execPath, ['-e', '0'], { env: process.env, keepEnv: true }).ms);
  syncTimes.push(timeSync(cleanEnv()));
}
const nodeBaseline = median(cleanTimes);
const rawBaseline = median(rawTimes);
const syncBaseline = median(syncTimes);

/** The exponent b of time ≈ a·size^b, by least squares on the logs: 1 is linear, 0 is flat. */
function growthExponent(points) {
  const xs = points.map((p) => Math.log(p.size));
  const ys = points.map((p) => Math.log(p.ms));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  xs.forEach((x, i) => {
    num += (x - mx) * (ys[i] - my);
    den += (x - mx) ** 2;
  });
  return den === 0 ? 0 : num / den;
}
// The machine's floor: what starting any process costs here, as a share of node -e 0. No hook can
// cost less than a bare bash, and every process a hook starts costs about a /bin/true more.
const floor = {
  true_ms: medianOf(Math.max(runs, 11), () => timeProcess('/bin/true', []).ms),
  sh_ms: medianOf(Math.max(runs, 11), () => timeProcess('sh', ['-c', 'exit 0']).ms),
  bash_ms: medianOf(Math.max(runs, 11), () => timeProcess('bash', ['-c', 'exit 0']).ms),
  node_ms: lastBaseline(),
};
// The launcher's share, for context: /bin/true started by spawnSync from this process.
const trueBySpawnSync = median(
  Array.from({ length: Math.max(runs, 11) }, () => {
    const start = process.hrtime.bigint();
    spawnSync('/bin/true', [], { stdio: ['pipe', 'pipe', 'pipe'], env: cleanEnv() });
    return Number(process.hrtime.bigint() - start) / 1e6;
  }),
);
const ctx = { runs, quick, nodeBaseline, root: join(here, '..'), timeProcess, medianOf, lastBaseline, median, cleanEnv, growthExponent };

const suiteDir = join(here, 'suites');
const suites = [];
for (const file of readdirSync(suiteDir)
  .filter((f) => f.endsWith('.mjs'))
  .sort()) {
  const suite = await import(pathToFileURL(join(suiteDir, file)).href);
  if (wanted.length === 0 || wanted.includes(suite.name)) suites.push(suite);
}
if (wanted.length > 0 && suites.length === 0) {
  process.stderr.write(`bench: no suite named ${wanted.join(', ')}; see bench/suites/\n`);
  process.exit(2);
}

const results = {
  date: new Date().toISOString(),
  runs,
  quick,
  node_e_0_ms: nodeBaseline,
  node_e_0_raw_ms: rawBaseline,
  launcher: launcher.name,
  node_e_0_spawnsync_ms: syncBaseline,
  true_spawnsync_ms: trueBySpawnSync,
  process_floor: floor,
  suites: {},
  steal: {},
};
let missed = 0;
process.stdout.write(
  `baseline: node -e 0 median ${nodeBaseline.toFixed(1)} ms over ${cleanTimes.length} runs, without NODE_EXTRA_CA_CERTS and NODE_OPTIONS like every figure below` +
    ` (as the environment is: ${rawBaseline.toFixed(1)} ms)${quick ? ' (quick mode)' : ''}\n` +
    `launcher: ${launcher.name}; started by Node's spawnSync instead, node -e 0 takes ${syncBaseline.toFixed(1)} ms and /bin/true ${trueBySpawnSync.toFixed(1)} ms\n` +
    `process floor here: /bin/true ${floor.true_ms.toFixed(1)} ms = ${(floor.true_ms / floor.node_ms).toFixed(3)}x, sh -c 'exit 0' ${floor.sh_ms.toFixed(1)} ms = ${(floor.sh_ms / floor.node_ms).toFixed(3)}x, bash -c 'exit 0' ${floor.bash_ms.toFixed(1)} ms = ${(floor.bash_ms / floor.node_ms).toFixed(3)}x node -e 0` +
    ' (each figure below is divided by a node -e 0 timed between its own runs)\n',
);
for (const suite of suites) {
  process.stdout.write(`\n${suite.name}: ${suite.describe}\n`);
  const cpuBefore = readCpu();
  const rows = await suite.run(ctx);
  const steal = stealShare(cpuBefore, readCpu());
  results.suites[suite.name] = rows;
  results.steal[suite.name] = steal;
  for (const row of rows) {
    if (row.skipped) {
      process.stdout.write(`  ${row.what.padEnd(44)} skipped: ${row.skipped}\n`);
      continue;
    }
    const figure =
      row.exponent !== undefined
        ? `growth exponent ${row.exponent.toFixed(2)} (${row.points.map((p) => `${p.size.toLocaleString('en-US')}: ${p.ms.toFixed(1)} ms`).join(', ')})`
        : row.rate !== undefined
          ? `${Math.round(row.rate).toLocaleString('en-US')} ${row.unit ?? '/s'}`
          : `${row.median_ms.toFixed(1)} ms = ${(row.ratio ?? row.median_ms / nodeBaseline).toFixed(3)}x ${row.versus ?? 'node -e 0'}`;
    const ok = row.met === undefined ? '' : row.met ? '  ok' : '  MISSED';
    if (row.met === false) missed += 1;
    process.stdout.write(`  ${row.what.padEnd(44)} ${figure.padEnd(32)} target ${row.target}${ok}${row.note ? ` (${row.note})` : ''}\n`);
  }
  process.stdout.write(`  (stolen by the hypervisor for other guests during this suite: ${describeSteal(steal)})\n`);
}
results.steal.whole_run = stealShare(cpuAtStart, readCpu());
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(join(here, 'results', 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
process.stdout.write(
  `\nstolen by the hypervisor over the whole run: ${describeSteal(results.steal.whole_run)}\nwritten: bench/results/latest.json${missed ? `; ${missed} target(s) missed` : ''}\n`,
);
process.exit(check && missed > 0 ? 1 : 0);
