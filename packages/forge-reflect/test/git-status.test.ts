/** changedFromStatus: one `git status --porcelain=v2 -z` record list into the session's changed files. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, appendFileSync, mkdirSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { changedFromStatus } from '../src/sidecar/git-status.js';

const SHA = 'a'.repeat(40);
const rec = (...records: string[]) => `${records.join('\0')}\0`;

describe('changedFromStatus (records)', () => {
  it('reads the commit and the branch, and the detached and unborn forms', () => {
    expect(changedFromStatus(rec(`# branch.oid ${SHA}`, '# branch.head main'), 'snapshot')).toEqual({
      files: [],
      untrackedDirs: [],
      head: SHA,
      branch: 'main',
    });
    expect(changedFromStatus(rec('# branch.oid (initial)', '# branch.head (detached)'), 'head')).toEqual({
      files: [],
      untrackedDirs: [],
      head: '',
      branch: '',
    });
  });
  it('against the snapshot counts the work tree column and untracked files only', () => {
    const out = changedFromStatus(
      rec(
        `# branch.oid ${SHA}`,
        '# branch.head main',
        `1 M. N... 100644 100644 100644 ${SHA} ${SHA} dirty before.ts`,
        `1 .M N... 100644 100644 100644 ${SHA} ${SHA} src/auth/a b.ts`,
        `1 .D N... 100644 100644 000000 ${SHA} ${SHA} gone.md`,
        '? new file.txt',
      ),
      'snapshot',
    );
    expect([...out.files].sort()).toEqual(['gone.md', 'new file.txt', 'src/auth/a b.ts']);
  });
  it('keeps a new folder (`? dir/`, --untracked-files=normal) apart, for its files to be listed', () => {
    const out = changedFromStatus(rec(`1 .M N... 100644 100644 100644 ${SHA} ${SHA} a.ts`, '? new/', '? src/auth/', '? file/not-a-dir.ts'), 'snapshot');
    expect(out.files).toEqual(['a.ts', 'file/not-a-dir.ts']);
    expect(out.untrackedDirs).toEqual(['new/', 'src/auth/']);
  });
  it('against HEAD counts staged changes too, and conflicts always', () => {
    const out = changedFromStatus(
      rec(`1 M. N... 100644 100644 100644 ${SHA} ${SHA} staged.ts`, `u UU N... 100644 100644 100644 100644 ${SHA} ${SHA} ${SHA} conflict.ts`),
      'head',
    );
    expect([...out.files].sort()).toEqual(['conflict.ts', 'staged.ts']);
  });
});

describe('changedFromStatus (random record lists)', () => {
  /** The plain reading it must agree with: split on NUL, then each record on its own. */
  function oracle(status: string, base: 'snapshot' | 'head') {
    const files: string[] = [];
    const untrackedDirs: string[] = [];
    let head = '';
    let branch = '';
    for (const r of status.split('\0')) {
      if (r.startsWith('# branch.oid ')) head = r.slice(13) === '(initial)' ? '' : r.slice(13);
      else if (r.startsWith('# branch.head ')) branch = r.slice(14) === '(detached)' ? '' : r.slice(14);
      else if (r[0] === '?') {
        if (r.slice(2) !== '') (r.endsWith('/') ? untrackedDirs : files).push(r.slice(2));
      } else if (r[0] === '1' || r[0] === 'u') {
        const parts = r.split(' ');
        const n = r[0] === '1' ? 8 : 10;
        const path = parts.slice(n).join(' ');
        if (parts.length > n && path !== '' && (r[0] === 'u' || r[3] !== '.' || (base === 'head' && r[2] !== '.'))) files.push(path);
      }
    }
    return { files, untrackedDirs, head, branch };
  }
  it('agrees with a plain split-and-read of the same text', () => {
    let seed = 11;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const pick = <T>(xs: readonly T[]) => xs[next(xs.length)] as T;
    const paths = ['a.ts', 'dir/with space.md', 'é/ü.txt', ' lead', 'x', '', 'a b c', 'new dir/', '/'];
    for (let round = 0; round < 300; round++) {
      const records = Array.from({ length: next(12) }, () => {
        const xy = pick(['.M', 'M.', 'MM', '..', '.D', 'A.', 'UU']);
        switch (next(7)) {
          case 0:
            return `# branch.oid ${pick([SHA, '(initial)'])}`;
          case 1:
            return `# branch.head ${pick(['main', '(detached)', 'feat/x y'])}`;
          case 2:
            return `? ${pick(paths)}`;
          case 3:
            return `u ${xy} N... 100644 100644 100644 100644 ${SHA} ${SHA} ${SHA} ${pick(paths)}`;
          case 4:
            return pick(['?', '1', '1 .M N...', `2 R. N... 100644 100644 100644 ${SHA} ${SHA} R100 new\told`, '! ignored']);
          default:
            return `1 ${xy} N... 100644 100644 100644 ${SHA} ${SHA} ${pick(paths)}`;
        }
      });
      const text = next(2) ? rec(...records) : records.join('\0');
      for (const base of ['snapshot', 'head'] as const) expect(changedFromStatus(text, base)).toEqual(oracle(text, base));
    }
  });
});

describe('changedFromStatus (real git)', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
  const git = (cwd: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
    execFileSync('git', ['-c', 'user.email=t@e', '-c', 'user.name=t', '-c', 'commit.gpgsign=false', ...args], {
      cwd,
      env: { ...process.env, ...env },
      encoding: 'utf8',
    });

  it('lists only what changed after the snapshot: edits, new files, deletions, and commits made meanwhile', () => {
    const repo = mkdtempSync(join(tmpdir(), 'forge-status-'));
    dirs.push(repo);
    git(repo, ['init', '-q', '-b', 'main']);
    writeFileSync(join(repo, 'keep.md'), 'k\n');
    writeFileSync(join(repo, 'del.md'), 'd\n');
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-qm', 'init']);
    appendFileSync(join(repo, 'keep.md'), 'dirty before the session\n');
    writeFileSync(join(repo, 'untracked-before.txt'), 'u\n');
    const snapshot = join(repo, '.git', 'snap.index');
    copyFileSync(join(repo, '.git', 'index'), snapshot);
    git(repo, ['add', '-A'], { GIT_INDEX_FILE: snapshot });
    // The session: a new auth file, a deletion, a commit of a new doc.
    mkdirSync(join(repo, 'src', 'auth'), { recursive: true });
    writeFileSync(join(repo, 'src', 'auth', 't.ts'), 'x\n');
    git(repo, ['rm', '-q', 'del.md']);
    writeFileSync(join(repo, 'doc.md'), 'doc\n');
    git(repo, ['add', 'doc.md']);
    git(repo, ['commit', '-qm', 'agent']);
    const status = git(repo, ['status', '--porcelain=v2', '-z', '--branch', '--untracked-files=normal', '--no-renames'], { GIT_INDEX_FILE: snapshot });
    const out = changedFromStatus(status, 'snapshot');
    expect([...out.files].sort()).toEqual(['del.md', 'doc.md']);
    // The new folder is one record; the helper lists its files (helper/changed-files.ts, untrackedFiles).
    expect(out.untrackedDirs).toEqual(['src/']);
    expect(out.branch).toBe('main');
    expect(out.head).toMatch(/^[0-9a-f]{40}$/);
  });
});
