/**
 * `forge-reflect corpus`: the join of sidecars and outcomes (by task, the last sidecar at or before
 * the outcome), and the path from sidecars to a calibration verdict end to end.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { ReflectionV1Dto } from '@forge-reflect/reflection-types';
import { evaluateRiskFloor } from '@forge-reflect/risk-floor';
import { joinCorpus } from '../src/analysis/corpus-join.js';
import { openEventLog } from '../src/log/event-log.js';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'forge-reflect.js');
const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

describe('joinCorpus', () => {
  const s = (path: string, task: string, ts: string, confidence: number) => ({ path, task_ref: task, ts, confidence });
  const o = (id: number, task: string, at: string, correct: boolean) => ({ id, task_ref: task, at, correct, source: 'ci' });

  it('takes the last sidecar of the task at or before the outcome; later outcomes supersede', () => {
    const sidecars = [
      s('a1', 'A', '2026-01-01T10:00:00.000000Z', 0.9),
      s('a2', 'A', '2026-01-01T12:00:00.000000Z', 0.6),
      s('b1', 'B', '2026-01-01T10:00:00.000000Z', 0.4),
    ];
    const j = joinCorpus(sidecars, [
      o(1, 'A', '2026-01-01T11:00:00.000000Z', false), // → a1
      o(2, 'A', '2026-01-01T13:00:00.000000Z', true), // → a2
      o(3, 'A', '2026-01-01T14:00:00.000000Z', false), // → a2 again: supersedes outcome 2
      o(4, 'B', '2026-01-01T09:00:00.000000Z', true), // before any B sidecar: unmatched
      o(5, 'C', '2026-01-01T09:00:00.000000Z', true), // no such task: unmatched
      o(6, 'A', '2026-01-01T12:00:00.000000Z', true), // exactly at a2's time: a2, but older than outcome 3
    ]);
    expect(j.rows.map((r) => [r.sidecar, r.confidence, r.correct])).toEqual([
      ['a1', 0.9, false],
      ['a2', 0.6, false],
    ]);
    expect(j).toMatchObject({ outcomes: 6, unmatched: 2, superseded: 2 });
  });
});

function sidecar(i: number, task: string, ts: string, confidence: number | null): ReflectionV1Dto {
  const files = ['src/util.ts'];
  return {
    schema: 'reflection.v1',
    task_ref: task,
    agent: 'claude-code',
    session_id: `sess-${i}`,
    timestamp: ts,
    repo: 'acme',
    confidence,
    most_likely_wrong: confidence === null ? null : { surface: 'none', description: 'a guess' },
    known_not_in_diff: null,
    risk: evaluateRiskFloor({ filesChanged: files }),
    files_changed: files,
    provenance: { source: 'stop-hook', reflection_attempt: 1, degraded: confidence === null, reflection_mode: 'solo' },
  } as ReflectionV1Dto;
}

describe('forge-reflect corpus end to end', () => {
  it('writes the JSONL that analyze calibration reads', () => {
    const root = mkdtempSync(join(tmpdir(), 'forge-corpus-'));
    roots.push(root);
    const state = join(root, 'state');
    const dir = join(root, 'reflections');
    mkdirSync(dir, { recursive: true });
    const expected: Array<{ confidence: number; correct: boolean }> = [];
    const log = openEventLog(state);
    const insert = log.db.prepare('INSERT INTO outcomes (task_ref, correct, source, at, note, recorded_at) VALUES (?, ?, ?, ?, NULL, ?)');
    for (let i = 0; i < 30; i++) {
      const ts = new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
      const confidence = i % 10 === 0 ? null : (i % 10) / 10;
      writeFileSync(join(dir, `${String(i).padStart(3, '0')}.reflection.json`), JSON.stringify(sidecar(i, `acme#${i}`, ts, confidence)));
      const correct = i % 3 !== 0;
      const at = new Date(Date.UTC(2026, 0, 2, 0, i)).toISOString();
      insert.run(`acme#${i}`, correct ? 1 : 0, 'ci', at, at);
      if (confidence !== null) expected.push({ confidence, correct });
    }
    log.close();
    const out = join(root, 'corpus.jsonl');
    const r = spawnSync(process.execPath, [CLI, 'corpus', '--dir', dir, '--out', out], { encoding: 'utf8', env: { ...process.env, FORGE_DIR: state } });
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/27 row\(s\) from 30 outcome\(s\)/);
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((x) => ({ confidence: x.confidence, correct: x.correct }))).toEqual(expected);
    const a = spawnSync(process.execPath, [CLI, 'analyze', 'calibration', '--corpus', out, '--bootstrap', '50'], { encoding: 'utf8' });
    expect(a.status).toBe(0);
    const report = JSON.parse(a.stdout);
    expect(report.overall.n).toBe(27);
    expect(report.overall.correct).toBe(expected.filter((e) => e.correct).length);
  });
});

describe('forge-reflect corpus --dir a --dir b (a team)', () => {
  it("pools each folder's own outcomes with its sidecars; the teammates' logs are left unchanged", () => {
    const root = mkdtempSync(join(tmpdir(), 'forge-corpus-team-'));
    roots.push(root);
    const expected: Array<{ task: string; correct: boolean }> = [];
    const dirs: string[] = [];
    ['alice', 'bob'].forEach((who, w) => {
      const state = join(root, who, '.forge');
      const dir = join(state, 'reflections');
      mkdirSync(dir, { recursive: true });
      dirs.push(dir);
      const log = openEventLog(state);
      const insert = log.db.prepare('INSERT INTO outcomes (task_ref, correct, source, at, note, recorded_at) VALUES (?, ?, ?, ?, NULL, ?)');
      for (let i = 0; i < 3; i++) {
        const task = `${who}#${i}`;
        writeFileSync(
          join(dir, `${who}-${i}.reflection.json`),
          JSON.stringify(sidecar(w * 10 + i, task, new Date(Date.UTC(2026, 0, 1, w, i)).toISOString(), 0.5 + i / 10)),
        );
        const correct = (i + w) % 2 === 0;
        const at = new Date(Date.UTC(2026, 0, 3, w, i)).toISOString();
        insert.run(task, correct ? 1 : 0, 'human', at, at);
        expected.push({ task, correct });
      }
      log.close();
    });
    const lead = join(root, 'lead', '.forge');
    const before = ['alice', 'bob'].map((who) => readFileSync(join(root, who, '.forge', 'events.db')));
    const r = spawnSync(process.execPath, [CLI, 'corpus', '--dir', dirs[0] as string, '--dir', dirs[1] as string], {
      encoding: 'utf8',
      env: { ...process.env, FORGE_DIR: lead },
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/6 row\(s\) from 6 outcome\(s\) pooled from 3 logs/);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { task_ref: string; correct: boolean });
    expect(rows.map((x) => ({ task: x.task_ref, correct: x.correct }))).toEqual(expected);
    ['alice', 'bob'].forEach((who, i) => expect(readFileSync(join(root, who, '.forge', 'events.db')).equals(before[i] as Buffer)).toBe(true));
  });
});
