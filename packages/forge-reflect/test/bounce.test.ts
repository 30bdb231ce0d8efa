import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReviewResultV1, TestResultV1 } from '@forge-reflect/reflection-types';
import { afterEach, describe, expect, it } from 'vitest';
import { openEventLog } from '../src/log/event-log.js';
import { attemptKey } from '../src/loops/attempt-key.js';
import {
  decide,
  DEFAULT_POLICY,
  parsePolicy,
  renderFixBrief,
  summarizeFeedback,
  summarizeReview,
  summarizeTests,
  type TaskHistory,
} from '../src/loops/bounce-core.js';
import { recordCheck, taskHistory } from '../src/loops/bounce-store.js';
import { CLI, cleanupTempDirs, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const T0 = Date.parse('2025-11-22T10:00:00Z');
const fresh: TaskHistory = { bounces: 0, previously_passed: new Set() };

const finding = (id: string, severity: 'info' | 'warning' | 'error' | 'critical', extra: Record<string, unknown> = {}) => ({
  id,
  severity,
  category: 'correctness' as const,
  message: `problem ${id}`,
  confidence: 0.8,
  fixable: true,
  ...extra,
});
const review = (decision: ReviewResultV1['decision'], findings: ReturnType<typeof finding>[]): ReviewResultV1 => ({ decision, findings });

const failure = (name: string, confidence: number, fix = true) => ({
  test_name: name,
  error: 'expected 1, got 2',
  root_cause: { type: 'logic' as const, description: 'off by one', file: 'src/a.ts', line: 3 },
  confidence,
  ...(fix ? { suggested_fix: { description: 'use < not <=' } } : {}),
});
const tests = (passed: string[], failures: ReturnType<typeof failure>[]): TestResultV1 => ({
  summary: { total: passed.length + failures.length, passed: passed.length, failed: failures.length, skipped: 0 },
  failures,
  passed_tests: passed,
});

describe('the bounce decision, rule by rule', () => {
  it('approve: the review approves (even with findings)', () => {
    const d = decide(summarizeReview(review('approve', [finding('a', 'critical')])), fresh);
    expect([d.decision, d.rule]).toEqual(['approve', 'review_approved']);
  });

  it('approve: request_changes without error/critical findings', () => {
    const d = decide(summarizeReview(review('request_changes', [finding('a', 'warning'), finding('b', 'info')])), fresh);
    expect([d.decision, d.rule]).toEqual(['approve', 'no_blocking_findings']);
  });

  it('escalate: the review asks for a human', () => {
    const d = decide(summarizeReview(review('require_human', [finding('a', 'critical')])), fresh);
    expect([d.decision, d.rule]).toEqual(['escalate', 'human_required']);
  });

  it('bounce: only the error/critical findings go back, numbered from 1', () => {
    const d = decide(summarizeReview(review('request_changes', [finding('a', 'critical'), finding('b', 'warning'), finding('c', 'error')])), fresh);
    expect([d.decision, d.rule, d.bounce_number]).toEqual(['bounce', 'actionable_items', 1]);
    expect(d.items.map((i) => i.id)).toEqual(['a', 'c']);
  });

  it('approve: tests without failures', () => {
    const d = decide(summarizeTests(tests(['t1', 't2'], [])), fresh);
    expect([d.decision, d.rule]).toEqual(['approve', 'tests_passed']);
  });

  it('bounce: only failures with a suggested fix and confidence > 0.7 go back (0.7 itself does not)', () => {
    const d = decide(summarizeTests(tests([], [failure('x', 0.9), failure('y', 0.7), failure('z', 0.95, false)])), fresh);
    expect([d.decision, d.bounce_number]).toEqual(['bounce', 1]);
    expect(d.items.map((i) => i.id)).toEqual(['x']);
  });

  it('escalate: no failure is actionable', () => {
    const d = decide(summarizeTests(tests([], [failure('y', 0.7), failure('z', 0.95, false)])), fresh);
    expect([d.decision, d.rule]).toEqual(['escalate', 'no_actionable']);
  });

  it('escalate: max bounces (review 3, testing 2 by default; a policy overrides)', () => {
    const threeBlocking = summarizeReview(review('request_changes', [finding('a', 'error')]));
    expect(decide(threeBlocking, { bounces: 3, last_actionable: 2, previously_passed: new Set() }).rule).toBe('max_bounces');
    expect(decide(threeBlocking, { bounces: 2, last_actionable: 2, previously_passed: new Set() }).decision).toBe('bounce');
    const t = summarizeTests(tests([], [failure('x', 0.9)]));
    expect(decide(t, { bounces: 2, last_actionable: 3, previously_passed: new Set() }).rule).toBe('max_bounces');
    const policy = parsePolicy({ max_bounces: { testing: 4 } });
    if (typeof policy === 'string') throw new Error(policy);
    expect(policy.max_bounces).toEqual({ review: 3, testing: 4, feedback: 3 });
    expect(decide(t, { bounces: 2, last_actionable: 3, previously_passed: new Set() }, policy).decision).toBe('bounce');
  });

  it('escalate: diminishing returns when the actionable count did not go down', () => {
    const two = summarizeReview(review('request_changes', [finding('a', 'error'), finding('b', 'error')]));
    expect(decide(two, { bounces: 1, last_actionable: 2, previously_passed: new Set() }).rule).toBe('diminishing_returns');
    expect(decide(two, { bounces: 1, last_actionable: 1, previously_passed: new Set() }).rule).toBe('diminishing_returns');
    expect(decide(two, { bounces: 1, last_actionable: 3, previously_passed: new Set() }).bounce_number).toBe(2);
  });

  it('escalate: a regression beats everything but approval', () => {
    const t = summarizeTests(tests(['b'], [failure('a', 0.9)]));
    const d = decide(t, { bounces: 0, previously_passed: new Set(['a', 'c']) });
    expect([d.decision, d.rule, d.regressions]).toEqual(['escalate', 'regression', ['a']]);
  });

  it('feedback: complete approves; unsafe steering is never offered; only unsafe steering escalates', () => {
    const base = { confidence: 0.6, rationale: 'r', issues: [] as never[] };
    expect(decide(summarizeFeedback({ ...base, verdict: 'complete', steering: [] }), fresh).rule).toBe('feedback_complete');
    const mixed = summarizeFeedback({
      ...base,
      verdict: 'partial',
      steering: [
        { id: 's1', type: 'edit', description: 'add a guard', safe: true },
        { id: 's2', type: 'command', description: 'drop the table', safe: false, command: 'psql -c "drop table x"' },
      ],
    });
    const d = decide(mixed, fresh);
    expect(d.decision).toBe('bounce');
    expect(d.items.map((i) => i.id)).toEqual(['s1']);
    expect(d.human_only.map((i) => i.id)).toEqual(['s2']);
    const brief = renderFixBrief('acme#42', 'feedback', d);
    expect(brief).toContain('Not yours to apply');
    expect(brief.split('Not yours to apply')[0]).not.toContain('drop the table');
    const onlyUnsafe = summarizeFeedback({ ...base, verdict: 'fail', steering: [{ id: 's2', type: 'command', description: 'drop it', safe: false }] });
    expect(decide(onlyUnsafe, fresh).rule).toBe('no_actionable');
  });

  it('the brief names file:line and the suggested fix and asks for surgical changes', () => {
    const d = decide(
      summarizeReview(
        review('request_changes', [finding('f1', 'critical', { file: 'src/db.ts', line: 12, suggested_fix: { description: 'use a parameterised query' } })]),
      ),
      fresh,
    );
    const brief = renderFixBrief('acme#42', 'review', d, DEFAULT_POLICY);
    expect(brief).toContain('# Fix mode: review bounce 1 of at most 3 for acme#42');
    expect(brief).toContain('`src/db.ts:12`');
    expect(brief).toContain('suggested fix: use a parameterised query');
    expect(brief).toMatch(/surgical changes/);
  });

  it('parsePolicy refuses unknown keys and bad numbers', () => {
    expect(parsePolicy({ max: 1 })).toMatch(/\/max is not allowed/);
    expect(parsePolicy({ max_bounces: { deploy: 1 } })).toMatch(/\/max_bounces\/deploy/);
    expect(parsePolicy({ max_bounces: { review: 1.5 } })).toMatch(/whole number/);
  });
});

describe('scenarios through the store', () => {
  function run(db: ReturnType<typeof openEventLog>['db'], task: string, check: ReturnType<typeof summarizeTests>, at: number) {
    const d = decide(check, taskHistory(db, task, check.phase));
    return { d, rec: recordCheck(db, task, check, d, at) };
  }

  it('plateau: review bounces with 3, then 2, then 2 actionable → bounce, bounce, diminishing returns', () => {
    const log = openEventLog(tempDir());
    const r = (n: number) =>
      summarizeReview(
        review(
          'request_changes',
          Array.from({ length: n }, (_, i) => finding(`f${i}`, 'error')),
        ),
      );
    const a = run(log.db, 't1', r(3), T0);
    const b = run(log.db, 't1', r(2), T0 + 1000);
    const c = run(log.db, 't1', r(2), T0 + 2000);
    expect([a.d.decision, a.d.bounce_number, b.d.decision, b.d.bounce_number, c.d.decision, c.d.rule]).toEqual([
      'bounce',
      1,
      'bounce',
      2,
      'escalate',
      'diminishing_returns',
    ]);
    expect(c.rec.task_bounces).toBe(2);
    const rows = log.db.prepare('SELECT number, actionable, total_items, resolved FROM bounces ORDER BY number').all();
    // bounce 1 was followed by a bounce (not resolved); bounce 2 by an escalation (not resolved)
    expect(rows).toEqual([
      { number: 1, actionable: 3, total_items: 3, resolved: 0 },
      { number: 2, actionable: 2, total_items: 2, resolved: 0 },
    ]);
    log.close();
  });

  it('a bounce followed by an approval is resolved', () => {
    const log = openEventLog(tempDir());
    run(log.db, 't2', summarizeReview(review('request_changes', [finding('a', 'error')])), T0);
    const b = run(log.db, 't2', summarizeReview(review('approve', [])), T0 + 1);
    expect(b.rec.closed_bounce).toEqual({ number: 1, resolved: 1 });
    log.close();
  });

  it('regression: a test that passed in attempt 1 fails in attempt 2', () => {
    const log = openEventLog(tempDir());
    const first = run(log.db, 't3', summarizeTests(tests(['login works', 'logout works'], [failure('refresh works', 0.9)])), T0);
    expect(first.d.decision).toBe('bounce');
    const second = run(log.db, 't3', summarizeTests(tests(['refresh works', 'logout works'], [failure('login works', 0.9)])), T0 + 1);
    expect([second.d.decision, second.d.rule, second.d.regressions]).toEqual(['escalate', 'regression', ['login works']]);
    // another task's history does not count
    expect(run(log.db, 'other', summarizeTests(tests([], [failure('login works', 0.9)])), T0 + 2).d.decision).toBe('bounce');
    log.close();
  });

  it('max bounces for testing: two bounces with 3 then 2 actionable, the third check escalates', () => {
    const log = openEventLog(tempDir());
    const t = (n: number) =>
      summarizeTests(
        tests(
          [],
          Array.from({ length: n }, (_, i) => failure(`t${i}`, 0.9)),
        ),
      );
    expect(run(log.db, 't4', t(3), T0).d.bounce_number).toBe(1);
    expect(run(log.db, 't4', t(2), T0 + 1).d.bounce_number).toBe(2);
    expect(run(log.db, 't4', t(1), T0 + 2).d.rule).toBe('max_bounces');
    log.close();
  });
});

describe('attemptKey', () => {
  it.each([
    ['acme#42', 'acme_2342'],
    ['A-z_9', 'A-z_5f9'],
    ['../x', '_2e_2e_2fx'],
    ['é', '_c3_a9'],
  ])('%j → %j', (ref, key) => expect(attemptKey(ref)).toBe(key));

  it('truncates to 200 characters', () => {
    expect(attemptKey('#'.repeat(150))).toHaveLength(200);
    expect(attemptKey('a'.repeat(300))).toBe('a'.repeat(200));
  });
});

describe('forge-reflect bounce (CLI)', () => {
  const cli = (args: string[], dir: string) => {
    const r = spawnSync(process.execPath, [CLI, ...args], {
      encoding: 'utf8',
      cwd: dir,
      env: { ...process.env, FORGE_DIR: join(dir, '.forge'), FORGE_NOW: '2025-11-22T10:00:00Z', NO_COLOR: '1' },
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  it('bounces, writes the attempt file (0600 in a 0700 folder) and the loop events; refuses a bad file without recording', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'r.json'), JSON.stringify(review('request_changes', [finding('f1', 'critical', { file: 'src/db.ts', line: 12 })])));
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ decision: 'approve', findings: [{ ...finding('f1', 'error'), severity: 'fatal' }] }));
    const bad = cli(['bounce', '--task', 'acme#42', '--review', 'bad.json'], dir);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(
      /^forge-reflect: the review file bad\.json does not match review-result\.v1: \/findings\/0\/severity must be one of .* \(rule: enum\)/,
    );
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(join(dir, '.forge', 'events.db'))).toBe(false);

    const ok = cli(['bounce', '--task', 'acme#42', '--review', 'r.json'], dir);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^bounce \(actionable_items\)/);
    expect(ok.stdout).toContain('`src/db.ts:12`');
    const file = join(dir, '.forge', 'attempts', 'acme_2342.attempt');
    expect(readFileSync(file, 'utf8')).toBe('2\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, '.forge', 'attempts')).mode & 0o777).toBe(0o700);

    const again = cli(['bounce', '--task', 'acme#42', '--review', 'r.json', '--json'], dir);
    const out = JSON.parse(again.stdout) as Record<string, unknown>;
    expect([out.decision, out.rule, out.next_reflection_attempt]).toEqual(['escalate', 'diminishing_returns', 2]);
    const log = openEventLog(join(dir, '.forge'));
    const types = log.db.prepare("SELECT type FROM events WHERE id LIKE 'loop-%' ORDER BY ts, type").pluck().all();
    expect(types.sort()).toEqual(['loop.diminishing_returns', 'loop.escalated', 'loop.phase_bounce']);
    log.close();
  });

  it('needs exactly one input', () => {
    const dir = tempDir();
    const r = cli(['bounce', '--task', 'x'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/exactly one of --review/);
  });
});
