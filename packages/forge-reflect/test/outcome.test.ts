import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openEventLog } from '../src/log/event-log.js';
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

function cli(args: string[], dir: string) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    cwd: dir,
    env: { ...process.env, FORGE_DIR: join(dir, '.forge'), NO_COLOR: '1', FORGE_NOW: '2025-11-22T12:00:00Z', REFLECTION_DIR: '' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('forge-reflect outcome', () => {
  it('records an outcome for a task known from a sidecar, and one for an unknown task saying so', () => {
    const dir = tempDir();
    mkdirSync(join(dir, '.forge', 'reflections'), { recursive: true });
    writeFileSync(join(dir, '.forge', 'reflections', '20251122T090000-s1.reflection.json'), JSON.stringify(SIDECAR));
    const known = cli(
      ['outcome', '--task', 'acme#42', '--wrong', '--source', 'revert', '--at', '2025-11-22T11:00:00Z', '--note', 'reverted in #57', '--json'],
      dir,
    );
    expect(known.code).toBe(0);
    expect(JSON.parse(known.stdout)).toEqual({
      id: 1,
      task_ref: 'acme#42',
      correct: false,
      source: 'revert',
      at: '2025-11-22T11:00:00.000000Z',
      note: 'reverted in #57',
      known_task: true,
    });
    const unknown = cli(['outcome', '--task', 'acme#99', '--correct'], dir);
    expect(unknown.code).toBe(0);
    expect(unknown.stdout).toMatch(/recorded outcome #2: acme#99 was correct \(human, 2025-11-22T12:00:00.000000Z\)/);
    expect(unknown.stdout).toMatch(/no sidecar or check names acme#99/);
    const log = openEventLog(join(dir, '.forge'));
    expect(log.db.prepare('SELECT task_ref, correct, source, note FROM outcomes ORDER BY id').all()).toEqual([
      { task_ref: 'acme#42', correct: 0, source: 'revert', note: 'reverted in #57' },
      { task_ref: 'acme#99', correct: 1, source: 'human', note: null },
    ]);
    log.close();
  });

  it('refuses both or neither of --correct/--wrong and a bad time (usage, exit 2), one line', () => {
    const dir = tempDir();
    for (const args of [['--correct', '--wrong'], [], ['--correct', '--at', 'yesterday']]) {
      const r = cli(['outcome', '--task', 'x', ...args], dir);
      expect(r.code).toBe(2);
      expect(r.stderr.split('\n')[0]).toMatch(/^forge-reflect: /);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
