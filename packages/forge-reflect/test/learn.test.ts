import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openEventLog } from '../src/log/event-log.js';
import { adjustConfidence, clampConfidence, decayStep, pruneReason, WEEK_MS, DAY_MS } from '../src/loops/confidence.js';
import {
  addLearning,
  appliedLearning,
  confirmLearning,
  decayLearnings,
  dismissLearning,
  getLearning,
  listLearnings,
  pruneLearnings,
  rewrittenLearning,
} from '../src/loops/learn-store.js';
import { CLI, cleanupTempDirs, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const T0 = Date.parse('2025-11-01T00:00:00Z');

describe('confidence arithmetic', () => {
  it('adds, subtracts and clamps to [0, 1] without float noise', () => {
    expect(adjustConfidence(0.5, -0.2)).toBe(0.3);
    expect(adjustConfidence(0.7, 0.2)).toBe(0.9);
    expect(adjustConfidence(0.9, 0.2)).toBe(1);
    expect(adjustConfidence(0.1, -0.2)).toBe(0);
    expect(adjustConfidence(0.3, 0.1)).toBe(0.4);
    expect(clampConfidence(-3)).toBe(0);
    expect(clampConfidence(7)).toBe(1);
  });

  it('decays 0.05 per whole week since access, once per week', () => {
    expect(decayStep(0.5, T0, T0 + WEEK_MS - 1, 0)).toEqual({ confidence: 0.5, weeks: 0, newWeeks: 0 });
    expect(decayStep(0.5, T0, T0 + WEEK_MS, 0)).toEqual({ confidence: 0.45, weeks: 1, newWeeks: 1 });
    expect(decayStep(0.5, T0, T0 + 3 * WEEK_MS + 5 * DAY_MS, 0)).toEqual({ confidence: 0.35, weeks: 3, newWeeks: 3 });
    // 3 weeks already applied: week 4 adds one step
    expect(decayStep(0.35, T0, T0 + 4 * WEEK_MS, 3)).toEqual({ confidence: 0.3, weeks: 4, newWeeks: 1 });
    expect(decayStep(0.05, T0, T0 + 5 * WEEK_MS, 0).confidence).toBe(0);
  });

  it('prunes below 0.2 or after 90 days unused', () => {
    expect(pruneReason(0.19, T0, T0)).toBe('low_confidence');
    expect(pruneReason(0.2, T0, T0 + 89 * DAY_MS)).toBeUndefined();
    expect(pruneReason(0.9, T0, T0 + 90 * DAY_MS)).toBe('unused');
  });
});

describe('the learnings store', () => {
  it('starts at 0.5 / 0.7 / 0.9 by source', () => {
    const log = openEventLog(tempDir());
    const c = (source: 'machine' | 'human' | 'production') =>
      addLearning(log.db, { type: 'semantic', content: source, context: '', tags: [], source }, T0).learning.confidence;
    expect([c('machine'), c('human'), c('production')]).toEqual([0.5, 0.7, 0.9]);
    log.close();
  });

  it('dismiss −0.2 and keeps the dismissal at 0.7; confirm +0.2; applied +0.1; rewritten keeps the preference at 0.8', () => {
    const log = openEventLog(tempDir());
    const { learning } = addLearning(
      log.db,
      { type: 'procedural', content: 'add clearAllMocks()', context: 'mock tests', tags: ['Testing', 'mocks'], source: 'machine' },
      T0,
    );
    expect(learning.tags).toEqual(['testing', 'mocks']);
    const d = dismissLearning(log.db, learning.id, 'not our style', T0 + 1);
    expect(d.events[0]?.payload).toEqual({ learning_id: 1, old_confidence: 0.5, new_confidence: 0.3, reason: 'dismissed by a human: not our style' });
    expect(d.events[0]?.type).toBe('feedback.confidence_decreased');
    expect([d.created?.type, d.created?.confidence, d.created?.tags]).toEqual(['semantic', 0.7, ['testing', 'mocks', 'dismissal']]);
    expect(confirmLearning(log.db, 1, T0 + 2).learning.confidence).toBe(0.5);
    expect(appliedLearning(log.db, 1, T0 + 3).learning.confidence).toBe(0.6);
    const r = rewrittenLearning(log.db, 1, 'use vi.restoreAllMocks()', T0 + 4);
    expect([r.created?.type, r.created?.confidence]).toEqual(['procedural', 0.8]);
    expect(r.created?.content).toContain('use vi.restoreAllMocks()');
    // clamped at 1: 0.6 +0.2 +0.2 +0.2 → 1
    for (let i = 0; i < 3; i++) confirmLearning(log.db, 1, T0 + 5);
    expect(getLearning(log.db, 1).confidence).toBe(1);
    expect(() => confirmLearning(log.db, 99, T0)).toThrow(/no learning with id 99/);
    log.close();
  });

  it('decays across weeks from the last access, idempotently, and an access restarts the count', () => {
    const log = openEventLog(tempDir());
    addLearning(log.db, { type: 'semantic', content: 'a', context: '', tags: [], source: 'human' }, T0); // 0.7
    expect(decayLearnings(log.db, T0 + 6 * DAY_MS).events).toEqual([]);
    const two = decayLearnings(log.db, T0 + 2 * WEEK_MS + DAY_MS);
    expect(two.events.map((e) => [e.payload.old_confidence, e.payload.new_confidence])).toEqual([[0.7, 0.6]]);
    expect(decayLearnings(log.db, T0 + 2 * WEEK_MS + 2 * DAY_MS).events).toEqual([]); // same week: nothing more
    expect(decayLearnings(log.db, T0 + 5 * WEEK_MS).events[0]?.payload.new_confidence).toBe(0.45); // 3 more weeks
    appliedLearning(log.db, 1, T0 + 5 * WEEK_MS); // 0.55, accessed now
    expect(decayLearnings(log.db, T0 + 6 * WEEK_MS - 1).events).toEqual([]);
    expect(decayLearnings(log.db, T0 + 6 * WEEK_MS).events[0]?.payload.new_confidence).toBe(0.5);
    log.close();
  });

  it('prune archives (never deletes) weak and unused learnings; list hides them unless --all; search by tag and text', () => {
    const log = openEventLog(tempDir());
    addLearning(log.db, { type: 'semantic', content: 'JWT with 24h expiry', context: 'auth endpoints', tags: ['auth'], source: 'machine' }, T0);
    addLearning(log.db, { type: 'semantic', content: 'weak', context: '', tags: [], source: 'machine', confidence: 0.15 }, T0 + 80 * DAY_MS);
    addLearning(log.db, { type: 'procedural', content: 'null check first', context: 'auth', tags: ['auth', 'nulls'], source: 'human' }, T0 + 80 * DAY_MS);
    const pruned = pruneLearnings(log.db, T0 + 90 * DAY_MS);
    expect(pruned.archived.map((l) => [l.id, l.archive_reason])).toEqual([
      [1, 'unused'],
      [2, 'low_confidence'],
    ]);
    expect(listLearnings(log.db).map((l) => l.id)).toEqual([3]);
    expect(listLearnings(log.db, { includeArchived: true }).map((l) => l.id)).toEqual([3, 1, 2]);
    expect(listLearnings(log.db, { tag: 'AUTH', includeArchived: true }).map((l) => l.id)).toEqual([3, 1]);
    expect(listLearnings(log.db, { text: 'null CHECK' }).map((l) => l.id)).toEqual([3]);
    expect(Number(log.db.prepare('SELECT count(*) FROM learnings').pluck().get())).toBe(3);
    log.close();
  });
});

describe('forge-reflect learn (CLI)', () => {
  const cli = (args: string[], dir: string) => {
    const r = spawnSync(process.execPath, [CLI, ...args], {
      encoding: 'utf8',
      cwd: dir,
      env: { ...process.env, FORGE_DIR: join(dir, '.forge'), NO_COLOR: '1', FORGE_NOW: '' },
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  it('adds, decays with --now, logs feedback events, and refuses an unknown id with exit 1', () => {
    const dir = tempDir();
    expect(cli(['learn', 'add', '--content', 'x', '--tags', 'a,b', '--source', 'human', '--now', '2025-11-01T00:00:00Z'], dir).stdout).toMatch(
      /added learning #1 \(semantic, confidence 0\.70\)/,
    );
    const decay = cli(['learn', 'decay', '--now', '2025-11-22T00:00:00Z', '--json'], dir);
    expect((JSON.parse(decay.stdout) as { changes: Array<Record<string, unknown>> }).changes).toEqual([
      { type: 'feedback.confidence_decreased', learning_id: 1, old_confidence: 0.7, new_confidence: 0.55, reason: 'decay: 3 week(s) without access' },
    ]);
    const unknown = cli(['learn', 'confirm', '42'], dir);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('forge-reflect: no learning with id 42; see `forge-reflect learn list --all`\n');
    const log = openEventLog(join(dir, '.forge'));
    expect(log.db.prepare("SELECT type FROM events WHERE type LIKE 'feedback.%' ORDER BY ts").pluck().all()).toEqual([
      'feedback.learning_added',
      'feedback.confidence_decreased',
    ]);
    log.close();
  });
});
