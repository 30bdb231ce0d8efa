// `forge-reflect report` over 10,000 sidecars: cold (a fresh index reads every file) and warm
// (the index is current; only stat calls). Targets (issue 4): cold <= 15x, warm <= 4x node -e 0.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const name = 'report';
export const describe = 'forge-reflect report over 10,000 sidecars, cold and warm';

const SURFACES = ['auth', 'data', 'infra', 'build', 'ui', 'test', 'docs', 'none'];

function corpus(dir, n) {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < n; i += 1) {
    const surface = SURFACES[i % SURFACES.length];
    const sidecar = {
      schema: 'reflection.v1', task_ref: `acme#${i % 40}`, agent: 'claude-code', session_id: `s-${i % 300}`,
      timestamp: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(), repo: 'acme',
      confidence: i % 3 ? 0.7 : null, most_likely_wrong: null, known_not_in_diff: null,
      risk: { needs_review: i % 2 === 0, score: i % 2 === 0 ? 1 : 0.1, surface, reason: `${surface} surface` },
      files_changed: [`src/${surface}/file-${i}.ts`, 'README.md'],
      provenance: { source: 'stop-hook', reflection_attempt: 1, degraded: i % 5 === 0, reflection_mode: 'solo' },
    };
    writeFileSync(join(dir, `${String(i).padStart(6, '0')}-s.reflection.json`), `${JSON.stringify(sidecar, null, 2)}\n`);
  }
}

export async function run(ctx) {
  const { root, runs, nodeBaseline, timeProcess, medianOf } = ctx;
  const work = mkdtempSync(join(tmpdir(), 'forge-bench-report-'));
  const dir = join(work, 'reflections');
  corpus(dir, 10_000);
  const cli = join(root, 'packages/forge-reflect/bin/forge-reflect.js');
  const reportOnce = (state) => {
    const r = timeProcess(process.execPath, [cli, 'report', '--dir', dir, '--limit', '20'], { env: { ...process.env, FORGE_DIR: state } });
    if (r.status !== 0) throw new Error('report failed in the benchmark');
    return r.ms;
  };
  const row = (what, ms, limit) => ({ what, median_ms: ms, ratio: ms / nodeBaseline, target: `<= ${limit}x`, met: ms / nodeBaseline <= limit });
  try {
    const cold = medianOf(Math.min(runs, 5), (i) => reportOnce(join(work, `cold-state-${i}`)));
    const warmState = join(work, 'warm-state');
    reportOnce(warmState);
    const warm = medianOf(runs, () => reportOnce(warmState));
    return [row('report, 10,000 sidecars, cold index', cold, 15), row('report, 10,000 sidecars, warm index', warm, 4)];
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
