#!/usr/bin/env node
// npm run bench [-- --quick] [-- --runs N] [-- suite ...]
//
// Times the kit where speed matters and prints each figure as a ratio to a bare `node -e 0`
// started in the same run, so the numbers compare across machines. Suites live in bench/suites/;
// each exports `name`, `describe` and `run(ctx)` returning rows { what, median_ms, ratio?, rate?,
// target }. Not a test: the figures are printed (and written to bench/results/latest.json), and
// the exit status is 0 unless a suite crashed; `--check` also fails when a target is missed.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
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

/** Wall time of one process, in ms. */
function timeProcess(command, commandArgs, options = {}) {
  const start = process.hrtime.bigint();
  const result = spawnSync(command, commandArgs, { stdio: ['pipe', 'pipe', 'pipe'], ...options });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  // EPIPE: the child exited without reading its stdin. A hook with the mode off does exactly that
  // (invariant 1: nothing read), so it is a result, not a failure.
  if (result.error && result.error.code !== 'EPIPE') throw result.error;
  return { ms, status: result.status, stdout: result.stdout };
}

function medianOf(count, once) {
  const times = [];
  for (let i = 0; i < count; i += 1) times.push(once(i));
  return median(times);
}

const nodeBaseline = medianOf(runs, () => timeProcess(process.execPath, ['-e', '0']).ms);
const ctx = { runs, quick, nodeBaseline, root: join(here, '..'), timeProcess, medianOf, median };

const suiteDir = join(here, 'suites');
const suites = [];
for (const file of readdirSync(suiteDir).filter((f) => f.endsWith('.mjs')).sort()) {
  const suite = await import(pathToFileURL(join(suiteDir, file)).href);
  if (wanted.length === 0 || wanted.includes(suite.name)) suites.push(suite);
}
if (wanted.length > 0 && suites.length === 0) {
  process.stderr.write(`bench: no suite named ${wanted.join(', ')}; see bench/suites/\n`);
  process.exit(2);
}

const results = { date: new Date().toISOString(), runs, quick, node_e_0_ms: nodeBaseline, suites: {} };
let missed = 0;
process.stdout.write(`baseline: node -e 0 median ${nodeBaseline.toFixed(1)} ms over ${runs} runs${quick ? ' (quick mode)' : ''}\n`);
for (const suite of suites) {
  process.stdout.write(`\n${suite.name}: ${suite.describe}\n`);
  const rows = await suite.run(ctx);
  results.suites[suite.name] = rows;
  for (const row of rows) {
    const figure =
      row.rate !== undefined
        ? `${Math.round(row.rate).toLocaleString('en-US')} ${row.unit ?? '/s'}`
        : `${row.median_ms.toFixed(1)} ms = ${(row.median_ms / nodeBaseline).toFixed(3)}x node -e 0`;
    const ok = row.met === undefined ? '' : row.met ? '  ok' : '  MISSED';
    if (row.met === false) missed += 1;
    process.stdout.write(`  ${row.what.padEnd(44)} ${figure.padEnd(32)} target ${row.target}${ok}\n`);
  }
}
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(join(here, 'results', 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
process.stdout.write(`\nwritten: bench/results/latest.json${missed ? `; ${missed} target(s) missed` : ''}\n`);
process.exit(check && missed > 0 ? 1 : 0);
