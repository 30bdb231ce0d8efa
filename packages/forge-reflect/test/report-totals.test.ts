/**
 * The report's totals and its list of invalid sidecars come from the sidecars_totals index alone
 * (EXPLAIN QUERY PLAN: a covering index, no row of the table read, no sort for the grouping), and
 * they are the sums a plain reading of the sidecars gives, with and without filters.
 */
import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS, openEventLog, SCHEMA_VERSION, sqliteDriver } from '../src/log/event-log.js';
import { eventsDbPathOf } from '../src/state-dir.js';
import { indexSidecars, invalidQuery, queryInvalid, queryTotals, totalsQuery, type SidecarFilter } from '../src/report/sidecar-index.js';
import { cleanupTempDirs, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const SURFACES = ['auth', 'data', 'docs', 'none'] as const;

function sidecar(i: number): Record<string, unknown> {
  const surface = SURFACES[i % SURFACES.length];
  return {
    schema: 'reflection.v1',
    task_ref: `acme#${i % 3}`,
    agent: 'claude-code',
    session_id: `s-${i % 5}`,
    timestamp: `2026-01-${String(1 + (i % 28)).padStart(2, '0')}T00:00:00Z`,
    repo: 'acme',
    confidence: i % 3 === 0 ? null : (i % 10) / 10,
    most_likely_wrong: null,
    known_not_in_diff: null,
    risk: { needs_review: i % 2 === 0, score: i % 2 === 0 ? 1 : 0.1, surface, reason: `${surface} surface` },
    files_changed: [`src/${surface}/f${i}.ts`],
    provenance: { source: 'stop-hook', reflection_attempt: 1, degraded: i % 4 === 0, reflection_mode: 'solo' },
  };
}

function setup() {
  const root = tempDir();
  const dir = join(root, 'reflections');
  mkdirSync(dir);
  const all = Array.from({ length: 60 }, (_, i) => sidecar(i));
  all.forEach((s, i) => writeFileSync(join(dir, `${String(i).padStart(3, '0')}-s.reflection.json`), JSON.stringify(s)));
  writeFileSync(join(dir, 'zzz-broken.reflection.json'), '{"schema":');
  const log = openEventLog(join(root, 'state'));
  indexSidecars(log.db, [dir]);
  return { dir, all, log };
}

/** What the totals are, read off the sidecars themselves. */
function expected(all: Array<Record<string, any>>, keep: (s: Record<string, any>) => boolean) {
  const picked = all.filter(keep);
  const withConfidence = picked.filter((s) => s.confidence !== null);
  const bySurface: Record<string, number> = {};
  for (const s of picked) bySurface[s.risk.surface] = (bySurface[s.risk.surface] ?? 0) + 1;
  return {
    sidecars: picked.length,
    needs_review: picked.filter((s) => s.risk.needs_review).length,
    degraded: picked.filter((s) => s.provenance.degraded).length,
    confidence_reported: withConfidence.length,
    confidence_sum: withConfidence.reduce((a, s) => a + s.confidence, 0),
    by_surface: bySurface,
  };
}

describe('report totals', () => {
  it('are the sums of the matching sidecars, with and without filters', () => {
    const { dir, all, log } = setup();
    try {
      const cases: Array<[SidecarFilter, (s: Record<string, any>) => boolean]> = [
        [{}, () => true],
        [{ needsReview: true }, (s) => s.risk.needs_review],
        [{ surface: 'auth' }, (s) => s.risk.surface === 'auth'],
        [{ since: '2026-01-15T00:00:00Z' }, (s) => s.timestamp >= '2026-01-15'],
        [{ degraded: false, task: 'acme#1' }, (s) => !s.provenance.degraded && s.task_ref === 'acme#1'],
      ];
      for (const [filter, keep] of cases) {
        const got = queryTotals(log.db, [dir], filter);
        const want = expected(all, keep);
        expect({ ...got, confidence_sum: undefined }).toEqual({ ...want, confidence_sum: undefined });
        expect(got.confidence_sum).toBeCloseTo(want.confidence_sum, 9);
      }
      expect(queryInvalid(log.db, [dir]).map((r) => r.path)).toEqual([join(dir, 'zzz-broken.reflection.json')]);
    } finally {
      log.close();
    }
  });

  it('read the sidecars_totals index alone (EXPLAIN QUERY PLAN)', () => {
    const { dir, log } = setup();
    try {
      const plan = (q: { sql: string; params: unknown[] }) =>
        (log.db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.params) as Array<{ detail: string }>).map((r) => r.detail);
      for (const filter of [{}, { needsReview: true }, { since: '2026-01-15T00:00:00Z' }] as SidecarFilter[]) {
        const steps = plan(totalsQuery([dir], filter));
        expect(steps.join(' | ')).toMatch(/USING COVERING INDEX sidecars_totals/);
        expect(steps.join(' | ')).not.toMatch(/TEMP B-TREE/);
      }
      expect(plan(invalidQuery([dir])).join(' | ')).toMatch(/USING INDEX sidecars_totals \(dir_id=\? AND valid=\?\)/);
    } finally {
      log.close();
    }
  });

  it('an index written by schema 9 (full paths in every row) is dropped by migration 10 and read again, with the same totals', () => {
    const { dir, all, log } = setup();
    const want = queryTotals(log.db, [dir], {});
    const state = log.path.slice(0, log.path.lastIndexOf('/'));
    log.close();
    {
      const Driver = sqliteDriver();
      rmSync(eventsDbPathOf(state));
      const db = new Driver(eventsDbPathOf(state));
      for (const m of MIGRATIONS.slice(0, 9)) typeof m === 'string' ? db.exec(m) : m(db);
      db.pragma('user_version = 9');
      db.prepare(`INSERT INTO sidecars (path, dir, size, mtime_ns, valid, ts, files) VALUES (?, ?, 1, '1', 1, '2026-01-01T00:00:00.000000Z', '[]')`).run(
        join(dir, '000-s.reflection.json'),
        dir,
      );
      db.prepare(`INSERT INTO sidecar_dirs (dir, mtime_ns, listed_at_ms, files) VALUES (?, '1', 0, 1)`).run(dir);
      db.close();
    }
    const upgraded = openEventLog(state);
    try {
      expect(upgraded.schemaVersion()).toBe(SCHEMA_VERSION);
      expect(upgraded.db.prepare('SELECT count(*) FROM sidecars').pluck().get()).toBe(0);
      expect(indexSidecars(upgraded.db, [dir])).toEqual({ files: all.length + 1, unchanged_dirs: 0, read: all.length + 1, removed: 0 });
      expect(queryTotals(upgraded.db, [dir], {})).toEqual(want);
      // The folder keeps its id when it is listed again (its mark is updated in place): every row stays in view.
      const id = upgraded.db.prepare('SELECT id FROM sidecar_dirs WHERE dir = ?').pluck().get(dir);
      writeFileSync(join(dir, '999-s.reflection.json'), JSON.stringify(sidecar(0)));
      expect(indexSidecars(upgraded.db, [dir]).read).toBe(1);
      expect(upgraded.db.prepare('SELECT id FROM sidecar_dirs WHERE dir = ?').pluck().get(dir)).toBe(id);
      expect(queryTotals(upgraded.db, [dir], {}).sidecars).toBe(want.sidecars + 1);
      expect(upgraded.db.prepare('SELECT count(*) FROM sidecar_files WHERE path = ?').pluck().get(join(dir, '999-s.reflection.json'))).toBe(1);
    } finally {
      upgraded.close();
    }
  });

  it('a warm folder is counted from its listing, or, for a mark written before counts were kept, by the index', () => {
    const { dir, log } = setup();
    try {
      const old = new Date(Date.now() - 3_600_000);
      utimesSync(dir, old, old);
      expect(indexSidecars(log.db, [dir])).toEqual({ files: 61, unchanged_dirs: 0, read: 0, removed: 0 }); // listed again, nothing new
      expect(log.db.prepare('SELECT files FROM sidecar_dirs').pluck().get()).toBe(61);
      expect(indexSidecars(log.db, [dir])).toEqual({ files: 61, unchanged_dirs: 1, read: 0, removed: 0 });
      log.db.prepare('UPDATE sidecar_dirs SET files = NULL').run();
      expect(indexSidecars(log.db, [dir])).toEqual({ files: 61, unchanged_dirs: 1, read: 0, removed: 0 });
    } finally {
      log.close();
    }
  });
});
