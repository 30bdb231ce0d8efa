/**
 * The warm sidecar index touches no file: a folder unchanged since it was last listed is skipped
 * after one stat of the folder itself; a folder that changed is listed again; a folder whose time
 * is too close to its listing (a coarse file-system clock) is never trusted.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { evaluateRiskFloor } from '@forge-reflect/risk-floor';
import { cleanupTempDirs, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'forge-reflect.js');

function sidecar(i: number, surfaceFile = 'src/util.ts'): string {
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
    risk: evaluateRiskFloor({ filesChanged: [surfaceFile] }),
    files_changed: [surfaceFile],
    provenance: { source: 'stop-hook', reflection_attempt: 1, degraded: false, reflection_mode: 'solo' },
  });
}

function setup(): { dir: string; report: () => any; age: () => void } {
  const root = tempDir();
  const dir = join(root, 'reflections');
  const state = join(root, 'state');
  mkdirSync(dir);
  mkdirSync(state);
  for (let i = 0; i < 3; i++) writeFileSync(join(dir, `${i}-s.reflection.json`), sidecar(i));
  const report = () => {
    const r = spawnSync(process.execPath, [CLI, 'report', '--dir', dir, '--json', '--limit', '0'], {
      encoding: 'utf8',
      env: { ...process.env, FORGE_DIR: state },
    });
    expect(r.status, r.stderr).toBe(0);
    return JSON.parse(r.stdout);
  };
  // The folder last changed an hour ago: well before any listing.
  const old = new Date(Date.now() - 3_600_000);
  const age = () => utimesSync(dir, old, old);
  return { dir, report, age };
}

describe('warm sidecar index', () => {
  it('skips an unchanged folder without reading or even opening its files', () => {
    const { dir, report, age } = setup();
    age();
    expect(report().index).toEqual({ files: 3, unchanged_dirs: 0, read: 3, removed: 0 });
    // Remove every file, then give the folder back its old time: a report that looked at the files
    // would see none; the warm index does not look, and answers from what it knows.
    for (let i = 0; i < 3; i++) unlinkSync(join(dir, `${i}-s.reflection.json`));
    age();
    const warm = report();
    expect(warm.index).toEqual({ files: 3, unchanged_dirs: 1, read: 0, removed: 0 });
    expect(warm.summary.sidecars).toBe(3);
  });

  it('lists a folder again once a sidecar is added, removed or renamed into it', () => {
    const { dir, report, age } = setup();
    age();
    report();
    writeFileSync(join(dir, '.tmp-new'), sidecar(5, 'src/auth/login.ts'));
    spawnSync('mv', [join(dir, '.tmp-new'), join(dir, '5-s.reflection.json')]);
    const after = report();
    expect(after.index).toEqual({ files: 4, unchanged_dirs: 0, read: 1, removed: 0 });
    expect(after.summary.by_surface.auth).toBe(1);
  });

  it('does not trust a folder time less than 2 s before its listing (a coarse clock could hide an added file)', () => {
    const { dir, report } = setup();
    // A time later than any listing in this test, however slow the machine: never 2 s before one.
    const later = new Date(Date.now() + 600_000);
    utimesSync(dir, later, later);
    report();
    expect(report().index.unchanged_dirs).toBe(0);
  });
});
