/** `report --format html` and `analyze calibration --format html`: the page's content, its inputs and its refusals. */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BUNDLE, chunksWith, staticClosure } from './helpers/bundle.js';
import { TURNS, writeHtmlCorpus } from './helpers/html-corpus.js';
import { cleanupTempDirs, CLI, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

function cli(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, NO_COLOR: '1', ...env }, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('report --format html', () => {
  it('writes one self-contained page: summary, charts with text alternatives, the reliability numbers, review links', () => {
    const dir = tempDir();
    const state = join(dir, 'state');
    writeHtmlCorpus(state);
    const r = cli(['report', '--format', 'html'], dir, { FORGE_DIR: state });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    const html = readFileSync(join(dir, 'forge-reflect-report.html'), 'utf8');
    // Self-contained: no script, no external resource of any kind (xmlns values are names, not fetches).
    expect(html).not.toMatch(/<script|<link|@import|url\(/i);
    expect(html.replace(/xmlns(:xlink)?="http:\/\/www\.w3\.org\/[^"]+"/g, '')).not.toMatch(/https?:\/\//);
    expect(html).toContain("default-src 'none'");
    // Summary figures.
    expect(html).toContain(`<dt>turns</dt><dd>${TURNS}</dd>`);
    expect(html).toContain('<dt>need review</dt><dd>10 (33.3%)</dd>');
    expect(html).toContain('<dt>outcomes labelled</dt><dd>30</dd>');
    // Four charts, each an image with a title and a description.
    expect(html.match(/<svg role="img" aria-label="[^"]+"/g)).toHaveLength(4);
    expect(html.match(/<desc>/g)).toHaveLength(4);
    // Tools: calls, failures, success share; the slowest call first.
    expect(html).toContain('<td>Bash</td><td>4</td><td>1</td><td>75.0%</td>');
    expect(html).toMatch(/The slowest tool calls.*?<td>Bash<\/td><td>4000<\/td>/s);
    // The reliability numbers: five bins of six rows, 1/6 … 5/6 correct.
    for (const [bin, share] of [
      ['0.1–0.2', '0.17'],
      ['0.3–0.4', '0.33'],
      ['0.5–0.6', '0.50'],
      ['0.7–0.8', '0.67'],
      ['0.9–1.0', '0.83'],
    ]) {
      expect(html).toMatch(new RegExp(`<td>${bin}</td><td>6</td><td>[0-9.]+</td><td>${share}</td>`));
    }
    expect(html).toMatch(/15 correct, 15 wrong\. Brier score 0\.\d{3}/);
    expect(html).toMatch(/ROC AUC 0\.\d{3} \(95% DeLong interval/);
    // Every needs-review turn links to its details, and text from a sidecar is escaped.
    const links = [...html.matchAll(/href="#turn-(\d+)"/g)].map((m) => m[1]);
    expect(new Set(links).size).toBe(10);
    for (const turn of new Set(links)) expect(html).toContain(`id="turn-${turn}"`);
    expect(html).toContain('the &lt;b&gt;likely&lt;/b&gt; flaw');
    expect(html).not.toContain('<b>likely</b>');
  });

  it('honours the report filters, writes to stdout with --out -, and refuses an unwritable --out in one line', () => {
    const dir = tempDir();
    const state = join(dir, 'state');
    writeHtmlCorpus(state);
    const r = cli(['report', '--format', 'html', '--surface', 'auth', '--out', '-'], dir, { FORGE_DIR: state });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('<dt>turns</dt><dd>10</dd>');
    expect(r.stdout).toContain('filters: <code>--surface auth</code>');
    expect(existsSync(join(dir, 'forge-reflect-report.html'))).toBe(false);
    const bad = cli(['report', '--format', 'html', '--out', join(dir, 'no', 'such', 'dir', 'r.html')], dir, { FORGE_DIR: state });
    expect(bad.status).toBe(1);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/cannot write .*r\.html \(ENOENT\); pass --out a writable path/);
  });

  it('with no sidecars says so and how to get some; with no outcomes, how to record them; with too few, how many more', () => {
    const dir = tempDir();
    const empty = cli(['report', '--format', 'html', '--out', '-'], dir, { FORGE_DIR: join(dir, 'none') });
    expect(empty.status, empty.stderr).toBe(0);
    expect(empty.stdout).toContain('No sidecars yet');
    expect(empty.stdout).toContain('forge-reflect install');
    expect(empty.stdout).not.toContain('<svg');
    const state = join(dir, 'state');
    writeHtmlCorpus(state, { outcomes: false });
    const noOutcomes = cli(['report', '--format', 'html', '--out', '-'], dir, { FORGE_DIR: state });
    expect(noOutcomes.stdout).toContain('No outcomes are recorded yet');
    expect(noOutcomes.stdout).toContain('forge-reflect outcome --task');
    const few = cli(['outcome', '--task', 'acme#1', '--correct', '--source', 'human', '--at', '2026-11-02T00:00:00Z'], dir, { FORGE_DIR: state });
    expect(few.status, few.stderr).toBe(0);
    const page = cli(['report', '--format', 'html', '--out', '-'], dir, { FORGE_DIR: state }).stdout;
    expect(page).toContain('9 more correct and 10 more wrong outcome(s) are needed (at least 10 of each)');
    expect(page).not.toContain('Reliability diagram');
  });
});

describe('analyze calibration --format html', () => {
  it('draws the same reliability diagram for any corpus file, and the P1 script passes --format html through', () => {
    const dir = tempDir();
    const rows: string[] = [];
    for (let i = 0; i < 30; i++) rows.push(JSON.stringify({ confidence: [0.15, 0.35, 0.55, 0.75, 0.95][i % 5], correct: Math.floor(i / 5) % 6 < (i % 5) + 1 }));
    writeFileSync(join(dir, 'corpus.jsonl'), `${rows.join('\n')}\n`);
    const r = cli(['analyze', 'calibration', '--corpus', 'corpus.jsonl', '--format', 'html', '--out', 'p1.html'], dir);
    expect(r.status, r.stderr).toBe(0);
    const html = readFileSync(join(dir, 'p1.html'), 'utf8');
    expect(html).toContain('Reliability diagram');
    expect(html).toMatch(/<td>0\.9–1\.0<\/td><td>6<\/td><td>0\.95<\/td><td>0\.83<\/td>/);
    const script = join(CLI, '..', '..', '..', '..', 'scripts', 'analysis', 'reflect-calibration.sh');
    const s = spawnSync('bash', [script, '--corpus', 'corpus.jsonl', '--format', 'html', '--out', 'p1-script.html'], { cwd: dir, encoding: 'utf8' });
    expect(s.status, s.stderr).toBe(0);
    expect(readFileSync(join(dir, 'p1-script.html'), 'utf8')).toContain('Reliability diagram');
    expect(cli(['analyze', 'git-history', '--format', 'html'], dir).status).toBe(2);
  });
});

describe('bundle: the charting libraries only behind a dynamic import', () => {
  const withVega = chunksWith('vega-lite');
  it('the marker is found (so the check below means something)', () => {
    expect(withVega.length).toBeGreaterThan(0);
  });
  // Every command's module: what cli.js loads on demand.
  const commands = [...readFileSync(join(BUNDLE, 'cli.js'), 'utf8').matchAll(/import\("\.\/([^"]+\.js)"\)/g)].map((m) => m[1] as string);
  it('finds the command modules', () => {
    expect(commands.length).toBeGreaterThan(15);
  });
  const entries = ['cli.js', ...commands];
  it.each(entries)('%s does not statically reach vega', (entry) => {
    expect([...staticClosure(entry)].filter((f) => withVega.includes(f))).toEqual([]);
  });
});
