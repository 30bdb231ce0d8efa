/**
 * P2 on rebased histories, generated here with known truth: every commit of a pull request lands
 * with one committer date (as a rebase or a rebase-merge gives it) while its author date says when
 * it was written. Delays are by author date, so a fix and its feature that landed together still
 * count; "delay 0" is left for a fix written with its cause. Then a history imported twice (both
 * copies rebased), a subtree imported from a snapshot before its full history, the same made by git
 * itself (commits dated by GIT_AUTHOR_DATE/GIT_COMMITTER_DATE, `git rebase`, `format-patch` | `am`),
 * a fix rebased over changes written after it, and histories whose author dates are missing or later
 * than their committer dates.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'forge-reflect.js');
const HOUR = 3_600;
const DAY = 86_400;
const T0 = 1_767_225_600; // 2026-01-01T00:00:00Z
const WINDOW = 14 * DAY;

function analyze(...args: string[]): { status: number | null; json: any; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, 'analyze', 'git-history', ...args], { encoding: 'utf8' });
  let json = null;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    // markdown, or an error
  }
  return { status: r.status, json, stdout: r.stdout, stderr: r.stderr };
}

const git = (repo: string, args: string[], input?: string) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', input }).trim();
const body = (tag: string) => Array.from({ length: 6 }, (_, i) => `export const ${tag}${i} = ${i};`).join('\n') + '\n';
const fixed = (tag: string) => body(tag).replace(`${tag}2 = 2`, `${tag}2 = 20`);

interface Planned {
  key: string;
  message: string;
  author: number;
  committer: number;
  files: Record<string, string>;
}

/** One fast-import stream: a linear main branch, author and committer dates as given. */
function fastImport(repo: string, commits: readonly Planned[]): Map<string, string> {
  const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}\n`;
  const parts = commits.map(
    (c, i) =>
      `commit refs/heads/main\nmark :${i + 1}\nauthor A <a@example.com> ${c.author} +0000\ncommitter C <c@example.com> ${c.committer} +0000\n${data(c.message)}` +
      `${i > 0 ? `from :${i}\n` : ''}${Object.entries(c.files)
        .map(([p, t]) => `M 100644 inline ${p}\n${data(t)}`)
        .join('')}\n`,
  );
  git(repo, ['init', '-q', '-b', 'main']);
  execFileSync('git', ['-C', repo, 'fast-import', '--quiet'], { input: parts.join('') });
  git(repo, ['reset', '-q', '--hard', 'main']);
  const shas = git(repo, ['rev-list', '--reverse', 'main']).split('\n');
  return new Map(commits.map((c, i) => [c.key, shas[i] as string]));
}

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'forge-rebased-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * The generated history. Pair k: a feature writes src/fk.ts; its fix, written `delay` later,
 * rewrites one of its lines. Two pairs in three land in one pull request (feature and fix share a
 * committer date); the third lands the fix in a later pull request. Delays cycle through 30 s
 * (written together), hours and days inside the 14 d window, and two outside it. Two reverts land
 * with what they revert. Then the whole history is imported again under imported/ by a rebase (one
 * committer date for every copy).
 */
const DELAYS = [30, 2 * HOUR, DAY, 3.5 * DAY, 9 * DAY, 13.5 * DAY, 16 * DAY, 45 * DAY];
const PAIRS = 24;

interface Truth {
  fix: string;
  feature: string;
  delay: number;
}

describe('a generated rebased history with known causes', () => {
  let j: any;
  let sha: Map<string, string>;
  const truth: Truth[] = [];
  let landedTogether = 0;

  beforeAll(() => {
    const repo = join(root, 'rebased');
    mkdirSync(repo);
    type Pr = { land: number; commits: Omit<Planned, 'committer'>[] };
    const prs: Pr[] = [{ land: T0, commits: [{ key: 'init', message: 'chore: init', author: T0, files: { 'README.md': 'hi\n' } }] }];
    for (let k = 0; k < PAIRS; k++) {
      const written = T0 + DAY + k * 2 * DAY + k * 137;
      const delay = DELAYS[k % DELAYS.length] as number;
      const feature = { key: `feat${k}`, message: `feat: f${k}`, author: written, files: { [`src/f${k}.ts`]: body(`f${k}_`) } };
      const fix = { key: `fix${k}`, message: `fix: f${k} line 2`, author: written + delay, files: { [`src/f${k}.ts`]: fixed(`f${k}_`) } };
      if (k % 3 !== 2) prs.push({ land: written + delay + HOUR, commits: [feature, fix] });
      else prs.push({ land: written + HOUR, commits: [feature] }, { land: written + delay + HOUR, commits: [fix] });
      truth.push({ fix: `fix${k}`, feature: `feat${k}`, delay });
      if (k % 3 !== 2) landedTogether++;
    }
    // Reverts, rebased with the change they revert; resolved by subject.
    for (let r = 0; r < 2; r++) {
      const written = T0 + 3 * DAY + r * 10 * DAY;
      prs.push({
        land: written + 2 * DAY + HOUR,
        commits: [
          { key: `rfeat${r}`, message: `feat: r${r}`, author: written, files: { [`src/r${r}.ts`]: body(`r${r}_`) } },
          { key: `revert${r}`, message: `Revert "feat: r${r}"`, author: written + 2 * DAY, files: { [`src/r${r}.ts`]: '' } },
        ],
      });
    }
    prs.sort((a, b) => a.land - b.land);
    const history: Planned[] = prs.flatMap((pr) => pr.commits.map((c) => ({ ...c, committer: pr.land })));
    // The same history imported again under imported/, by a rebase: author dates kept, one committer date.
    const imported = Math.max(...history.map((c) => c.committer)) + 30 * DAY;
    for (const c of history.slice(1)) {
      history.push({
        ...c,
        key: `copy:${c.key}`,
        committer: imported,
        files: Object.fromEntries(Object.entries(c.files).map(([p, t]) => [`imported/${p}`, t])),
      });
    }
    sha = fastImport(repo, history);
    const r = analyze('--repo', repo, '--window', '14d');
    expect(r.status).toBe(0);
    j = r.json;
  }, 60_000);

  const id = (key: string) => sha.get(key) as string;

  it('is a rebased history: most features land with their fix, in one committer date', () => {
    const same = truth.filter(
      (t) => git(join(root, 'rebased'), ['log', '-1', '--format=%ct', id(t.feature)]) === git(join(root, 'rebased'), ['log', '-1', '--format=%ct', id(t.fix)]),
    );
    expect(same).toHaveLength(landedTogether);
    expect(landedTogether).toBe(16);
  });

  it('every fix inside the window counts, with its feature as the cause and the delay by author date', () => {
    const counted = truth.filter((t) => t.delay > 60 && t.delay <= WINDOW);
    const fixes = j.list.filter((s: any) => s.kind === 'fix');
    expect(fixes.map((s: any) => s.sha).sort()).toEqual(counted.map((t) => id(t.fix)).sort());
    for (const t of counted) {
      const s = j.list.find((x: any) => x.sha === id(t.fix));
      expect(s).toMatchObject({ fixes: id(t.feature), candidates: [id(t.feature)] });
      expect(s.delay_days).toBeCloseTo(t.delay / DAY, 9);
      expect(s.at).toBe(new Date((T0 + DAY + Number(t.fix.slice(3)) * (2 * DAY + 137) + t.delay) * 1000).toISOString());
    }
    expect(j.list.filter((s: any) => s.kind === 'revert').map((s: any) => [s.sha, s.fixes, s.delay_days])).toEqual([
      [id('revert0'), id('rfeat0'), 2],
      [id('revert1'), id('rfeat1'), 2],
    ]);
    expect(j.signals).toEqual({ total: counted.length + 2, reverts: 2, fixes: counted.length, capped: 0 });
    expect(j.dates).toMatchObject({ by: 'author', missing: 0, later: 0 });
  });

  it('"delay 0" only for the fixes written with their feature; those written past the window are before it', () => {
    const together = truth.filter((t) => t.delay <= 60);
    const late = truth.filter((t) => t.delay > WINDOW);
    const aside = (reason: string) => j.set_aside.filter((s: any) => s.reason === reason);
    expect(aside('delay_zero').map((s: any) => [s.sha, s.of])).toEqual(together.map((t) => [id(t.fix), id(t.feature)]));
    expect(aside('delay_zero')[0].detail).toMatch(/written at the same time \(by author date, within 60 s\)/);
    expect(
      aside('cause_before_window')
        .map((s: any) => s.sha)
        .sort(),
    ).toEqual(late.map((t) => id(t.fix)).sort());
    expect(j.excluded).toMatchObject({ delay_zero: together.length, cause_after_fix: 0, cause_before_window: late.length });
  });

  it('a history imported twice: each later copy is a duplicate of the original, which keeps its cause', () => {
    const dups = j.set_aside.filter((s: any) => s.reason === 'duplicate');
    // Every fix and revert has one copy; the original stays (same author date, committed first).
    expect(dups).toHaveLength(PAIRS + 2);
    for (const t of truth) {
      const d = dups.find((x: any) => x.sha === id(`copy:${t.fix}`));
      expect(d).toMatchObject({ of: id(t.fix) });
      expect(d.detail).toMatch(/the copy that stays/);
    }
    expect(JSON.stringify(j.list)).not.toContain(id('copy:fix1'));
    expect(j.list.find((s: any) => s.sha === id('fix1'))).toMatchObject({ fixes: id('feat1') });
  });

  it('markdown says which dates the delays are on', () => {
    const dir = join(root, 'rebased');
    const md = analyze('--repo', dir, '--format', 'markdown').stdout;
    expect(md).toContain('Dates: delays by author date (when each change was written), which a rebase or an import keeps.');
    expect(md).toContain('duplicate 26, delay zero 3, cause after fix 0');
  });
});

describe('a subtree imported from a snapshot, then with its full history', () => {
  it('the copy that stays is the one that keeps a cause', () => {
    const repo = join(root, 'subtree');
    mkdirSync(repo);
    const F = T0 + DAY; // the upstream feature is written
    const X = T0 + 20 * DAY; // first import: a snapshot, then the upstream fix rebased onto it
    const Y = T0 + 40 * DAY; // second import: the full upstream history, rebased
    const sha = fastImport(repo, [
      { key: 'init', message: 'chore: init', author: T0, committer: T0, files: { 'README.md': 'hi\n' } },
      { key: 'snapshot', message: 'chore: import lib (snapshot)', author: X, committer: X, files: { 'imported/lib.ts': body('l') } },
      { key: 'fixA', message: 'fix: lib line 2', author: F + 3 * DAY, committer: X, files: { 'imported/lib.ts': fixed('l') } },
      { key: 'feat', message: 'feat: lib', author: F, committer: Y, files: { 'third_party/lib/lib.ts': body('l') } },
      { key: 'fixB', message: 'fix: lib line 2', author: F + 3 * DAY, committer: Y, files: { 'third_party/lib/lib.ts': fixed('l') } },
    ]);
    const r = analyze('--repo', repo, '--window', '14d');
    expect(r.status).toBe(0);
    // The first copy blames to the snapshot, written after it: no delay to measure there. The second
    // copy has the feature: it stays, with its cause; the first copy is its duplicate.
    expect(r.json.list).toHaveLength(1);
    expect(r.json.list[0]).toMatchObject({ sha: sha.get('fixB'), fixes: sha.get('feat'), delay_days: 3 });
    expect(r.json.set_aside.find((s: any) => s.sha === sha.get('fixA'))).toMatchObject({ reason: 'duplicate', of: sha.get('fixB') });
    expect(r.json.excluded).toMatchObject({ duplicate: 1, delay_zero: 0, cause_after_fix: 0 });
  }, 30_000);

  it('alone, a fix blamed to a snapshot written after it is set aside as cause_after_fix, not delay 0', () => {
    const repo = join(root, 'snapshot-only');
    mkdirSync(repo);
    const X = T0 + 20 * DAY;
    const sha = fastImport(repo, [
      { key: 'init', message: 'chore: init', author: T0, committer: T0, files: { 'README.md': 'hi\n' } },
      { key: 'snapshot', message: 'chore: import lib (snapshot)', author: X, committer: X, files: { 'imported/lib.ts': body('l') } },
      { key: 'fix', message: 'fix: lib line 2', author: T0 + 4 * DAY, committer: X, files: { 'imported/lib.ts': fixed('l') } },
    ]);
    const r = analyze('--repo', repo);
    expect(r.json.set_aside.find((s: any) => s.sha === sha.get('fix'))).toMatchObject({ reason: 'cause_after_fix', of: sha.get('snapshot') });
    expect(r.json.set_aside.find((s: any) => s.sha === sha.get('fix')).detail).toMatch(/written 16\.00 d after the fix \(by author date\)/);
  }, 30_000);
});

describe('a history rebased and imported twice by git itself (rebase, format-patch, am)', () => {
  /** git with the dates a person's clock would give it: GIT_AUTHOR_DATE/GIT_COMMITTER_DATE, when given. */
  const gitEnv = (repo: string, args: string[], dates: { author?: number; committer?: number } = {}) => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      GIT_AUTHOR_NAME: 'A',
      GIT_AUTHOR_EMAIL: 'a@example.com',
      GIT_COMMITTER_NAME: 'C',
      GIT_COMMITTER_EMAIL: 'c@example.com',
    };
    delete env.GIT_AUTHOR_DATE;
    delete env.GIT_COMMITTER_DATE;
    if (dates.author !== undefined) env.GIT_AUTHOR_DATE = `${dates.author} +0000`;
    if (dates.committer !== undefined) env.GIT_COMMITTER_DATE = `${dates.committer} +0000`;
    return execFileSync('git', ['-C', repo, '-c', 'commit.gpgsign=false', ...args], { encoding: 'utf8', env }).trim();
  };
  const D = T0 + 5 * DAY;
  let repo: string;
  let j: any;
  const sha = new Map<string, string>();

  beforeAll(() => {
    repo = join(root, 'git-rebased');
    mkdirSync(repo);
    const commit = (key: string, message: string, files: Record<string, string>, written: number) => {
      for (const [p, t] of Object.entries(files)) {
        mkdirSync(dirname(join(repo, p)), { recursive: true });
        writeFileSync(join(repo, p), t);
      }
      gitEnv(repo, ['add', '-A']);
      gitEnv(repo, ['commit', '-q', '-m', message], { author: written, committer: written });
      sha.set(key, gitEnv(repo, ['rev-parse', 'HEAD']));
    };
    gitEnv(repo, ['init', '-q', '-b', 'main']);
    commit('init', 'chore: init', { 'README.md': 'hi\n' }, T0);
    // Pull request A: the feature, and its fix written 3 days later; main moves on meanwhile.
    gitEnv(repo, ['checkout', '-q', '-b', 'a']);
    commit('featA', 'feat: a', { 'src/a.ts': body('a') }, D);
    commit('fixA', 'fix: a line 2', { 'src/a.ts': fixed('a') }, D + 3 * DAY);
    gitEnv(repo, ['checkout', '-q', 'main']);
    commit('other', 'chore: other', { 'other.txt': 'x\n' }, D + 4 * DAY);
    // Landed by a rebase (one committer date for both), then fast-forwarded.
    gitEnv(repo, ['checkout', '-q', 'a']);
    gitEnv(repo, ['rebase', '-q', 'main'], { committer: D + 5 * DAY });
    gitEnv(repo, ['checkout', '-q', 'main']);
    gitEnv(repo, ['merge', '-q', '--ff-only', 'a']);
    sha.set('featA', gitEnv(repo, ['rev-parse', 'main~1']));
    sha.set('fixA', gitEnv(repo, ['rev-parse', 'main']));
    // Pull request B: a fix written 20 s after its feature (written together), rebased the same way.
    gitEnv(repo, ['checkout', '-q', '-b', 'b']);
    commit('featB', 'feat: b', { 'src/b.ts': body('b') }, D + 6 * DAY);
    commit('fixB', 'fix: b line 2', { 'src/b.ts': fixed('b') }, D + 6 * DAY + 20);
    gitEnv(repo, ['checkout', '-q', 'main']);
    commit('other2', 'chore: other 2', { 'other.txt': 'y\n' }, D + 6 * DAY + HOUR);
    gitEnv(repo, ['checkout', '-q', 'b']);
    gitEnv(repo, ['rebase', '-q', 'main'], { committer: D + 7 * DAY });
    gitEnv(repo, ['checkout', '-q', 'main']);
    gitEnv(repo, ['merge', '-q', '--ff-only', 'b']);
    sha.set('featB', gitEnv(repo, ['rev-parse', 'main~1']));
    sha.set('fixB', gitEnv(repo, ['rev-parse', 'main']));
    // The history imported a second time under imported/: git am keeps the author dates.
    const patches = join(root, 'git-rebased-patches');
    gitEnv(repo, ['format-patch', '-q', '-o', patches, `${sha.get('init')}..main`]);
    const list = readdirSync(patches)
      .sort()
      .map((f) => join(patches, f));
    gitEnv(repo, ['am', '-q', '--directory=imported', ...list], { committer: D + 30 * DAY });
    for (const [k, n] of [
      ['copy:fixB', 0],
      ['copy:featB', 1],
      ['copy:fixA', 3],
      ['copy:featA', 4],
    ] as const)
      sha.set(k, gitEnv(repo, ['rev-parse', `main~${n}`]));
    const r = analyze('--repo', repo, '--window', '14d');
    expect(r.status).toBe(0);
    j = r.json;
  }, 60_000);
  const id = (key: string) => sha.get(key) as string;
  const dates = (key: string) => gitEnv(repo, ['log', '-1', '--format=%at %ct %s', id(key)]);

  it('is what git gives: the rebase kept author dates and gave feature and fix one committer date', () => {
    expect(dates('featA')).toBe(`${D} ${D + 5 * DAY} feat: a`);
    expect(dates('fixA')).toBe(`${D + 3 * DAY} ${D + 5 * DAY} fix: a line 2`);
    expect(dates('copy:fixA')).toBe(`${D + 3 * DAY} ${D + 30 * DAY} fix: a line 2`);
    expect(dates('copy:featA')).toBe(`${D} ${D + 30 * DAY} feat: a`);
  });

  it('the rebased fix counts at 3 d by author date; the copy imported later is its duplicate', () => {
    expect(j.dates).toMatchObject({ by: 'author', missing: 0, later: 0 });
    expect(j.list.map((s: any) => [s.sha, s.fixes, s.delay_days, s.at, s.committed_at])).toEqual([
      [id('fixA'), id('featA'), 3, new Date((D + 3 * DAY) * 1000).toISOString(), new Date((D + 5 * DAY) * 1000).toISOString()],
    ]);
    const aside = Object.fromEntries(j.set_aside.map((s: any) => [s.sha, [s.reason, s.of]]));
    expect(aside[id('copy:fixA')]).toEqual(['duplicate', id('fixA')]);
    // Written 20 s after its feature: delay 0, and its imported copy is a duplicate of it.
    expect(aside[id('fixB')]).toEqual(['delay_zero', id('featB')]);
    expect(aside[id('copy:fixB')]).toEqual(['duplicate', id('fixB')]);
    expect(j.excluded).toMatchObject({ duplicate: 2, delay_zero: 1, cause_after_fix: 0, cause_before_window: 0 });
  });
});

/** body(tag) with line i set to value (export const <tag>i = value). */
const edited = (tag: string, values: Record<number, number>) =>
  Object.entries(values).reduce((text, [i, v]) => text.replace(`${tag}${i} = ${i};`, `${tag}${i} = ${v};`), body(tag));

describe('a fix written on a branch and rebased over changes written after it', () => {
  let j: any;
  let sha: Map<string, string>;
  beforeAll(() => {
    const repo = join(root, 'rebased-over');
    mkdirSync(repo);
    const D = T0 + 10 * DAY;
    sha = fastImport(repo, [
      { key: 'init', message: 'chore: init', author: T0, committer: T0, files: { 'README.md': 'hi\n', 'src/c.ts': body('c') } },
      // A: the feature, then a change to its line 4 written after the fix was (landed first); the fix,
      // rebased over it, rewrites lines 2 (the feature's) and 4 (the later change's).
      { key: 'featA', message: 'feat: a', author: D, committer: D, files: { 'src/a.ts': body('a') } },
      { key: 'laterA', message: 'feat: a4 forty', author: D + 5 * DAY, committer: D + 5 * DAY + HOUR, files: { 'src/a.ts': edited('a', { 4: 40 }) } },
      { key: 'fixA', message: 'fix: a lines 2 and 4', author: D + 4 * DAY, committer: D + 6 * DAY, files: { 'src/a.ts': edited('a', { 2: 20, 4: 41 }) } },
      // B: a cause written 30 s after its fix (clocks a little apart): written together, delay 0.
      { key: 'featB', message: 'feat: b', author: D + 7 * DAY + 30, committer: D + 7 * DAY + HOUR, files: { 'src/b.ts': body('b') } },
      { key: 'fixB', message: 'fix: b line 2', author: D + 7 * DAY, committer: D + 7 * DAY + 2 * HOUR, files: { 'src/b.ts': edited('b', { 2: 20 }) } },
      // C: every line the fix rewrites was last changed by commits written 1 and 2 days after it
      // (the file itself predates the window): no cause written before the fix.
      { key: 'cA', message: 'refactor: c1', author: D + 11 * DAY, committer: D + 13 * DAY, files: { 'src/c.ts': edited('c', { 1: 10 }) } },
      { key: 'cB', message: 'refactor: c3', author: D + 12 * DAY, committer: D + 13 * DAY, files: { 'src/c.ts': edited('c', { 1: 10, 3: 30 }) } },
      { key: 'fixC', message: 'fix: c lines 1 and 3', author: D + 10 * DAY, committer: D + 14 * DAY, files: { 'src/c.ts': edited('c', { 1: 11, 3: 31 }) } },
    ]);
    const r = analyze('--repo', repo, '--window', '14d');
    expect(r.status).toBe(0);
    j = r.json;
  }, 60_000);
  const id = (key: string) => sha.get(key) as string;

  it('keeps the cause written before the fix; the change written after it is no cause', () => {
    expect(j.list.map((s: any) => s.sha)).toEqual([id('fixA')]);
    expect(j.list[0]).toMatchObject({ fixes: id('featA'), candidates: [id('featA')], delay_days: 4 });
    expect(j.list[0].causes.map((c: any) => [c.sha, c.lines])).toEqual([[id('featA'), 1]]);
  });

  it('a cause written within 60 s after the fix is written with it: delay 0', () => {
    const b = j.set_aside.find((s: any) => s.sha === id('fixB'));
    expect(b).toMatchObject({ reason: 'delay_zero', of: id('featB') });
    expect(b.detail).toMatch(/written at the same time \(by author date, within 60 s\)/);
  });

  it('a fix whose causes were all written after it is cause_after_fix, naming the nearest', () => {
    const c = j.set_aside.find((s: any) => s.sha === id('fixC'));
    expect(c).toMatchObject({ reason: 'cause_after_fix', of: id('cA') });
    expect(c.detail).toMatch(new RegExp(`^the nearest of its 2 causes ${id('cA').slice(0, 10)} was written 1\\.00 d after the fix \\(by author date\\)`));
    expect(j.excluded).toMatchObject({ delay_zero: 1, cause_after_fix: 1, cause_before_window: 0 });
  });
});

/** A linear history from raw commit objects, so an author line can lack its date (fast-import refuses that). */
function rawHistory(
  repo: string,
  commits: ReadonlyArray<{ key: string; message: string; author: string; committer: number; files: Record<string, string> }>,
): Map<string, string> {
  git(repo, ['init', '-q', '-b', 'main']);
  const out = new Map<string, string>();
  let parent: string | null = null;
  for (const c of commits) {
    for (const [p, t] of Object.entries(c.files)) {
      mkdirSync(dirname(join(repo, p)), { recursive: true });
      writeFileSync(join(repo, p), t);
    }
    git(repo, ['add', '-A']);
    const tree = git(repo, ['write-tree']);
    const text = `tree ${tree}\n${parent ? `parent ${parent}\n` : ''}author A <a@example.com>${c.author}\ncommitter C <c@example.com> ${c.committer} +0000\n\n${c.message}\n`;
    const sha = git(repo, ['hash-object', '-t', 'commit', '-w', '--literally', '--stdin'], text);
    git(repo, ['update-ref', 'refs/heads/main', sha]);
    out.set(c.key, sha);
    parent = sha;
  }
  git(repo, ['reset', '-q', '--hard', 'main']);
  return out;
}

describe('histories whose author dates cannot be used', () => {
  it('no author dates at all: delays fall back to committer dates, and the report says so', () => {
    const repo = join(root, 'no-author-dates');
    mkdirSync(repo);
    const land = T0 + 10 * DAY;
    const sha = rawHistory(repo, [
      { key: 'init', message: 'chore: init', author: '', committer: T0, files: { 'README.md': 'hi\n' } },
      { key: 'feat', message: 'feat: a', author: '', committer: land, files: { 'src/a.ts': body('a') } },
      { key: 'fix', message: 'fix: a line 2', author: '', committer: land, files: { 'src/a.ts': fixed('a') } },
      { key: 'feat2', message: 'feat: b', author: ' not-a-date +0000', committer: land + DAY, files: { 'src/b.ts': body('b') } },
      { key: 'fix2', message: 'fix: b line 2', author: ' not-a-date +0000', committer: land + 3 * DAY, files: { 'src/b.ts': fixed('b') } },
    ]);
    expect(git(repo, ['log', '-1', '--format=[%at]', sha.get('fix') as string])).toBe('[]');
    const r = analyze('--repo', repo);
    expect(r.status).toBe(0);
    expect(r.json.dates).toMatchObject({ by: 'committer', author: 0, missing: 5, later: 0 });
    // JSON on stdout; the same note for a person on stderr.
    expect(r.stderr).toBe(`forge-reflect analyze git-history: ${r.json.dates.note}\n`);
    expect(r.json.dates.note).toMatch(
      /^no commit has a usable author date \(5 with no usable author date \(an empty or unparseable field\)\): delays fall back to committer dates/,
    );
    // Landed together with no author date to tell them apart: delay 0, saying which date was used.
    expect(r.json.set_aside.find((s: any) => s.sha === sha.get('fix'))).toMatchObject({ reason: 'delay_zero', of: sha.get('feat') });
    expect(r.json.set_aside.find((s: any) => s.sha === sha.get('fix')).detail).toMatch(/by committer date/);
    expect(r.json.list).toEqual([expect.objectContaining({ sha: sha.get('fix2'), fixes: sha.get('feat2'), delay_days: 2 })]);
    const md = analyze('--repo', repo, '--format', 'markdown').stdout;
    expect(md).toMatch(/^Dates: no commit has a usable author date .*: delays fall back to committer dates, .*delay 0\.$/m);
  }, 30_000);

  it('an author date later than the committer date, or missing, is replaced by the committer date for that commit only', () => {
    const repo = join(root, 'mixed-dates');
    mkdirSync(repo);
    const at = (t: number) => ` ${t} +0000`;
    const sha = rawHistory(repo, [
      { key: 'init', message: 'chore: init', author: at(T0), committer: T0, files: { 'README.md': 'hi\n' } },
      { key: 'feat', message: 'feat: a', author: at(T0 + DAY), committer: T0 + 5 * DAY, files: { 'src/a.ts': body('a') } },
      // Written (it says) a year after it was committed: a clock set wrong. The committer date stands.
      { key: 'fix', message: 'fix: a line 2', author: at(T0 + 400 * DAY), committer: T0 + 5 * DAY, files: { 'src/a.ts': fixed('a') } },
      { key: 'feat2', message: 'feat: b', author: at(T0 + 6 * DAY), committer: T0 + 8 * DAY, files: { 'src/b.ts': body('b') } },
      { key: 'fix2', message: 'fix: b line 2', author: '', committer: T0 + 8 * DAY, files: { 'src/b.ts': fixed('b') } },
    ]);
    const r = analyze('--repo', repo);
    expect(r.status).toBe(0);
    expect(r.json.dates).toMatchObject({ by: 'author_and_committer', author: 3, missing: 1, later: 1 });
    expect(r.stderr).toBe(''); // some author dates used: the note is in the JSON and markdown only
    expect(r.json.dates.note).toBe(
      'delays by author date (when each change was written); committer date for 2 of 5 commits: 1 with no usable author date (an empty or unparseable field); 1 whose author date is later than the committer date',
    );
    const bySha = Object.fromEntries(r.json.list.map((s: any) => [s.sha, s]));
    expect(bySha[sha.get('fix') as string]).toMatchObject({ fixes: sha.get('feat'), delay_days: 4, at: new Date((T0 + 5 * DAY) * 1000).toISOString() });
    expect(bySha[sha.get('fix2') as string]).toMatchObject({ fixes: sha.get('feat2'), delay_days: 2 });
    expect(analyze('--repo', repo, '--format', 'markdown').stdout).toContain(`Dates: ${r.json.dates.note}.`);
  }, 30_000);
});
