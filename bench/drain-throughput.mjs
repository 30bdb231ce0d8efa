#!/usr/bin/env node
// Drain throughput: writes N spool files (the reference payload shapes, round robin) into a
// throwaway state folder, drains them with drainSpool, and prints events per second.
// Usage: node bench/drain-throughput.mjs [N=50000] [runs=3]   (after `npx tsc -b`)
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const { drainSpool } = await import(join(root, 'packages/forge-reflect/dist/drain.js'));
const refDir = process.env.PAYLOADS ?? join(root, '../shared/reference/claude-code-payloads');
const payloads = [
  ...readdirSync(refDir).filter((f) => f.endsWith('.json')).map((f) => readFileSync(join(refDir, f))),
  ...readdirSync(join(refDir, 'other-runtimes')).filter((f) => f.endsWith('.json')).map((f) => readFileSync(join(refDir, 'other-runtimes', f))),
];
const n = Number(process.argv[2] ?? 50_000);
const runs = Number(process.argv[3] ?? 3);

function spool(stateDir) {
  const dir = join(stateDir, 'spool');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let us = 1_763_806_500_000_000;
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    us += 7;
    const payload = payloads[i % payloads.length];
    const envelope = JSON.stringify({ v: 1, source: 'event-hook', event: 'PostToolUse', received_us: us, pid: 4242, cwd: '/home/dev/acme-app', bytes: payload.length, truncated: false });
    const name = `${String(us).padStart(16, '0')}-4242-${(i & 0xffff).toString(16).padStart(4, '0')}.event`;
    const content = Buffer.concat([Buffer.from(`${envelope}\n`), payload]);
    bytes += content.length;
    writeFileSync(join(dir, name), content, { mode: 0o600 });
  }
  return bytes;
}

const rates = [];
for (let r = 0; r < runs; r++) {
  const stateDir = mkdtempSync(join(tmpdir(), 'forge-drain-bench-'));
  try {
    const bytes = spool(stateDir);
    const start = process.hrtime.bigint();
    const counts = drainSpool(stateDir);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (counts.drained !== n) throw new Error(`drained ${counts.drained} of ${n}: ${JSON.stringify(counts)}`);
    const rate = n / seconds;
    rates.push(rate);
    console.log(`run ${r + 1}: ${n} events (${(bytes / 1e6).toFixed(1)} MB) in ${seconds.toFixed(2)} s = ${Math.round(rate)} events/s`);
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}
rates.sort((a, b) => a - b);
console.log(`median: ${Math.round(rates[Math.floor(rates.length / 2)])} events/s (node ${process.version}, ${n} events per run)`);
