/**
 * `--` ends the options: `risk --json -- <paths>`, `validate -- <files>` and `show -- <file>` take
 * what follows as their paths, even names that start with `-`.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fillPositionals, positionalsOf, splitAtDoubleDash, withOptionalPositionals } from '../src/operands.js';
import { CLI, cleanupTempDirs, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

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

function cli(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    cwd,
    env: { ...process.env, FORGE_DIR: join(cwd, '.forge'), NO_COLOR: '1', REFLECTION_DIR: '' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('operands after --', () => {
  it('splits at the first -- only', () => {
    expect(splitAtDoubleDash(['risk', '--json', '--', 'a', '--', '-b'])).toEqual({ options: ['risk', '--json'], operands: ['a', '--', '-b'] });
    expect(splitAtDoubleDash(['risk', 'a'])).toEqual({ options: ['risk', 'a'], operands: undefined });
  });

  it('reads the positionals of a command string and makes them optional', () => {
    expect(positionalsOf('learn <action> [target]')).toEqual([
      { name: 'action', required: true, variadic: false },
      { name: 'target', required: false, variadic: false },
    ]);
    expect(positionalsOf('validate <paths..>')).toEqual([{ name: 'paths', required: true, variadic: true }]);
    expect(withOptionalPositionals('show <sidecar>')).toBe('show [sidecar]');
  });

  it('fills given positionals first, then from the operands; leftovers and missing ones are usage errors', () => {
    expect(fillPositionals({ files: ['a'] }, positionalsOf('risk [files..]'), ['-b', 'c'], 'risk [files..]')).toMatchObject({ files: ['a', '-b', 'c'] });
    expect(fillPositionals({ action: 'search' }, positionalsOf('learn <action> [target]'), ['-x'], 'learn <action> [target]')).toMatchObject({
      action: 'search',
      target: '-x',
    });
    expect(() => fillPositionals({}, positionalsOf('show <sidecar>'), [], 'show <sidecar>')).toThrow(/show needs sidecar/);
    expect(() => fillPositionals({}, positionalsOf('ingest'), ['x'], 'ingest')).toThrow(/unexpected argument after --: "x"/);
  });

  it('risk --json -- <paths> evaluates every path, one starting with - included', () => {
    const dir = tempDir();
    const r = cli(['risk', '--json', '--', 'src/auth/token.ts', '-notes.md'], dir);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { surface: string; files: { path: string }[] };
    expect(out.surface).toBe('auth');
    expect(out.files.map((f) => f.path)).toEqual(['src/auth/token.ts', '-notes.md']);
    const mixed = cli(['risk', '--json', 'README.md', '--', '-x.ts'], dir);
    expect(JSON.parse(mixed.stdout).files.map((f: { path: string }) => f.path)).toEqual(['README.md', '-x.ts']);
  });

  it('validate -- <file> and show -- <file> take the file after the --', () => {
    const dir = tempDir();
    const file = join(dir, '-odd.reflection.json');
    writeFileSync(file, JSON.stringify(SIDECAR));
    const v = cli(['validate', '--', '-odd.reflection.json'], dir);
    expect(v.code, v.stderr).toBe(0);
    const s = cli(['show', '--json', '--', '-odd.reflection.json'], dir);
    expect(s.code, s.stderr).toBe(0);
    expect(JSON.parse(s.stdout)).toMatchObject({ task_ref: 'acme#42' });
  });

  it('an operand nobody takes is one usage line, exit 2', () => {
    const r = cli(['ingest', '--', 'stray'], tempDir());
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe('forge-reflect: unexpected argument after --: "stray"; ingest takes no paths or names');
  });
});
