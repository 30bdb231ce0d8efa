/**
 * P3 over fixtures of each board shape (generic JSONL with embedded and separate events, recorded
 * outcomes, GitHub issues and issue events) and over task files kept in a git repository built here.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { analyzeBoard, readBoard } from '../src/analysis/board.js';
import { readTaskFile } from '../src/analysis/board-git.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const CLI = join(HERE, '..', 'bin', 'forge-reflect.js');
const FIXTURES = join(HERE, '..', '..', '..', 'tests', 'fixtures', 'analysis');
const DAY_MS = 86_400_000;
const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

function board(...args: string[]): { status: number | null; json: any; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, 'analyze', 'board-history', ...args], { encoding: 'utf8' });
  return { status: r.status, json: r.status === 0 && args.includes('markdown') === false ? JSON.parse(r.stdout) : r.stdout, stderr: r.stderr };
}

describe('generic exports', () => {
  it('counts completed tasks with an outcome inside the window', () => {
    const r = board('--board', join(FIXTURES, 'board-generic.jsonl'));
    expect(r.status).toBe(0);
    // completed T-1 (revert day 9), T-2 (reopened day 3), T-3 (reopened after 57 days: outside), T-5 (outcome, right)
    expect(r.json).toMatchObject({ completed: 4, open: 1, with_signal: 3, share: 0.75, right: 1, wrong: 2, verdict: 'CONTINUE' });
    expect(r.json.by_kind).toEqual({ reopened: 1, revert: 1, linked_bug: 0, outcome: 1 });
    expect(r.json.bad_rows.count).toBe(1);
    expect(r.json.bad_rows.lines[0].line).toBe(9);
  });

  it('a shorter window sees fewer outcomes and can kill', () => {
    const data = readBoard(
      [
        '{"id":"a","status":"done","completed_at":"2026-01-01T00:00:00Z"}',
        '{"id":"b","status":"done","completed_at":"2026-01-01T00:00:00Z"}',
        '{"id":"c","status":"done","completed_at":"2026-01-01T00:00:00Z"}',
        '{"id":"d","status":"done","completed_at":"2026-01-01T00:00:00Z"}',
        '{"id":"e","status":"done","completed_at":"2026-01-01T00:00:00Z"}',
        '{"id":"f","status":"done","completed_at":"2026-01-01T00:00:00Z"}',
        '{"task":"a","type":"bug","at":"2026-01-02T00:00:00Z"}',
        '{"task":"b","event":"reopened","at":"2026-01-20T00:00:00Z"}',
      ].join('\n'),
    );
    expect(analyzeBoard(data, 30 * DAY_MS)).toMatchObject({ with_signal: 2, verdict: 'CONTINUE' }); // 2/6 = 33%
    const short = analyzeBoard(data, 7 * DAY_MS); // 1/6 = 16.7% < 20%
    expect(short).toMatchObject({ with_signal: 1, verdict: 'KILL' });
    expect(short.share).toBeCloseTo(1 / 6, 12);
  });

  it('no completed tasks is INCONCLUSIVE; a JSON document with {tasks, events} is read', () => {
    expect(analyzeBoard(readBoard('{"tasks": [{"id": 1, "status": "open"}], "events": []}'), DAY_MS)).toMatchObject({
      verdict: 'INCONCLUSIVE',
      reason: 'no completed tasks',
      open: 1,
    });
  });
});

describe('GitHub Issues JSON', () => {
  it('reads issues and issue events; skips pull requests and not-planned closures; finds linked bugs', () => {
    const r = board('--board', join(FIXTURES, 'github-issues.json'), '--board', join(FIXTURES, 'github-issue-events.json'));
    expect(r.status).toBe(0);
    // completed #1 (bug #4 names it, 9 days later), #2 (nothing), #6 (reopened a day later)
    expect(r.json).toMatchObject({ completed: 3, open: 2, with_signal: 2, wrong: 2, right: 0 });
    expect(r.json.by_kind).toMatchObject({ linked_bug: 1, reopened: 1 });
    expect(r.json.shapes).toMatchObject({ github_issue: 5, github_pull_request_skipped: 1, github_event: 2 });
  });
});

describe('task files kept in git', () => {
  it('reads each file at every commit: done, reopened, reverted', () => {
    const root = mkdtempSync(join(tmpdir(), 'forge-board-'));
    roots.push(root);
    const git = (args: string[], day?: number) =>
      execFileSync('git', ['-C', root, ...args], {
        encoding: 'utf8',
        env: {
          ...process.env,
          ...(day === undefined
            ? {}
            : { GIT_AUTHOR_DATE: `@${1_767_225_600 + day * 86_400} +0000`, GIT_COMMITTER_DATE: `@${1_767_225_600 + day * 86_400} +0000` }),
        },
      });
    git(['init', '-q', '-b', 'main']);
    git(['config', 'user.email', 't@example.com']);
    git(['config', 'user.name', 't']);
    mkdirSync(join(root, 'data', 'tasks'), { recursive: true });
    const put = (day: number, message: string, files: Record<string, string>) => {
      for (const [p, t] of Object.entries(files)) writeFileSync(join(root, 'data', 'tasks', p), t);
      git(['add', '-A']);
      git(['commit', '-q', '-m', message], day);
    };
    put(0, 'add tasks', { 'a.json': '{"id":"A","status":"todo"}', 'b.md': '---\nid: B\nstatus: todo\n---\n', 'c.json': '{"id":"C","status":"todo"}' });
    put(1, 'A done', { 'a.json': '{"id":"A","status":"done"}' });
    put(2, 'B and C done', { 'b.md': '---\nid: B\nstatus: done\n---\n', 'c.json': '{"id":"C","status":"done"}' });
    put(3, 'A back to work', { 'a.json': '{"id":"A","status":"in_progress"}' });
    put(5, 'Revert "B and C done"', { 'c.json': '{"id":"C","status":"todo"}' });
    writeFileSync(join(root, 'README.md'), 'outside the data dir\n');
    git(['add', '-A']);
    git(['commit', '-q', '-m', 'Revert "unrelated"'], 6);
    const r = board('--data-dir', join(root, 'data'));
    expect(r.status).toBe(0);
    expect(r.json).toMatchObject({ completed: 3, with_signal: 2, wrong: 2 });
    expect(r.json.by_kind).toMatchObject({ reopened: 1, revert: 1 });
    expect(r.json.examples.map((e: any) => e.task).sort()).toEqual(['A', 'C']);
  });

  it('reads the status of JSON and front-matter files', () => {
    expect(readTaskFile('{"id": 7, "status": "done"}')).toEqual({ id: '7', status: 'done' });
    expect(readTaskFile('---\nstatus: "closed"\n---\nbody')).toEqual({ id: null, status: 'closed' });
  });
});

describe('errors', () => {
  it('an unreadable file exits 1 naming the path; no input or a bad window exits 2', () => {
    const missing = board('--board', '/nonexistent/export.json');
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('/nonexistent/export.json');
    expect(board().status).toBe(2);
    expect(board('--board', join(FIXTURES, 'board-generic.jsonl'), '--window', 'soon').status).toBe(2);
  });

  it('markdown puts the kill condition before the verdict', () => {
    const r = board('--board', join(FIXTURES, 'board-generic.jsonl'), '--format', 'markdown');
    expect(r.status).toBe(0);
    const text = r.json as string;
    expect(text.indexOf('Kill condition')).toBeGreaterThan(-1);
    expect(text.indexOf('Kill condition')).toBeLessThan(text.indexOf('Verdict'));
  });
});
