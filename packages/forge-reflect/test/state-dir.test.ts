import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureStateDir, gitToplevel, resolveStateDir } from '../src/state-dir.js';
import { cleanupTempDirs, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const noGit = () => undefined;

describe('resolveStateDir', () => {
  it('uses $FORGE_DIR first (relative to the cwd), ignoring an empty one', () => {
    expect(resolveStateDir({ env: { FORGE_DIR: '/var/forge' }, cwd: '/repo', gitToplevel: () => '/top' })).toBe('/var/forge');
    expect(resolveStateDir({ env: { FORGE_DIR: 'state' }, cwd: '/repo/sub', gitToplevel: () => '/top' })).toBe('/repo/sub/state');
    expect(resolveStateDir({ env: { FORGE_DIR: '' }, cwd: '/repo/sub', gitToplevel: () => '/top' })).toBe('/top/.forge');
  });

  it('else the git toplevel of the cwd, else the cwd', () => {
    expect(resolveStateDir({ env: {}, cwd: '/repo/src/deep', gitToplevel: () => '/repo' })).toBe('/repo/.forge');
    expect(resolveStateDir({ env: {}, cwd: '/tmp/loose', gitToplevel: noGit })).toBe('/tmp/loose/.forge');
  });

  it('asks git for the toplevel of a real work tree, and gets nothing outside one', () => {
    const repo = realpathSync(tempDir());
    execFileSync('git', ['init', '-q', repo]);
    const sub = join(repo, 'a', 'b');
    mkdirSync(sub, { recursive: true });
    expect(gitToplevel(sub)).toBe(repo);
    expect(resolveStateDir({ env: {}, cwd: sub })).toBe(join(repo, '.forge'));
    const loose = realpathSync(tempDir());
    expect(gitToplevel(loose)).toBeUndefined();
    expect(resolveStateDir({ env: {}, cwd: loose })).toBe(join(loose, '.forge'));
  });
});

describe('ensureStateDir', () => {
  it('creates the folder 0700 with a .gitignore of *, whatever the umask', () => {
    const dir = join(tempDir(), 'nested', '.forge');
    const old = process.umask(0o000);
    try {
      ensureStateDir(dir);
    } finally {
      process.umask(old);
    }
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe('*\n');
  });

  it('is idempotent and keeps an existing .gitignore', () => {
    const dir = join(tempDir(), '.forge');
    ensureStateDir(dir);
    ensureStateDir(dir);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe('*\n');
  });

  it('fails with a one-line UserError when the folder cannot be made', () => {
    const file = join(tempDir(), 'plain-file');
    execFileSync('touch', [file]);
    expect(() => ensureStateDir(join(file, '.forge'))).toThrow(/cannot create the state folder .* set FORGE_DIR/);
  });
});
