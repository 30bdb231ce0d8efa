/**
 * A cold sidecar index reads with a worker thread beside the main thread (src/report/sidecar-
 * reader.ts). These tests run the built module (dist/: the worker file is JavaScript there; from
 * the TypeScript sources the reader reads inline) and check that every path comes back exactly
 * once with the row an inline read gives: through the worker alone, shared with the main thread,
 * and with files that are broken, gone or not regular files among them.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupTempDirs, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

type Reader = typeof import('../src/report/sidecar-reader.js');
const CLI = new URL('../bin/forge-reflect.js', import.meta.url).pathname;
const built = (await import(new URL('../dist/report/sidecar-reader.js', import.meta.url).href)) as Reader;

function corpus(n: number): string[] {
  const dir = join(tempDir(), 'reflections');
  mkdirSync(dir);
  const paths: string[] = [];
  for (let i = 0; i < n; i++) {
    const path = join(dir, `${String(i).padStart(5, '0')}-s.reflection.json`);
    paths.push(path);
    if (i % 97 === 5) {
      writeFileSync(path, '{"schema": "reflection.v1", "cut');
    } else if (i % 251 === 7) {
      mkdirSync(path); // not a regular file: no row
    } else if (i % 313 !== 11) {
      // (every 313th is never written: gone)
      writeFileSync(
        path,
        JSON.stringify({
          schema: 'reflection.v1',
          task_ref: `acme#${i}`,
          agent: 'claude-code',
          session_id: `s-${i % 7}`,
          timestamp: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.5Z`,
          repo: 'acme',
          confidence: 0.5,
          most_likely_wrong: null,
          known_not_in_diff: null,
          risk: { needs_review: false, score: 0.1, surface: 'docs', reason: 'docs surface' },
          files_changed: [`docs/${i}.md`],
          provenance: { source: 'stop-hook', reflection_attempt: 1, degraded: false, reflection_mode: 'solo' },
        }),
      );
    }
  }
  return paths;
}

const byPath = (results: Array<{ path: string; row: unknown }>) => [...results].sort((a, b) => (a.path < b.path ? -1 : 1));

describe('the sidecar reader', () => {
  it('gives every path once, with the rows an inline read gives, whoever reads it', () => {
    const paths = corpus(1_300);
    const inline = [...built.readSidecarRows(paths, { worker: false })];
    expect(inline.map((r) => r.path)).toEqual(paths);
    expect(inline.filter((r) => r.row === undefined)).toHaveLength(Math.ceil(1_300 / 251) + Math.ceil((1_300 - 11) / 313));
    expect(inline.filter((r) => r.row?.[2] === 0).length).toBeGreaterThan(10); // the cut ones: invalid rows
    expect(inline.find((r) => r.row?.[2] === 1)?.row?.[4]).toMatch(/^2026-01-01T00:00:\d\d\.500000Z$/);

    const alone = { workerChunks: 0 };
    const byWorker = [...built.readSidecarRows(paths, { worker: true, mainReads: false, stats: alone })];
    expect(alone.workerChunks).toBe(Math.ceil(1_300 / built.CHUNK));
    expect(byPath(byWorker)).toEqual(byPath(inline));

    const shared = [...built.readSidecarRows(paths, { worker: true })];
    expect(byPath(shared)).toEqual(byPath(inline));

    // A worker started ahead (as a listing does), given its paths later.
    const ahead = built.startSidecarReader();
    expect(ahead).toBeDefined();
    const early = { workerChunks: 0 };
    const fromAhead = [...built.readSidecarRows(paths, { worker: ahead, mainReads: false, stats: early })];
    expect(early.workerChunks).toBe(Math.ceil(1_300 / built.CHUNK));
    expect(byPath(fromAhead)).toEqual(byPath(inline));
  });

  it('serves a cold report through the CLI: the totals of 1,200 sidecars, every one read once', () => {
    const paths = corpus(1_200);
    const dir = dirname(paths[0] as string);
    const state = join(dirname(dir), 'state');
    mkdirSync(state);
    const r = spawnSync(process.execPath, [CLI, 'report', '--dir', dir, '--json', '--limit', '0'], {
      encoding: 'utf8',
      env: { ...process.env, FORGE_DIR: state },
    });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    const inline = [...built.readSidecarRows(paths, { worker: false })];
    const rows = inline.filter((x) => x.row !== undefined);
    expect(out.index).toEqual({ files: rows.length, unchanged_dirs: 0, read: rows.length, removed: 0 });
    expect(out.summary.sidecars).toBe(rows.filter((x) => x.row?.[2] === 1).length);
    expect(out.summary.invalid).toBe(rows.filter((x) => x.row?.[2] === 0).length);
  });

  it('reads inline from the TypeScript sources, where there is no worker file', async () => {
    const fromSources = await import('../src/report/sidecar-reader.js');
    const paths = corpus(300);
    const stats = { workerChunks: 0 };
    const got = [...fromSources.readSidecarRows(paths, { worker: true, mainReads: false, stats })];
    expect(stats.workerChunks).toBe(0);
    expect(got.map((r) => r.path)).toEqual(paths);
  });
});
