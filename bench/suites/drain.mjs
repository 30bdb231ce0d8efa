// Drain throughput: spool files of the fixture payload shapes (round robin) drained into a fresh
// event log by drainSpool, in-process, so the figure is the drain's own. Target (issue 3): >= 20,000
// events/s. Also the warm start of `forge-reflect ingest` with an empty spool, against node -e 0.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

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
  const { root, quick, runs, nodeBaseline, timeProcess, medianOf, median } = ctx;
  const { drainSpool } = await import(pathToFileURL(join(root, 'packages/forge-reflect/dist/drain.js')).href);
  const shapes = payloads(root);
  const n = quick ? 2_000 : 20_000;
  const rates = [];
  for (let r = 0; r < Math.min(runs, 3); r += 1) {
    const state = mkdtempSync(join(tmpdir(), 'forge-bench-drain-'));
    try {
      spool(state, shapes, n);
      const start = process.hrtime.bigint();
      const counts = drainSpool(state);
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      if (counts.drained !== n) throw new Error(`drained ${counts.drained} of ${n}`);
      rates.push(n / seconds);
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  }
  const rate = median(rates);
  const state = mkdtempSync(join(tmpdir(), 'forge-bench-ingest-'));
  const cli = join(root, 'packages/forge-reflect/bin/forge-reflect.js');
  try {
    const ingest = medianOf(runs, () => timeProcess(process.execPath, [cli, 'ingest'], { env: { ...process.env, FORGE_DIR: state } }).ms);
    return [
      { what: `drain, ${n.toLocaleString('en-US')} spooled events`, rate, unit: 'events/s', target: '>= 20,000 events/s', met: rate >= 20_000 },
      { what: 'forge-reflect ingest, empty spool (CLI start)', median_ms: ingest, ratio: ingest / nodeBaseline, target: 'none (context)' },
    ];
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
}
