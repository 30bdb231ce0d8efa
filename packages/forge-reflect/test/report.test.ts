/**
 * `forge-reflect report` over a generated corpus of 10,000 sidecars (plus invalid files): every
 * filter's count is computed here from the generator's own list, not by the code under test, and
 * the incremental index is shown to read only what changed.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REVIEW_SURFACES, type ReflectionV1Dto } from '@forge-reflect/reflection-types';
import { evaluateRiskFloor } from '@forge-reflect/risk-floor';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'forge-reflect.js');
const N = 10_000;
const AGENTS = ['claude-code', 'codex', 'reviewer-bot'];
const SURFACE_PATHS: Record<string, string> = {
  auth: 'src/auth/login.ts',
  data: 'db/migrations/001.sql',
  infra: 'deploy/helm/values.yaml',
  build: 'package.json',
  ui: 'src/components/Button.tsx',
  test: 'src/x.test.ts',
  docs: 'docs/guide.md',
  none: 'src/util.ts',
};
const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);

function sidecar(i: number): ReflectionV1Dto {
  const surface = REVIEW_SURFACES[i % REVIEW_SURFACES.length] as string;
  const files = [SURFACE_PATHS[surface] as string, `src/extra-${i}.ts`];
  const ts = new Date(T0 + i * 60_000).toISOString().replace('.000Z', i % 2 ? 'Z' : '.5Z');
  return {
    schema: 'reflection.v1',
    task_ref: `acme#task-${i % 7}`,
    agent: AGENTS[i % AGENTS.length] as string,
    session_id: `sess-${String(i % 50).padStart(3, '0')}-${i % 3}`,
    timestamp: ts,
    repo: 'acme',
    confidence: i % 4 === 0 ? null : (i % 10) / 10,
    most_likely_wrong: i % 4 === 0 ? null : { surface: 'none', description: `guess ${i}` },
    known_not_in_diff: null,
    risk: evaluateRiskFloor({ filesChanged: files }),
    files_changed: files,
    provenance: { source: 'stop-hook', reflection_attempt: 1 + (i % 3), degraded: i % 4 === 0 || i % 9 === 0, reflection_mode: 'solo' },
  };
}

let root: string;
let dir: string;
let state: string;
const corpus: ReflectionV1Dto[] = [];

function report(...args: string[]): { status: number | null; json: any; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, 'report', '--dir', dir, '--json', ...args], {
    encoding: 'utf8',
    env: { ...process.env, FORGE_DIR: state, NO_COLOR: '1' },
    maxBuffer: 256 * 1024 * 1024,
  });
  return { status: r.status, json: r.status === 0 ? JSON.parse(r.stdout) : null, stderr: r.stderr };
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'forge-report-'));
  dir = join(root, 'reflections');
  state = join(root, 'state');
  spawnSync('mkdir', ['-p', dir, state]); // the index is kept in an existing state folder (a report never creates one)
  for (let i = 0; i < N; i++) {
    const s = sidecar(i);
    corpus.push(s);
    writeFileSync(join(dir, `${String(i).padStart(5, '0')}-sess.reflection.json`), JSON.stringify(s));
  }
  writeFileSync(join(dir, 'broken.reflection.json'), '{"schema": "reflection.v1", ');
  writeFileSync(join(dir, 'wrong.reflection.json'), JSON.stringify({ ...sidecar(1), risk: { ...sidecar(1).risk, score: 7 } }));
  writeFileSync(join(dir, 'notes.txt'), 'not a sidecar, not listed');
}, 120_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

const count = (pred: (s: ReflectionV1Dto) => boolean) => corpus.filter(pred).length;

describe('report over 10,000 sidecars', () => {
  it('summarises the whole corpus exactly, and lists the invalid files with their reasons', () => {
    const { status, json } = report('--limit', '5');
    expect(status).toBe(0);
    expect(json.summary.sidecars).toBe(N);
    expect(json.summary.needs_review).toBe(count((s) => s.risk.needs_review));
    expect(json.summary.degraded).toBe(count((s) => s.provenance.degraded));
    expect(json.summary.confidence_reported).toBe(count((s) => s.confidence !== null));
    const confident = corpus.filter((s) => s.confidence !== null);
    expect(json.summary.mean_confidence).toBeCloseTo(confident.reduce((a, s) => a + (s.confidence as number), 0) / confident.length, 10);
    for (const surface of REVIEW_SURFACES) expect(json.summary.by_surface[surface]).toBe(count((s) => s.risk.surface === surface));
    expect(json.summary.invalid).toBe(2);
    expect(json.invalid.map((i: { path: string }) => i.path.split('/').pop())).toEqual(['broken.reflection.json', 'wrong.reflection.json']);
    expect(json.invalid[1].error).toContain('/risk/score');
    expect(json.rows).toHaveLength(5);
    expect(json.omitted).toBe(N - 5);
    expect(json.rows[0].timestamp).toBe(`${new Date(T0 + (N - 1) * 60_000).toISOString().slice(0, 19)}.000000Z`);
  });

  it.each([
    ['--surface auth', ['--surface', 'auth'], (s: ReflectionV1Dto) => s.risk.surface === 'auth'],
    ['--needs-review', ['--needs-review'], (s: ReflectionV1Dto) => s.risk.needs_review],
    ['--no-needs-review', ['--no-needs-review'], (s: ReflectionV1Dto) => !s.risk.needs_review],
    ['--agent codex', ['--agent', 'codex'], (s: ReflectionV1Dto) => s.agent === 'codex'],
    ['--task acme#task-3', ['--task', 'acme#task-3'], (s: ReflectionV1Dto) => s.task_ref === 'acme#task-3'],
    ['--session sess-007 (prefix)', ['--session', 'sess-007'], (s: ReflectionV1Dto) => s.session_id.startsWith('sess-007')],
    ['--session exact', ['--session', 'sess-007-1'], (s: ReflectionV1Dto) => s.session_id === 'sess-007-1'],
    ['--degraded', ['--degraded'], (s: ReflectionV1Dto) => s.provenance.degraded],
    [
      '--since/--until window',
      ['--since', '2026-01-02T00:00:00Z', '--until', '2026-01-03T00:00:00Z'],
      (s: ReflectionV1Dto) => Date.parse(s.timestamp) >= Date.UTC(2026, 0, 2) && Date.parse(s.timestamp) <= Date.UTC(2026, 0, 3),
    ],
    [
      'combined',
      ['--surface', 'data', '--agent', 'claude-code', '--degraded'],
      (s: ReflectionV1Dto) => s.risk.surface === 'data' && s.agent === 'claude-code' && s.provenance.degraded,
    ],
  ])('%s gives the exact count', (_name, args, pred) => {
    const { status, json } = report('--limit', '0', ...args);
    expect(status).toBe(0);
    const expected = count(pred);
    expect(expected).toBeGreaterThan(0);
    expect(json.summary.sidecars).toBe(expected);
    expect(json.rows).toHaveLength(0);
  });

  it('a second report reads only what changed: one edited, one added, one removed', () => {
    const first = report('--limit', '0');
    expect(first.json.index.read).toBe(0);
    const edited = sidecar(3);
    edited.risk = evaluateRiskFloor({ filesChanged: ['src/auth/x.ts'] });
    writeFileSync(join(dir, '00003-sess.reflection.json'), `${JSON.stringify(edited)}\n`);
    writeFileSync(join(dir, 'zz-new.reflection.json'), JSON.stringify(sidecar(N)));
    unlinkSync(join(dir, '00010-sess.reflection.json'));
    const second = report('--limit', '0');
    expect(second.json.index).toEqual({ files: N + 2, unchanged_dirs: 0, read: 2, removed: 1 });
    expect(second.json.summary.sidecars).toBe(N);
  });

  it('refuses a bad --since and --limit with exit 2 and an example', () => {
    const bad = report('--since', 'yesterday-ish');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--since .*e\.g\.|--since 30m/);
    expect(report('--limit', '-1').status).toBe(2);
  });
});
