/**
 * A reader that stops early (`forge-reflect bounce … | head -c 1`) closes the pipe under a command
 * that still has much to write: the command ends quietly, no stack trace, with the status it
 * would have had. Real pipes through bash; each output is far larger than a pipe's buffer, so the
 * write after the reader has gone always fails with EPIPE.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, cleanupTempDirs, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

/** Runs `node CLI ARGS… | head -c 1`; returns the CLI's status, its stderr and what head read. */
function throughHead(args: string[], cwd: string): { status: number; stderr: string; read: string } {
  const script = 'node "$CLI" "$@" 2>"$ERR" | head -c 1; echo " ${PIPESTATUS[0]}"';
  const err = join(cwd, 'stderr.txt');
  const r = spawnSync('bash', ['-c', script, 'pipe', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, CLI, ERR: err, FORGE_DIR: join(cwd, '.forge'), FORGE_NOW: '2025-11-22T10:00:00Z', NO_COLOR: '1' },
  });
  const [read, status] = r.stdout.split(' ');
  return { status: Number(status), stderr: spawnSync('cat', [err], { encoding: 'utf8' }).stdout, read: read ?? '' };
}

function fullStatus(args: string[], cwd: string): number | null {
  return spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    stdio: 'ignore',
    env: { ...process.env, FORGE_DIR: join(cwd, '.forge'), FORGE_NOW: '2025-11-22T10:00:00Z', NO_COLOR: '1' },
  }).status;
}

describe('a closed stdout pipe', () => {
  it('ends `bounce` with a long fix brief quietly, with its usual status', () => {
    const dir = tempDir();
    const findings = Array.from({ length: 3000 }, (_, i) => ({
      id: `f${i}`,
      severity: 'error',
      category: 'correctness',
      message: `problem ${i} ${'x'.repeat(200)}`,
      confidence: 0.8,
      fixable: true,
      file: `src/f${i}.ts`,
      line: i + 1,
    }));
    writeFileSync(join(dir, 'r.json'), JSON.stringify({ decision: 'request_changes', findings }));
    const r = throughHead(['bounce', '--task', 'acme#1', '--review', 'r.json'], dir);
    expect(r.read).toBe('b'); // "bounce (...)"
    expect(r.stderr).toBe('');
    expect(r.status).toBe(fullStatus(['bounce', '--task', 'acme#2', '--review', 'r.json'], dir));
  });

  it('ends `risk --json` over 20,000 paths quietly with status 0', () => {
    const dir = tempDir();
    const paths = Array.from({ length: 20_000 }, (_, i) => `src/module-${i}/file.ts`);
    const r = throughHead(['risk', '--json', '--', ...paths], dir);
    expect(r).toEqual({ status: 0, stderr: '', read: '{' });
  });

  it('ends `risk --fail-on-review` quietly with the status it sets (3)', () => {
    const dir = tempDir();
    const paths = Array.from({ length: 20_000 }, (_, i) => `src/auth/file-${i}.ts`);
    const r = throughHead(['risk', '--fail-on-review', '--', ...paths], dir);
    expect(r).toEqual({ status: 3, stderr: '', read: 'r' });
  });
});
