/**
 * P2's SZZ over a repository built here with fixed dates, where the commit that introduced each
 * defect is known: blame through a rename, through a merged branch, across a whitespace-only
 * reformat, a fix that introduces a bug, a fix that only adds lines, a revert of a revert, a squash
 * body that only quotes reverts, a history imported twice under another folder, dependency bumps,
 * a delay-0 pair, a cause before the window; then the labelling sheet and its read-back.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cohenKappa, wilson } from '../src/analysis/agreement.js';
import { labelStats } from '../src/analysis/labels.js';
import { repoNameOf } from '../src/commands/analyze.js';
import { ownRevert } from '../src/analysis/commit-message.js';
import { dependencyBump } from '../src/analysis/dependency-bumps.js';
import { parseDiffTree } from '../src/analysis/fix-diff.js';
import { classifyGate } from '../src/analysis/gates.js';
import { patchFingerprint } from '../src/analysis/patch-dedup.js';
import { parseBlamePorcelain, planBlame } from '../src/analysis/szz.js';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'forge-reflect.js');
const DAY = 86_400;
const T0 = 1_767_225_600; // 2026-01-01T00:00:00Z

function git(repo: string, args: string[], day?: number, env: Record<string, string> = {}): string {
  const date = day === undefined ? undefined : `@${Math.round(T0 + day * DAY)} +0000`;
  return execFileSync('git', ['-C', repo, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...(date ? { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } : {}), ...env },
  }).trim();
}

function write(repo: string, path: string, text: string): void {
  mkdirSync(dirname(join(repo, path)), { recursive: true });
  writeFileSync(join(repo, path), text);
}

function commit(repo: string, day: number, message: string, files: Record<string, string>, env: Record<string, string> = {}): string {
  for (const [p, t] of Object.entries(files)) write(repo, p, t);
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '--allow-empty', '-m', message], day, env);
  return git(repo, ['rev-parse', 'HEAD']);
}

function analyze(...args: string[]): { status: number | null; json: any; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, 'analyze', 'git-history', ...args], { encoding: 'utf8' });
  let json = null;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    // not JSON (markdown, or an error)
  }
  return { status: r.status, json, stdout: r.stdout, stderr: r.stderr };
}

const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `const ${tag}${i} = ${i};`).join('\n') + '\n';

describe('pure parts', () => {
  it('a revert is its own subject or its own body paragraph, not a squash body quoting reverts', () => {
    const sha = 'a'.repeat(40);
    expect(ownRevert(`Revert "feat: x" (#12)\n\nThis reverts commit ${sha}.`)?.sha).toBe(sha);
    expect(ownRevert(`undo x\n\nThis reverts commit ${sha}.`)?.sha).toBe(sha);
    expect(ownRevert(`feat: big (#9)\n\n* feat: x\n\n* Revert "feat: x"\n\nThis reverts commit ${sha}.\n\n* fix: y`)).toBeNull();
    expect(ownRevert(`chore: sync\n\nThis reverts commit ${sha}.\nThis reverts commit ${'b'.repeat(40)}.`)).toBeNull();
  });

  it('dependency bumps: a bot author, or deps scope / bump subject touching only manifests', () => {
    expect(
      dependencyBump({ author: 'renovate[bot] <29139614+renovate[bot]@users.noreply.github.com>', message: 'fix(deps): update x', files: ['src/a.ts'] }),
    ).toMatch(/bot/);
    expect(dependencyBump({ author: 'Ann <a@x>', message: 'fix(deps): update x to v2', files: ['package.json', 'yarn.lock'] })).toMatch(/fix\(deps\)/);
    expect(dependencyBump({ author: 'Ann <a@x>', message: 'fix: bump x from 1.0.0 to 1.0.1', files: ['packages/a/package.json'] })).toMatch(/bump/);
    expect(dependencyBump({ author: 'Ann <a@x>', message: 'fix(deps): handle peer deps', files: ['src/deps.ts', 'package.json'] })).toBeNull();
  });

  it('diff parsing, what is blamed and what is set aside', () => {
    const text = [
      'a'.repeat(40),
      'diff --git a/src/a.ts b/src/b.ts',
      'similarity index 80%',
      'rename from src/a.ts',
      'rename to src/b.ts',
      '--- a/src/a.ts',
      '+++ b/src/b.ts',
      '@@ -3,2 +3 @@ x',
      '-old 3',
      '-// a comment',
      '+new 3',
      '@@ -10,0 +10 @@',
      '+added',
      'diff --git a/test/a.test.ts b/test/a.test.ts',
      '--- a/test/a.test.ts',
      '+++ b/test/a.test.ts',
      '@@ -1 +1 @@',
      '-x',
      '+y',
      'diff --git a/yarn.lock b/yarn.lock',
      '--- a/yarn.lock',
      '+++ b/yarn.lock',
      '@@ -7 +7 @@',
      '-a',
      '+b',
    ].join('\n');
    const [c] = parseDiffTree(text);
    expect(c?.files[0]).toMatchObject({
      oldPath: 'src/a.ts',
      newPath: 'src/b.ts',
      deleted: [
        { line: 3, text: 'old 3' },
        { line: 4, text: '// a comment' },
      ],
      added: ['new 3', 'added'],
    });
    const plan = planBlame(c?.files ?? []);
    expect(plan.targets).toEqual([{ path: 'src/a.ts', ranges: [[3, 3]], lines: 1 }]);
    expect(plan.setAside).toMatchObject({ tests: 1, lockfiles: 1, cosmetic: 1 });
    const capped = planBlame(c?.files ?? [], { files: 20, lines: 0 });
    expect(capped.capped).toBe(true);
    expect(capped.targets).toEqual([]);
  });

  it('a patch moved under another folder has the same fingerprint; another patch does not', () => {
    const f = (path: string, del: string) => [{ oldPath: path, newPath: path, deleted: [{ line: 1, text: del }], added: ['b'], binary: false }];
    expect(patchFingerprint(f('src/lib/x.ts', 'a'))).toBe(patchFingerprint(f('imported/old/x.ts', 'a')));
    expect(patchFingerprint(f('src/lib/x.ts', 'a'))).not.toBe(patchFingerprint(f('src/lib/x.ts', 'c')));
    expect(patchFingerprint([])).toBeNull();
  });

  it('blame porcelain: lines per commit, boundary and path', () => {
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(40);
    const text = `${a} 1 1 2\nauthor x\nboundary\nfilename old.ts\n\tone\n${a} 2 2\n\ttwo\n${b} 5 3 1\nauthor y\nfilename new.ts\n\tthree\n`;
    expect(parseBlamePorcelain(text)).toEqual([
      { sha: a, lines: 2, boundary: true, path: 'old.ts' },
      { sha: b, lines: 1, boundary: false, path: 'new.ts' },
    ]);
  });

  it("the repo's own name is no build surface; a defect in build files is CI's", () => {
    const base = { fixFiles: ['packages/vite/src/x.ts'], fixMessage: 'fix: x', inducingFiles: ['packages/vite/src/node/server.ts'] };
    expect(classifyGate(base).gate).toBe('human_review');
    expect(classifyGate({ ...base, repoName: 'vite' }).gate).toBe('self_reflection');
    expect(classifyGate({ ...base, inducingFiles: ['vite.config.ts'], repoName: 'vite' }).gate).toBe('ci');
  });

  it("the repository's name: --repo-name, else origin's URL, else the folder (a mirror's owner+name/repo gives name)", () => {
    expect(repoNameOf('/x/y', null, 'given')).toBe('given');
    expect(repoNameOf('/x/y', 'git@github.com:vitejs/vite.git', undefined)).toBe('vite');
    expect(repoNameOf('/x/y', 'https://github.com/vitejs/vite', undefined)).toBe('vite');
    expect(repoNameOf('/work/.mirror/vitejs+vite/repo', null, undefined)).toBe('vite');
    expect(repoNameOf('/src/widgetkit', null, undefined)).toBe('widgetkit');
  });

  it('Wilson interval and Cohen kappa match hand-computed values', () => {
    const w = wilson(5, 50);
    expect(w.ci?.[0]).toBeCloseTo(0.04348, 4); // Wilson 95% for 5/50
    expect(w.ci?.[1]).toBeCloseTo(0.21363, 4);
    expect(wilson(0, 0).ci).toBeNull();
    // 2x2: agree 20+15, disagree 5+10 → po 0.7, pe 0.5 → kappa 0.4
    const pairs = [
      ...Array.from({ length: 20 }, () => ['a', 'a'] as const),
      ...Array.from({ length: 5 }, () => ['a', 'b'] as const),
      ...Array.from({ length: 10 }, () => ['b', 'a'] as const),
      ...Array.from({ length: 15 }, () => ['b', 'b'] as const),
    ];
    expect(cohenKappa(pairs).kappa).toBeCloseTo(0.4, 12);
  });
});

let root: string;
let repo: string;
const sha: Record<string, string> = {};
const BOT = { GIT_AUTHOR_NAME: 'renovate[bot]', GIT_AUTHOR_EMAIL: '29139614+renovate[bot]@users.noreply.github.com' };

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'forge-szz-'));
  repo = join(root, 'widgetkit');
  mkdirSync(repo);
  git(repo, ['init', '-q', '-b', 'main']);
  git(repo, ['config', 'user.email', 't@example.com']);
  git(repo, ['config', 'user.name', 't']);
  git(repo, ['config', 'commit.gpgsign', 'false']);
  sha.init = commit(repo, 0, 'chore: init', { 'README.md': 'hi\n', 'package.json': '{"name":"widgetkit","version":"1.0.0"}\n', 'src/old.ts': lines(10, 'o') });
  // Rename: the parser is written, then moved; the fix's deleted line blames to the writer.
  sha.parser = commit(repo, 40, 'feat: parser', { 'src/parser.ts': lines(8, 'p') });
  mkdirSync(join(repo, 'lib'));
  git(repo, ['mv', 'src/parser.ts', 'lib/parser.ts']);
  sha.move = commit(repo, 41, 'refactor: move parser to lib', {});
  // Whitespace-only reformat between cause and fix: blame -w sees through it.
  sha.reformat = commit(repo, 42, 'style: indent', { 'lib/parser.ts': lines(8, 'p').replace('const p5', '  const p5') });
  sha.fixParser = commit(repo, 43, 'fix: parser off by one', { 'lib/parser.ts': lines(8, 'p').replace('const p5', '  const p5').replace('p2 = 2', 'p2 = 3') });
  // A fix introduces a bug; the next fix names it (a cause of type fix).
  sha.fixP3 = commit(repo, 44, 'fix: parser p3', { 'lib/parser.ts': readFileSync(join(repo, 'lib/parser.ts'), 'utf8').replace('p3 = 3', 'p3 = 33') });
  sha.fixP3again = commit(repo, 45, 'fix: parser p3 again', {
    'lib/parser.ts': readFileSync(join(repo, 'lib/parser.ts'), 'utf8').replace('p3 = 33', 'p3 = -3'),
  });
  // Merge: the widget is written on a branch and merged with --no-ff; the fix blames to the branch commit.
  git(repo, ['checkout', '-q', '-b', 'widget']);
  sha.widget = commit(repo, 46, 'feat: widget', { 'src/widget.ts': lines(6, 'w') });
  git(repo, ['checkout', '-q', 'main']);
  sha.other = commit(repo, 46.5, 'feat: other', { 'src/other.ts': lines(3, 'x') });
  git(repo, ['merge', '-q', '--no-ff', '-m', "Merge branch 'widget'", 'widget'], 47);
  sha.merge = git(repo, ['rev-parse', 'HEAD']);
  sha.fixWidget = commit(repo, 48, 'fix: widget w4', { 'src/widget.ts': lines(6, 'w').replace('w4 = 4', 'w4 = 40') });
  // A fix that only adds lines to a file a feature just touched: no blamed cause, no neighbour.
  sha.util = commit(repo, 49, 'feat: util', { 'src/util.ts': lines(4, 'u') });
  sha.fixAddOnly = commit(repo, 50, 'fix: util guard', { 'src/util.ts': `${lines(4, 'u')}if (!u0) throw new Error('u0');\n` });
  // A fix that changes only a test: nothing to blame.
  sha.fixTestOnly = commit(repo, 50.5, 'fix: flaky util test', { 'test/util.test.ts': 'expect(1).toBe(1);\n' });
  // A cause before the window: src/old.ts is from day 0.
  sha.fixOld = commit(repo, 51, 'fix: old o7', { 'src/old.ts': lines(10, 'o').replace('o7 = 7', 'o7 = 70') });
  // Revert, then revert of the revert.
  sha.login = commit(repo, 52, 'feat: login form', { 'src/auth/login.ts': lines(3, 'l') });
  git(repo, ['revert', '--no-edit', sha.login], 53);
  sha.revert = git(repo, ['rev-parse', 'HEAD']);
  git(repo, ['revert', '--no-edit', sha.revert], 54);
  sha.reapply = git(repo, ['rev-parse', 'HEAD']);
  // A squash commit whose body quotes a revert of its branch: a feature, not a revert.
  sha.squash = commit(repo, 55, `feat: charts (#12)\n\n* feat: chart\n\n* Revert "feat: chart"\n\nThis reverts commit ${sha.login}.\n\n* feat: chart again`, {
    'src/chart.ts': lines(3, 'c'),
  });
  // Dependency bumps: by a bot, and by a person with a deps scope touching only manifests.
  sha.botBump = commit(
    repo,
    56,
    'fix(deps): update dependency left-pad to v2',
    { 'package.json': '{"name":"widgetkit","version":"1.0.0","dependencies":{"left-pad":"2"}}\n' },
    BOT,
  );
  sha.humanBump = commit(repo, 57, 'fix(deps): bump left-pad from 2.0.0 to 2.0.1', {
    'package.json': '{"name":"widgetkit","version":"1.0.0","dependencies":{"left-pad":"2.0.1"}}\n',
  });
  // Delay 0: a cause and its fix written in the same second (a fix amended onto its own change).
  sha.rush = commit(repo, 58, 'feat: rush', { 'src/rush.ts': lines(3, 'r') });
  sha.fixRush = commit(repo, 58, 'fix: rush r1', { 'src/rush.ts': lines(3, 'r').replace('r1 = 1', 'r1 = 10') });
  // A history imported twice: the parser feature and its fix again, later, under imported/.
  sha.copyParser = commit(repo, 80, 'feat: parser', { 'imported/lib/parser.ts': lines(8, 'p') });
  sha.copyFix = commit(repo, 81, 'fix: parser off by one', { 'imported/lib/parser.ts': lines(8, 'p').replace('p2 = 2', 'p2 = 3') });
}, 60_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('SZZ over a constructed repository with known causes', () => {
  let j: any;
  let bySha: Record<string, any>;
  let aside: Record<string, any>;
  beforeAll(() => {
    const r = analyze('--repo', repo, '--window', '14d');
    expect(r.status).toBe(0);
    j = r.json;
    bySha = Object.fromEntries(j.list.map((s: any) => [s.sha, s]));
    aside = {};
    for (const s of j.set_aside) aside[`${s.sha}:${s.reason}`] = s;
  }, 60_000);

  it('counts exactly the real failures', () => {
    expect(Object.keys(bySha).sort()).toEqual([sha.fixParser, sha.fixP3, sha.fixP3again, sha.fixWidget, sha.revert].sort());
    expect(j.signals).toEqual({ total: 5, reverts: 1, fixes: 4, capped: 0 });
    expect(j.buckets.human_review.count).toBe(1);
    expect(j.buckets.self_reflection.count).toBe(4);
  });

  it('blames through a rename and a whitespace-only reformat to the writer', () => {
    expect(bySha[sha.fixParser as string]).toMatchObject({ fixes: sha.parser, candidates: [sha.parser], delay_days: 3 });
    expect(bySha[sha.fixParser as string].causes[0]).toMatchObject({ sha: sha.parser, type: 'feat', lines: 1 });
  });

  it('a fix can introduce a bug', () => {
    expect(bySha[sha.fixP3 as string]).toMatchObject({ fixes: sha.parser, candidates: [sha.parser] });
    expect(bySha[sha.fixP3again as string]).toMatchObject({ fixes: sha.fixP3, candidates: [sha.fixP3] });
    expect(bySha[sha.fixP3again as string].causes[0].type).toBe('fix');
  });

  it('blames into the merged branch, not the merge', () => {
    expect(bySha[sha.fixWidget as string]).toMatchObject({ fixes: sha.widget, candidates: [sha.widget], delay_days: 2 });
  });

  it('a revert names its target; the revert of the revert and the quoted revert are not failures', () => {
    expect(bySha[sha.revert as string]).toMatchObject({ kind: 'revert', fixes: sha.login, delay_days: 1, gate: 'human_review' });
    expect(aside[`${sha.reapply}:revert_of_revert`]).toMatchObject({ of: sha.revert });
    expect(aside[`${sha.squash}:quoted_revert`]).toBeDefined();
  });

  it('sets aside add-only, test-only, old-cause, delay-0, duplicate and dependency-bump fixes, each counted', () => {
    expect(aside[`${sha.fixAddOnly}:add_only`].detail).toMatch(/only adds lines/);
    expect(aside[`${sha.fixTestOnly}:nothing_to_blame`]).toBeDefined();
    expect(aside[`${sha.fixOld}:cause_before_window`]).toBeDefined();
    expect(aside[`${sha.fixRush}:delay_zero`]).toMatchObject({ of: sha.rush });
    expect(aside[`${sha.copyFix}:duplicate`]).toMatchObject({ of: sha.fixParser });
    expect(aside[`${sha.botBump}:dependency_bump`].detail).toMatch(/bot/);
    expect(aside[`${sha.humanBump}:dependency_bump`].detail).toMatch(/deps/);
    expect(j.excluded).toEqual({
      dependency_bump: 2,
      quoted_revert: 1,
      revert_of_revert: 1,
      duplicate: 1,
      delay_zero: 1,
      cause_after_fix: 0,
      add_only: 1,
      nothing_to_blame: 1,
      cause_before_window: 1,
    });
    expect(JSON.stringify(j.list)).not.toContain(sha.util); // the add-only fix is attached to nobody
  });

  it('markdown names every exclusion and the evidence', () => {
    const md = analyze('--repo', repo, '--format', 'markdown').stdout;
    expect(md).toContain('Evidence: the heuristic alone');
    expect(md).toContain(
      'dependency bump 2, quoted revert 1, revert of revert 1, duplicate 1, delay zero 1, cause after fix 0, add only 1, nothing to blame 1, cause before window 1',
    );
  });
});

describe('the labelling sheet', () => {
  it('writes a seeded sheet with empty human fields, reads it back, and names the first bad row', () => {
    const sheet = join(root, 'sheet.jsonl');
    const w = analyze('--repo', repo, '--sample', '3', '--seed', '7', '--out', sheet);
    expect(w.status).toBe(0);
    const rows = readFileSync(sheet, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows[0]).toMatchObject({ sheet: 'forge-reflect.p2-sheet.v1', seed: 7, sample: 3, population: { ci: 0, human_review: 1, self_reflection: 4 } });
    expect(rows).toHaveLength(4);
    expect(rows[1].human).toEqual({ failure: null, gate: null, cause: null, note: '' });
    const again = join(root, 'again.jsonl');
    analyze('--repo', repo, '--sample', '3', '--seed', '7', '--out', again);
    expect(readFileSync(again, 'utf8')).toBe(readFileSync(sheet, 'utf8'));
    const fixRow = rows.find((r: any) => r.id === sha.fixParser) ?? rows.find((r: any) => r.kind === 'fix');
    expect(fixRow.fix.hunks).toMatch(/^diff --git/m);
    expect(fixRow.causes[0].stats.length).toBeGreaterThan(0);

    // Label: every row a real failure whose gate is the heuristic's, cause = the blamed one.
    const labelled = [
      rows[0],
      ...rows.slice(1).map((r: any) => ({ ...r, human: { failure: true, gate: r.bucket, cause: r.causes[0]?.sha ?? 'unknown', note: '' } })),
    ];
    writeFileSync(sheet, labelled.map((x) => JSON.stringify(x)).join('\n') + '\n');
    const r = analyze('--repo', repo, '--labels', sheet);
    expect(r.status).toBe(0);
    expect(r.json.evidence).toBe('labels');
    expect(r.json.labels.kappa.observed).toBe(1);
    expect(r.json.labels.cause.primary.p).toBe(1);
    // 1 human_review row (weight 1/1) and 2 self rows (weight 4/2): share 0.8, Kish n 25/9, Wilson [0.27, 0.98].
    expect(r.json.labels.self_share.p).toBeCloseTo(0.8, 12);
    expect(r.json.labels.self_share.n).toBeCloseTo(25 / 9, 12);
    expect(r.json.verdict).toBe('CONTINUE');
    expect(r.json.reason).toMatch(/from the labels/);
    expect(r.json.heuristic_verdict.verdict).toBe('INCONCLUSIVE');

    const bad = [...labelled];
    bad[2] = { ...bad[2], human: { ...bad[2].human, gate: 'reviewer' } };
    writeFileSync(sheet, bad.map((x) => JSON.stringify(x)).join('\n') + '\n');
    const e = analyze('--repo', repo, '--labels', sheet);
    expect(e.status).toBe(1);
    expect(e.stderr.trim().split('\n')).toHaveLength(1);
    expect(e.stderr).toMatch(/labels line 3: human.gate "reviewer"/);
    bad[2] = { ...labelled[2], id: 'f'.repeat(40) };
    writeFileSync(sheet, bad.map((x) => JSON.stringify(x)).join('\n') + '\n');
    expect(analyze('--repo', repo, '--labels', sheet).stderr).toMatch(/labels line 3: unknown signal ffffffffffff/);
    expect(analyze('--repo', repo, '--sample', '3').status).toBe(2);
  }, 60_000);
});

describe('a shallow clone', () => {
  it('states how far blame reaches and is INCONCLUSIVE when the window needs more', () => {
    const shallow = join(root, 'shallow');
    execFileSync('git', ['clone', '-q', '--depth', '3', `file://${repo}`, shallow]);
    const r = analyze('--repo', shallow, '--window', '14d');
    expect(r.status).toBe(0);
    expect(r.json.blame.depth).toMatch(/^shallow clone: blame reaches back to 2026-02-28T00:00:00.000Z \(1 boundary commit\(s\)\); the window needs 2026-/);
    expect(r.json.verdict).toBe('INCONCLUSIVE');
    expect(r.json.reason).toMatch(/^shallow clone/);
    const full = analyze('--repo', repo);
    expect(full.json.blame.depth).toBe('full history: blame reaches the root');
  }, 60_000);
});

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'tests', 'fixtures', 'analysis');

describe('the labelled commitlint sample (tests/fixtures/analysis/p2-commitlint-labelled.jsonl)', () => {
  it('as drawn (committer-date delays): the agreement figures docs/analysis.md reports', () => {
    const fixture = join(FIXTURES, 'p2-commitlint-labelled.jsonl');
    const [header, ...rows] = readFileSync(fixture, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(header.population).toEqual({ ci: 47, human_review: 8, self_reflection: 7 });
    const labelled = rows.map((r: any) => ({
      id: r.id,
      bucket: r.bucket,
      fixes: r.causes[0]?.sha ?? null,
      candidates: r.causes.map((c: any) => c.sha),
      human: r.human,
    }));
    const s = labelStats(labelled, header.population);
    expect([s.rows, s.labelled, s.failures]).toEqual([40, 40, 35]);
    expect(s.kappa.kappa).toBeCloseTo(7 / 24, 12); // observed 18/35, chance 11/35
    expect([s.per_bucket.ci.agree, s.per_bucket.ci.failures]).toEqual([10, 21]);
    expect([s.per_bucket.human_review.agree, s.per_bucket.human_review.failures]).toEqual([1, 7]);
    expect([s.per_bucket.self_reflection.agree, s.per_bucket.self_reflection.failures]).toEqual([7, 7]);
    expect([s.cause.primary.k, s.cause.any.k, s.cause.named]).toEqual([28, 29, 33]);
    expect(s.self_share.p).toBeCloseTo(0.3134, 4);
    expect(s.self_share.ci?.[0]).toBeCloseTo(0.1809, 4);
    expect(s.self_share.ci?.[1]).toBeCloseTo(0.4854, 4);
    expect(s.non_failure.p).toBeCloseTo(0.1374, 4);
  });

  it('re-measured with author-date delays (p2-commitlint-author-dates.json): the figures docs/analysis.md reports', () => {
    const [, ...rows] = readFileSync(join(FIXTURES, 'p2-commitlint-labelled.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const now = JSON.parse(readFileSync(join(FIXTURES, 'p2-commitlint-author-dates.json'), 'utf8'));
    // The heuristic: 62 signals by committer date, 82 by author date; nothing is set aside as delay 0.
    expect(now.before.signals.total).toBe(62);
    expect(now.before.excluded.delay_zero).toBe(24);
    expect(now.signals).toEqual({ total: 82, reverts: 15, fixes: 67, capped: 0 });
    expect(now.buckets).toEqual({ ci: 56, human_review: 12, self_reflection: 14 });
    expect(now.excluded).toMatchObject({ duplicate: 25, delay_zero: 0, cause_after_fix: 0, cause_before_window: 127 });
    expect(now.dates).toMatchObject({ by: 'author_and_committer', missing: 0, later: 5 });
    const heuristic = wilson(14, 82);
    expect([heuristic.ci?.[0], heuristic.ci?.[1]].map((x) => Math.round((x as number) * 1000) / 10)).toEqual([10.5, 26.6]);
    // 22 signals entered (all set aside as delay 0 before), among them the example.
    expect(now.entered).toHaveLength(22);
    expect(now.entered.every((e: any) => e.before === 'delay_zero')).toBe(true);
    const submodules = now.entered.find((e: any) => e.id.startsWith('83b1a47d9b'));
    expect(submodules).toMatchObject({ fixes: expect.stringMatching(/^cc575fa6a9/), bucket: 'self_reflection' });
    expect(submodules.delay_days).toBeCloseTo(9.834, 3);
    // 2 left: labelled real failures whose causes were written 16.6 and 32.6 d before the fix on
    // long-lived branches (merged 2.6 and 5.7 d before): outside the 14 d window by author date.
    expect(now.left.map((l: any) => [l.id.slice(0, 10), l.reason, l.delay_days_by_author, l.delay_days_by_committer])).toEqual([
      ['1f0c5ca4ea', 'cause_before_window', 16.58, 2.59],
      ['baed8b1b1d', 'cause_before_window', 32.58, 5.73],
    ]);
    // The labels, read against the signals as counted now: 38 of the 40 rows are still signals.
    const bySha = new Map(now.sheet_rows.map((r: any) => [r.id, r]));
    const labelled = rows
      .filter((r: any) => (bySha.get(r.id) as any).counted)
      .map((r: any) => {
        const c = bySha.get(r.id) as any;
        return { id: r.id, bucket: c.bucket, fixes: c.fixes, candidates: c.candidates, human: r.human };
      });
    expect(labelled).toHaveLength(38);
    // The strata the sample was drawn from, less the two signals that left (both ci): 45, 8, 7.
    const s = labelStats(labelled, { ci: 45, human_review: 8, self_reflection: 7 });
    expect([s.rows, s.labelled, s.failures]).toEqual([38, 38, 33]);
    expect([s.cause.primary.k, s.cause.any.k, s.cause.named]).toEqual([26, 27, 31]);
    expect([s.per_bucket.ci.agree, s.per_bucket.ci.failures]).toEqual([8, 19]);
    expect([s.per_bucket.human_review.agree, s.per_bucket.human_review.failures]).toEqual([1, 7]);
    expect([s.per_bucket.self_reflection.agree, s.per_bucket.self_reflection.failures]).toEqual([7, 7]);
    expect(s.kappa.kappa).toBeCloseTo(0.2638, 4);
    expect(s.self_share.p).toBeCloseTo(0.3305, 4);
    expect(s.self_share.ci?.[0]).toBeCloseTo(0.1904, 4);
    expect(s.self_share.ci?.[1]).toBeCloseTo(0.5088, 4);
    expect(s.non_failure.p).toBeCloseTo(0.1471, 4);
    // Weighted to all 82 signals (the 22 that entered are unlabelled; assumed like their bucket's rows).
    const all = labelStats(labelled, now.buckets);
    expect(all.self_share.p).toBeCloseTo(0.394, 3);
    expect(all.self_share.ci?.[0]).toBeCloseTo(0.245, 3);
    expect(all.self_share.ci?.[1]).toBeCloseTo(0.566, 3);
  });
});
