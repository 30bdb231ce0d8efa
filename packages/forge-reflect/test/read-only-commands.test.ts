/**
 * A command that only reads never creates state: run in an empty folder, or in a git repository
 * without `.forge/`, it finds nothing, says so, and leaves no file behind (no `.forge/`, no
 * `events.db`). Commands that write create the state they need.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, cleanupTempDirs, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const READING: ReadonlyArray<readonly string[]> = [
  ['doctor'],
  ['doctor', '--json'],
  ['metrics'],
  ['metrics', '--json', '--days', '30'],
  ['metrics', '--trend'],
  ['report'],
  ['report', '--json'],
  ['report', '--format', 'markdown'],
  ['events'],
  ['events', '--json'],
  ['show', '2025'],
  ['corpus'],
  ['learn', 'list'],
  ['learn', 'search', 'null check'],
  ['learn', 'decay'],
  ['learn', 'prune'],
  ['learn', 'confirm', '1'],
  ['ingest'],
  ['validate', '.'],
  ['risk', 'src/auth/x.ts'],
  ['schema'],
];

const SIDECAR = {
  schema: 'reflection.v1',
  task_ref: 'acme#42',
  agent: 'claude-code',
  session_id: 's1',
  timestamp: '2025-11-22T09:00:00Z',
  repo: 'acme',
  confidence: 0.8,
  most_likely_wrong: null,
  known_not_in_diff: null,
  risk: { needs_review: false, score: 0, surface: 'none', reason: 'no files changed' },
  files_changed: [],
  provenance: { source: 'stop-hook', reflection_attempt: 1, degraded: false, reflection_mode: 'solo' },
};

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => relative(dir, join(dir, f)))
    .filter((f) => f !== '.git' && !f.startsWith(`.git/`))
    .sort();
}

function cli(args: readonly string[], cwd: string) {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', FORGE_NOW: '2025-11-22T12:00:00Z' };
  for (const name of ['FORGE_DIR', 'REFLECTION_DIR', 'FORGE_PROJECT_DIR', 'CLAUDE_PROJECT_DIR', 'GEMINI_PROJECT_DIR', 'REFLECTION_MODE']) delete env[name];
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, env, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function gitRepo(): string {
  const dir = tempDir();
  expect(spawnSync('git', ['init', '-q', dir]).status).toBe(0);
  return dir;
}

describe.each([
  ['an empty folder outside any repository', () => tempDir()],
  ['a git repository without .forge', gitRepo],
])('reading commands in %s', (_where, make) => {
  it.each(READING.map((args) => [args.join(' '), args] as const))('%s creates nothing', (_name, args) => {
    const dir = make();
    const before = files(dir);
    const r = cli(args, dir);
    expect(r.stderr, r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect([0, 1]).toContain(r.code);
    expect(files(dir)).toEqual(before);
  });
});

describe('reading commands with no state say so plainly', () => {
  it('events, learn list and metrics --json answer from an empty log', () => {
    const dir = tempDir();
    expect(cli(['events'], dir)).toMatchObject({ code: 0, stdout: 'no events match\n' });
    expect(cli(['learn', 'list'], dir)).toMatchObject({ code: 0, stdout: 'no learnings match\n' });
    const metrics = cli(['metrics', '--json'], dir);
    expect(metrics.code).toBe(0);
    expect(JSON.parse(metrics.stdout)).toBeTypeOf('object');
    expect(files(dir)).toEqual([]);
  });
});

describe('a report of sidecars kept elsewhere', () => {
  it('reads them without creating state in the current folder', () => {
    const repo = gitRepo();
    const sidecars = tempDir();
    writeFileSync(join(sidecars, '20251122T090000-s1.reflection.json'), JSON.stringify(SIDECAR));
    const r = spawnSync(process.execPath, [CLI, 'report', '--json', '--dir', sidecars], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, FORGE_DIR: '' },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).summary.sidecars).toBe(1);
    expect(files(repo)).toEqual([]);
  });
});

describe('writing commands create the state they need', () => {
  it('learn add and outcome create .forge/ with its event log', () => {
    const dir = gitRepo();
    expect(cli(['learn', 'add', '--content', 'check nulls', '--context', 'auth'], dir).code).toBe(0);
    expect(files(dir)).toEqual(expect.arrayContaining(['.forge', '.forge/.gitignore', '.forge/events.db']));
    const other = tempDir();
    expect(cli(['outcome', '--task', 'acme#1', '--correct'], other).code).toBe(0);
    expect(files(other)).toEqual(expect.arrayContaining(['.forge/events.db']));
  });
});
