/**
 * P2 over histories built here: message parsing, the gate heuristic, a small repository with known
 * reverts (with and without the body line), fixes, a merge and a rename, and a generated
 * 3,000-commit repository (git fast-import) whose signals are counted from the generator.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitKind, namesFailingCheck, parseConventional, parseRevert } from '../src/analysis/commit-message.js';
import { classifyGate } from '../src/analysis/gates.js';
import { parseRecord, RecordSplitter, writtenAt } from '../src/analysis/git-log.js';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'forge-reflect.js');
const DAY = 86_400;
const T0 = 1_767_225_600; // 2026-01-01T00:00:00Z

describe('commit messages', () => {
  it('reads Conventional Commits headers', () => {
    expect(parseConventional('feat(parser)!: add arrays')).toEqual({ type: 'feat', scope: 'parser', breaking: true, description: 'add arrays' });
    expect(parseConventional('Fix: thing')?.type).toBe('fix');
    expect(parseConventional('fix thing')).toBeNull();
  });

  it('reads every revert form', () => {
    const sha = 'a'.repeat(40);
    expect(parseRevert(`Revert "feat: x"\n\nThis reverts commit ${sha}.`)).toEqual({ kind: 'revert', sha, quoted: 'feat: x' });
    expect(parseRevert('Revert "feat: x"')).toEqual({ kind: 'revert', sha: null, quoted: 'feat: x' });
    expect(parseRevert(`Reapply "feat: x"\n\nThis reverts commit ${sha}.`)?.kind).toBe('reapply');
    expect(parseRevert('Revert "Revert "feat: x""')?.quoted).toBe('Revert "feat: x"');
    expect(parseRevert('revert: drop x\n\nRefs: abcdef1')).toEqual({ kind: 'revert', sha: 'abcdef1', quoted: null });
    expect(parseRevert(`undo\n\nThis reverts commit ${sha}, reversing\nchanges made to ${'b'.repeat(40)}.`)?.sha).toBe(sha);
    expect(parseRevert('feat: revert button')).toBeNull();
  });

  it('classifies fixes by type, or by keyword when the repo is not conventional', () => {
    expect(commitKind('fix(api): null check', 'conventional')).toBe('fix');
    expect(commitKind('hotfix: prod down', 'conventional')).toBe('fix');
    expect(commitKind('feat: x', 'conventional')).toBe('feature');
    expect(commitKind('docs: fix typo', 'conventional')).toBe('other');
    expect(commitKind('Fixed the crash on save', 'keyword')).toBe('fix');
    expect(commitKind('Add prefix option', 'keyword')).toBe('feature');
    expect(commitKind('Revert "Add prefix option"', 'keyword')).toBe('revert');
  });

  it('names a failing build or test only with both words', () => {
    expect(namesFailingCheck('fix: the build is failing on main')).toBe(true);
    expect(namesFailingCheck('fix flaky test in parser')).toBe(true);
    expect(namesFailingCheck('fix: build script path')).toBe(false);
  });
});

describe('gate heuristic', () => {
  it('CI for a test in the fix, a named failing check or a defect in CI/build files; then the risk floor on the introducing change; then self-reflection', () => {
    expect(classifyGate({ fixFiles: ['src/a.ts', 'src/a.test.ts'], fixMessage: 'fix: a', inducingFiles: ['src/auth/x.ts'] }).gate).toBe('ci');
    expect(classifyGate({ fixFiles: ['.github/workflows/ci.yml'], fixMessage: 'fix', inducingFiles: ['.github/workflows/ci.yml'] }).gate).toBe('ci');
    expect(
      classifyGate({ fixFiles: ['package.json'], fixMessage: 'fix', inducingFiles: ['src/a.ts', 'package.json'], defectFiles: ['package.json'] }).gate,
    ).toBe('ci');
    expect(classifyGate({ fixFiles: ['package.json'], fixMessage: 'fix', inducingFiles: [] }).gate).toBe('self_reflection');
    expect(classifyGate({ fixFiles: ['src/a.ts'], fixMessage: 'fix: tests fail on CI', inducingFiles: [] }).gate).toBe('ci');
    expect(classifyGate({ fixFiles: ['src/a.ts'], fixMessage: 'fix: a', inducingFiles: ['db/migrations/001.sql'] }).gate).toBe('human_review');
    expect(classifyGate({ fixFiles: ['src/a.ts'], fixMessage: 'fix: a', inducingFiles: ['src/a.ts', 'README.md'] }).gate).toBe('self_reflection');
  });
});

describe('the git log record parser', () => {
  it('parses renames, merges, root commits and records split across chunks', () => {
    const records: string[] = [];
    const splitter = new RecordSplitter((r) => records.push(r));
    const text =
      `\u001e${'a'.repeat(40)}\u001f${'b'.repeat(40)}\u001f100\u001f90\u001fAnn <a@x>\u001ffeat: x\n\nbody\n\u001f\0\nR100\0old.ts\0new.ts\0M\0c.ts\0` +
      `\u001e${'b'.repeat(40)}\u001f\u001f50\u001f\u001fBob <b@x>\u001froot\n\u001f\0\nA\0old.ts\0`;
    for (let i = 0; i < text.length; i += 7) splitter.push(text.slice(i, i + 7));
    splitter.end();
    expect(records).toHaveLength(2);
    const first = parseRecord(records[0] as string);
    expect(first?.files).toEqual([
      { status: 'R', path: 'new.ts', from: 'old.ts' },
      { status: 'M', path: 'c.ts' },
    ]);
    expect(first?.message).toBe('feat: x\n\nbody');
    expect(first?.author).toBe('Ann <a@x>');
    expect([first?.time, first?.authorTime]).toEqual([100, 90]);
    const root = parseRecord(records[1] as string);
    expect(root?.parents).toEqual([]);
    expect(root?.authorTime).toBeNull(); // an empty %at (a commit with no usable author date)
  });

  it('a change is written at its author date, else at its committer date (missing, 0, or later)', () => {
    expect(writtenAt({ time: 100, authorTime: 90 })).toEqual({ time: 90, source: 'author' });
    expect(writtenAt({ time: 100, authorTime: 100 })).toEqual({ time: 100, source: 'author' });
    expect(writtenAt({ time: 100, authorTime: null })).toEqual({ time: 100, source: 'missing' });
    expect(writtenAt({ time: 100 })).toEqual({ time: 100, source: 'missing' });
    expect(writtenAt({ time: 100, authorTime: 101 })).toEqual({ time: 100, source: 'later' });
    const rec = (at: string) => parseRecord(`${'c'.repeat(40)}\u001f\u001f100\u001f${at}\u001fA <a@x>\u001fx\n\u001f`)?.authorTime;
    expect([rec('0'), rec(''), rec('abc'), rec('99999999999999999999'), rec('42')]).toEqual([null, null, null, null, 42]);
  });
});

let root: string;

function git(repo: string, args: string[], day?: number): string {
  const date = day === undefined ? undefined : `@${T0 + day * DAY} +0000`;
  return execFileSync('git', ['-C', repo, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...(date ? { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } : {}) },
  }).trim();
}

function write(repo: string, path: string, text: string): void {
  mkdirSync(dirname(join(repo, path)), { recursive: true });
  writeFileSync(join(repo, path), text);
}

function commit(repo: string, day: number, message: string, files: Record<string, string>): string {
  for (const [p, t] of Object.entries(files)) write(repo, p, t);
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', message], day);
  return git(repo, ['rev-parse', 'HEAD']);
}

function analyze(...args: string[]): { status: number | null; json: any; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, 'analyze', 'git-history', ...args], { encoding: 'utf8' });
  return { status: r.status, json: r.status === 0 ? JSON.parse(r.stdout) : null, stderr: r.stderr };
}

let repo: string;
const sha: Record<string, string> = {};

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'forge-git-'));
  repo = join(root, 'small');
  mkdirSync(repo);
  git(repo, ['init', '-q', '-b', 'main']);
  git(repo, ['config', 'user.email', 't@example.com']);
  git(repo, ['config', 'user.name', 't']);
  git(repo, ['config', 'commit.gpgsign', 'false']);
  sha.init = commit(repo, 0, 'feat: init', { 'README.md': 'hi\n', 'src/app.ts': 'app\n' });
  sha.login = commit(repo, 1, 'feat: add login', { 'src/auth/login.ts': 'login\n' });
  sha.util = commit(repo, 2, 'feat: add util', { 'src/util.ts': 'util\n' });
  sha.fixUtil = commit(repo, 3, 'fix: util off by one', { 'src/util.ts': 'util 2\n' });
  git(repo, ['revert', '--no-edit', sha.login], 4);
  sha.revertLogin = git(repo, ['rev-parse', 'HEAD']);
  sha.parser = commit(repo, 5, 'feat: add parser', { 'src/parser.ts': 'parse\nparse\nparse\nparse\n' });
  mkdirSync(join(repo, 'lib'));
  git(repo, ['mv', 'src/parser.ts', 'lib/parser.ts']);
  sha.move = commit(repo, 6, 'refactor: move parser', {});
  sha.fixParser = commit(repo, 7, 'fix: parser crash', { 'lib/parser.ts': 'parse\nparse\nparse\nparse\nfixed\n', 'test/parser.test.ts': 't\n' });
  git(repo, ['checkout', '-q', '-b', 'widget']);
  sha.widget = commit(repo, 8, 'feat: widget', { 'src/widget.ts': 'w\n' });
  git(repo, ['checkout', '-q', 'main']);
  git(repo, ['merge', '-q', '--no-ff', '-m', "Merge branch 'widget'", 'widget'], 9);
  sha.merge = git(repo, ['rev-parse', 'HEAD']);
  sha.fixWidget = commit(repo, 10, 'fix: widget build is failing', { 'src/widget.ts': 'w2\n' });
  sha.revertUtil = commit(repo, 11, 'Revert "feat: add util"', { 'src/util.ts': '' });
  commit(repo, 12, 'docs: readme', { 'README.md': 'hello\n' });
  commit(repo, 40, 'fix: util again', { 'src/util.ts': 'x\n' }); // 38 days after the last util feature
}, 60_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('git-history over a repository with known signals', () => {
  it('finds every revert and every fix whose deleted lines blame inside the window, with causes, delays and buckets', () => {
    const r = analyze('--repo', repo, '--window', '14d');
    expect(r.status).toBe(0);
    const j = r.json;
    expect(j.mode).toBe('conventional');
    expect(j.commits).toMatchObject({ read: 14, in_range: 14, merges: 1, roots: 1, renames: 1 });
    const bySha = Object.fromEntries(j.list.map((s: any) => [s.sha, s]));
    expect(Object.keys(bySha).sort()).toEqual([sha.fixUtil, sha.revertLogin, sha.fixWidget, sha.revertUtil].sort());
    expect(bySha[sha.fixUtil as string]).toMatchObject({ kind: 'fix', fixes: sha.util, delay_days: 1, gate: 'self_reflection' });
    expect(bySha[sha.revertLogin as string]).toMatchObject({ kind: 'revert', fixes: sha.login, delay_days: 3, gate: 'human_review' });
    // The widget's line was written on the branch: the cause is the branch commit, not the merge.
    expect(bySha[sha.fixWidget as string]).toMatchObject({ kind: 'fix', fixes: sha.widget, candidates: [sha.widget], delay_days: 2, gate: 'ci' });
    expect(bySha[sha.revertUtil as string]).toMatchObject({ kind: 'revert', fixes: sha.util, delay_days: 9, gate: 'self_reflection' });
    // The parser fix only appends a line (and a test): no blamed cause, so no signal.
    expect(j.set_aside.find((s: any) => s.sha === sha.fixParser)).toMatchObject({ reason: 'add_only' });
    expect(j.buckets.ci.count).toBe(1);
    expect(j.buckets.human_review.count).toBe(1);
    expect(j.buckets.self_reflection.count).toBe(2);
    expect(j.buckets.self_reflection.share).toBeCloseTo(0.5, 12);
    expect(j.verdict).toBe('INCONCLUSIVE');
    expect(j.reason).toMatch(/only 4 failure signal/);
  });

  it('--since keeps earlier commits as causes but counts only later signals', () => {
    const r = analyze('--repo', repo, '--since', '2026-01-06');
    expect(r.status).toBe(0);
    expect(r.json.list.map((s: any) => s.sha).sort()).toEqual([sha.fixWidget, sha.revertUtil].sort());
  });

  it('no commits in range is a valid INCONCLUSIVE report; an unreadable --since is a usage error', () => {
    const none = analyze('--repo', repo, '--since', '2030-01-01');
    expect(none.status).toBe(0);
    expect(none.json.verdict).toBe('INCONCLUSIVE');
    expect(none.json.reason).toBe('no commits in range');
    const bad = analyze('--repo', repo, '--since', 'yesterdayish');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--since 2025-01-01/);
    const missing = analyze('--repo', join(root, 'nope'));
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain(join(root, 'nope'));
  });
});

describe('git-history over a generated 3,000-commit repository', () => {
  it('counts exactly the generated fixes and reverts', () => {
    const big = join(root, 'big');
    git(root, ['init', '-q', '-b', 'main', big]);
    const N = 3000;
    let fixes = 0;
    let reverts = 0;
    const parts: string[] = [];
    const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}\n`;
    for (let i = 0; i < N; i++) {
      let message: string;
      let file: string;
      if (i % 100 === 50) {
        message = `Revert "feat: f${i - 2}"`; // no body line: resolved by subject
        file = `f${i - 2}.txt`;
        reverts++;
      } else if (i % 10 === 9) {
        message = `fix: f${i - 1}`;
        file = `f${i - 1}.txt`;
        fixes++;
      } else {
        message = `feat: f${i}`;
        file = `f${i}.txt`;
      }
      parts.push(
        `commit refs/heads/main\nmark :${i + 1}\ncommitter T <t@example.com> ${T0 + i * 3600} +0000\n${data(message)}` +
          `${i > 0 ? `from :${i}\n` : ''}M 100644 inline ${file}\n${data(`content ${i}`)}\n`,
      );
    }
    execFileSync('git', ['-C', big, 'fast-import', '--quiet'], { input: parts.join('') });
    git(big, ['reset', '-q', '--hard', 'main']);
    const r = analyze('--repo', big, '--window', '14d');
    expect(r.status).toBe(0);
    expect(r.json.commits.read).toBe(N);
    expect(r.json.signals).toEqual({ total: fixes + reverts, reverts, fixes, capped: 0 });
    // Each fix rewrites the line its feature wrote an hour before: that feature is its one cause.
    expect(r.json.list.filter((s: any) => s.kind === 'fix').every((s: any) => s.candidates.length === 1 && s.delay_days === 1 / 24)).toBe(true);
    expect(r.json.buckets.self_reflection.count).toBe(fixes + reverts);
    expect(r.json.verdict).toBe('CONTINUE');
    expect(r.json.list.filter((s: any) => s.kind === 'revert').every((s: any) => s.delay_days === 2 / 24)).toBe(true);
  });
});
