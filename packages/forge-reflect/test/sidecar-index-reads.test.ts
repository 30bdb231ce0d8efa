// What the sidecar index does with each file: a new file is opened once (its size and time come
// from that open, no separate stat); a known one is stat'ed and read only when it changed; an
// entry that is not a regular file is never indexed, and one that stops being a file is dropped.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openEventLog } from '../src/log/event-log.js';
import { indexSidecars } from '../src/report/sidecar-index.js';
import { cleanupTempDirs, tempDir } from './helpers/spool.js';

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return { ...real, statSync: vi.fn(real.statSync), openSync: vi.fn(real.openSync), readSync: vi.fn(real.readSync) };
});

afterEach(() => {
  cleanupTempDirs();
  vi.mocked(fs.statSync).mockClear();
  vi.mocked(fs.openSync).mockClear();
  vi.mocked(fs.readSync).mockClear();
});

function sidecar(i: number): string {
  return JSON.stringify({
    schema: 'reflection.v1',
    task_ref: `acme#${i}`,
    agent: 'claude-code',
    session_id: `s-${i}`,
    timestamp: `2026-01-01T00:00:0${i}Z`,
    repo: 'acme',
    confidence: 0.5,
    most_likely_wrong: null,
    known_not_in_diff: null,
    risk: { needs_review: false, score: 0, surface: 'none', reason: 'no risky surface in 1 file(s)' },
    files_changed: ['src/util.ts'],
    provenance: { source: 'stop-hook', reflection_attempt: 1, degraded: false, reflection_mode: 'solo' },
  });
}

const isSidecarPath = (call: unknown[]) => String(call[0]).endsWith('.reflection.json');

function setup(n: number) {
  const root = tempDir();
  const dir = join(root, 'reflections');
  fs.mkdirSync(dir);
  for (let i = 0; i < n; i++) fs.writeFileSync(join(dir, `${i}-s.reflection.json`), sidecar(i));
  const log = openEventLog(join(root, 'state'));
  return { dir, log };
}

describe('the sidecar index, file by file', () => {
  it('opens each new file once and stats none of them', () => {
    const { dir, log } = setup(5);
    try {
      vi.mocked(fs.statSync).mockClear();
      expect(indexSidecars(log.db, [dir])).toEqual({ files: 5, unchanged_dirs: 0, read: 5, removed: 0 });
      expect(vi.mocked(fs.statSync).mock.calls.filter(isSidecarPath)).toEqual([]);
      expect(vi.mocked(fs.openSync).mock.calls.filter(isSidecarPath)).toHaveLength(5);
      const rows = log.db.prepare('SELECT size, mtime_ns FROM sidecar_files ORDER BY path').all() as Array<{ size: number; mtime_ns: string }>;
      const expected = [0, 1, 2, 3, 4].map((i) => {
        const stats = fs.lstatSync(join(dir, `${i}-s.reflection.json`));
        return { size: stats.size, mtime_ns: String(stats.mtimeMs) };
      });
      expect(rows).toEqual(expected);
    } finally {
      log.close();
    }
  });

  it('reads each new file with one read, up to the size its fstat gave (no second read to meet the end)', () => {
    const { dir, log } = setup(4);
    // One sidecar larger than the 64 KiB the reader starts with: the buffer grows to fit it.
    const big = JSON.stringify({ ...JSON.parse(sidecar(9)), files_changed: Array.from({ length: 4000 }, (_, i) => `src/deep/path/file-${i}.ts`) });
    fs.writeFileSync(join(dir, '9-s.reflection.json'), big);
    try {
      vi.mocked(fs.readSync).mockClear();
      expect(indexSidecars(log.db, [dir])).toEqual({ files: 5, unchanged_dirs: 0, read: 5, removed: 0 });
      expect(vi.mocked(fs.readSync)).toHaveBeenCalledTimes(5);
      const rows = log.db.prepare('SELECT path, size, valid, files FROM sidecar_files ORDER BY path').all() as Array<{
        path: string;
        size: number;
        valid: number;
        files: string;
      }>;
      expect(rows.map((r) => [r.size, r.valid])).toEqual(rows.map((r) => [fs.statSync(r.path).size, 1]));
      expect(JSON.parse(String(rows.find((r) => r.path.endsWith('9-s.reflection.json'))?.files))).toHaveLength(4000);
      expect(big.length).toBeGreaterThan(64 * 1024);
    } finally {
      log.close();
    }
  });

  it('stats known files and reads only the one that changed', () => {
    const { dir, log } = setup(3);
    try {
      const hourAgo = new Date(Date.now() - 3_600_000);
      fs.utimesSync(dir, hourAgo, hourAgo);
      indexSidecars(log.db, [dir]);
      fs.writeFileSync(join(dir, '1-s.reflection.json'), `${sidecar(1)}\n\n`);
      // An edit in place leaves the folder's time alone: give it a new one, as a rename into it would.
      const halfAnHourAgo = new Date(Date.now() - 1_800_000);
      fs.utimesSync(dir, halfAnHourAgo, halfAnHourAgo);
      vi.mocked(fs.statSync).mockClear();
      vi.mocked(fs.openSync).mockClear();
      expect(indexSidecars(log.db, [dir])).toEqual({ files: 3, unchanged_dirs: 0, read: 1, removed: 0 });
      expect(vi.mocked(fs.statSync).mock.calls.filter(isSidecarPath)).toHaveLength(3);
      expect(
        vi
          .mocked(fs.openSync)
          .mock.calls.filter(isSidecarPath)
          .map((c) => String(c[0])),
      ).toEqual([join(dir, '1-s.reflection.json')]);
    } finally {
      log.close();
    }
  });

  it('never indexes a folder with a sidecar name, and drops a known sidecar that became one', () => {
    const { dir, log } = setup(2);
    try {
      fs.mkdirSync(join(dir, '9-s.reflection.json'));
      expect(indexSidecars(log.db, [dir])).toEqual({ files: 2, unchanged_dirs: 0, read: 2, removed: 0 });
      fs.unlinkSync(join(dir, '0-s.reflection.json'));
      fs.mkdirSync(join(dir, '0-s.reflection.json'));
      expect(indexSidecars(log.db, [dir])).toEqual({ files: 1, unchanged_dirs: 0, read: 0, removed: 1 });
      expect(log.db.prepare('SELECT path FROM sidecar_files').pluck().all()).toEqual([join(dir, '1-s.reflection.json')]);
    } finally {
      log.close();
    }
  });

  it('skips a FIFO with a sidecar name without waiting for a writer', () => {
    const { dir, log } = setup(1);
    try {
      expect(spawnSync('mkfifo', [join(dir, '5-s.reflection.json')]).status).toBe(0);
      expect(indexSidecars(log.db, [dir])).toEqual({ files: 1, unchanged_dirs: 0, read: 1, removed: 0 });
    } finally {
      log.close();
    }
  });

  it("does not index an entry that can be neither opened nor stat'ed (a link loop)", () => {
    const { dir, log } = setup(1);
    try {
      fs.symlinkSync('7-s.reflection.json', join(dir, '7-s.reflection.json'));
      expect(indexSidecars(log.db, [dir])).toEqual({ files: 1, unchanged_dirs: 0, read: 1, removed: 0 });
      expect(indexSidecars(log.db, [dir])).toEqual({ files: 1, unchanged_dirs: 0, read: 0, removed: 0 });
    } finally {
      log.close();
    }
  });
});
