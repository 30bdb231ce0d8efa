import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReviewResultV1, TestResultV1 } from '@forge-reflect/reflection-types';
import { openEventLog, type EventLog } from '../src/log/event-log.js';
import type { EventRow } from '../src/events.js';
import { decide, summarizeReview, summarizeTests, type CheckSummary } from '../src/loops/bounce-core.js';
import { recordCheck, taskHistory } from '../src/loops/bounce-store.js';
import { DAY_MS } from '../src/loops/confidence.js';
import { addLearning, appliedLearning, confirmLearning, dismissLearning, rewrittenLearning } from '../src/loops/learn-store.js';
import { formatMetric, median, metricRows } from '../src/loops/metrics-core.js';
import { metricsFor } from '../src/loops/metrics-store.js';
import { isoMicros } from '../src/since.js';
import { CLI, cleanupTempDirs, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const NOW = Date.parse('2025-11-22T12:00:00Z');
const ago = (days: number) => NOW - days * DAY_MS;

let seq = 0;
function event(type: EventRow['type'], session: string, at: number, tool: string | null = null, duration: number | null = null): EventRow {
  return {
    id: `${String(at * 1000 + seq++).padStart(16, '0')}-1-test`,
    session_id: session,
    agent_id: null,
    ts: isoMicros(at),
    runtime: 'claude-code',
    type,
    hook_event: null,
    tool_name: tool,
    tool_use_id: null,
    duration_ms: duration,
    cwd: null,
    payload: '{}',
    truncated: 0,
  };
}

const review = (n: number, decision: ReviewResultV1['decision'] = 'request_changes'): CheckSummary =>
  summarizeReview({
    decision,
    findings: Array.from({ length: n }, (_, i) => ({
      id: `f${i}`,
      severity: 'error' as const,
      category: 'correctness' as const,
      message: 'm',
      confidence: 0.9,
      fixable: true,
    })),
  });
const failing = (n: number): CheckSummary => {
  const t: TestResultV1 = {
    summary: { total: n, passed: 0, failed: n, skipped: 0 },
    failures: Array.from({ length: n }, (_, i) => ({
      test_name: `t${i}`,
      error: 'e',
      root_cause: { type: 'logic' as const, description: 'd' },
      confidence: 0.9,
      suggested_fix: { description: 'fix' },
    })),
  };
  return summarizeTests(t);
};

function check(log: EventLog, task: string, c: CheckSummary, at: number): void {
  recordCheck(log.db, task, c, decide(c, taskHistory(log.db, task, c.phase)), at);
}

function sidecar(log: EventLog, name: string, task: string, at: number, confidence: number | null, degraded: 0 | 1, valid: 0 | 1 = 1): void {
  log.db.prepare("INSERT OR IGNORE INTO sidecar_dirs (id, dir) VALUES (1, '/r')").run();
  log.db
    .prepare(
      `INSERT INTO sidecars (name, dir_id, size, mtime_ns, valid, error, ts, task_ref, agent, session_id, repo, surface, score, needs_review, confidence, degraded, mode, attempt, files)
       VALUES (?, 1, 1, '1', ?, NULL, ?, ?, 'a', 's', 'repo', 'none', 0, 0, ?, ?, 'solo', 1, '[]')`,
    )
    .run(name, valid, isoMicros(at), task, confidence, degraded);
}

function outcome(log: EventLog, task: string, correct: boolean, at: number): void {
  log.db
    .prepare("INSERT INTO outcomes (task_ref, correct, source, at, note, recorded_at) VALUES (?, ?, 'human', ?, NULL, ?)")
    .run(task, correct ? 1 : 0, isoMicros(at), isoMicros(at));
}

/** The fixture; every expected value below is counted by hand from it. */
function fixture(): EventLog {
  const log = openEventLog(tempDir());
  log.insertBatch([
    // s1: Bash 100, 300 ok and 200 failed → median 200; Read 40, 60 → median 50; two turns
    event('tool.executed', 's1', ago(1), 'Bash', 100),
    event('tool.executed', 's1', ago(1), 'Bash', 300),
    event('tool.failed', 's1', ago(1), 'Bash', 200),
    event('tool.executed', 's1', ago(1), 'Read', 40),
    event('tool.executed', 's1', ago(1), 'Read', 60),
    event('turn.stopped', 's1', ago(1)),
    event('turn.stopped', 's1', ago(1)),
    // s2: one Edit, one turn
    event('tool.executed', 's2', ago(2), 'Edit', 10),
    event('turn.stopped', 's2', ago(2)),
    // a payload without a session id: the placeholder `unknown` is no session
    event('notification', 'unknown', ago(1)),
    // outside the 7-day window
    event('tool.failed', 's3', ago(10), 'Bash', 9999),
    event('turn.stopped', 's3', ago(10)),
  ]);
  // A: bounce (2) then approve → resolved; first review not approved
  check(log, 'A', review(2), ago(2));
  check(log, 'A', review(0, 'approve'), ago(1));
  // B: approved at once
  check(log, 'B', review(0, 'approve'), ago(1));
  // C: bounce (2), then 2 again → diminishing returns (escalate); its bounce is closed, not resolved
  check(log, 'C', review(2), ago(3));
  check(log, 'C', review(2), ago(2));
  // D: one test bounce, nothing after (open)
  check(log, 'D', failing(1), ago(1));
  // E: first review 20 days ago (outside), a bounce in the window (open)
  check(log, 'E', review(0, 'approve'), ago(20));
  check(log, 'E', review(1), ago(1));

  // learnings: #1 30 days ago; in the window #2, #3 added, #4 (dismissal of #1), #5 (rewrite of #3)
  addLearning(log.db, { type: 'semantic', content: 'old', context: '', tags: [], source: 'machine' }, ago(30));
  addLearning(log.db, { type: 'semantic', content: 'two', context: '', tags: [], source: 'machine' }, ago(1));
  addLearning(log.db, { type: 'procedural', content: 'three', context: '', tags: [], source: 'machine' }, ago(1));
  dismissLearning(log.db, 1, 'no', ago(1));
  confirmLearning(log.db, 2, ago(1));
  appliedLearning(log.db, 2, ago(1));
  appliedLearning(log.db, 3, ago(1));
  rewrittenLearning(log.db, 3, 'better', ago(1));

  // sidecars in the window: 4 valid (1 degraded) and 1 invalid; D's only sidecar is older
  sidecar(log, 'a1', 'A', ago(2), 0.8, 0);
  sidecar(log, 'a2', 'A', ago(1), 0.6, 0);
  sidecar(log, 'b', 'B', ago(1), 0.9, 0);
  sidecar(log, 'c', 'C', ago(1), null, 1);
  sidecar(log, 'bad', 'B', ago(1), null, 0, 0);
  sidecar(log, 'd', 'D', ago(20), 0.75, 0);
  // outcomes: A wrong then correct (latest counts); B wrong; C correct (no confidence); D correct; Z has no sidecar
  outcome(log, 'A', false, ago(3));
  outcome(log, 'A', true, ago(1));
  outcome(log, 'B', false, ago(1));
  outcome(log, 'C', true, ago(1));
  outcome(log, 'D', true, ago(1));
  outcome(log, 'Z', true, ago(1));
  return log;
}

describe('metrics on a fixture log', () => {
  it('computes every metric as counted by hand', () => {
    const log = fixture();
    const m = metricsFor(log.db, NOW, 7);
    log.close();
    expect(m.sessions).toBe(2); // s1, s2 (s3 is older)
    expect(m.tool_success_rate).toBe(5 / 6); // 5 executed, 1 failed
    expect(m.tool_median_ms).toEqual({ Bash: 200, Edit: 10, Read: 50 });
    expect(m.tool_calls_per_turn).toBe(2); // 6 calls / 3 turns
    expect(m.avg_bounces_per_task).toEqual({ review: 3 / 4, testing: 1, feedback: null }); // A1, C1, E1 over A,B,C,E; D1 over D
    expect(m.bounce_resolution_rate).toBe(1 / 2); // A1 resolved, C1 not; D1, E1 open
    expect(m.first_pass_approval_rate).toBe(1 / 3); // A, B, C first reviewed in window; only B approved
    expect(m.diminishing_returns_rate).toBe(1 / 5); // C of A..E
    expect(m.escalation_rate).toBe(1 / 5); // C
    expect(m.learnings_per_session).toBe(4 / 2); // #2..#5 over 2 sessions
    expect(m.dismissal_rate).toBe(1 / 5); // dismiss 1 of dismiss 1 + confirm 1 + applied 2 + rewritten 1
    expect(m.human_override_rate).toBe(1 / 3); // rewritten 1 / (applied 2 + rewritten 1)
    expect(m.degraded_sidecar_rate).toBe(1 / 4);
    // labelled: A (0.6, correct), B (0.9, wrong), D (0.75, correct); confident: B, D → 1 of 2
    expect(m.calibration).toEqual({ labelled: 3, confident: 2, accuracy_when_confident: 0.5 });
  });

  it("a task's sidecars written at the same time: the one with the greater path is its latest", () => {
    const log = openEventLog(tempDir());
    try {
      sidecar(log, 'e2.reflection.json', 'E', ago(1), 0.9, 0);
      sidecar(log, 'e1.reflection.json', 'E', ago(1), 0.1, 0);
      outcome(log, 'E', true, ago(1));
      expect(metricsFor(log.db, NOW, 7).calibration).toEqual({ labelled: 1, confident: 1, accuracy_when_confident: 1 });
    } finally {
      log.close();
    }
  });

  it('the 30-day window takes in the older rows', () => {
    const log = fixture();
    const m = metricsFor(log.db, NOW, 30);
    log.close();
    expect(m.sessions).toBe(3);
    expect(m.tool_success_rate).toBe(5 / 7);
    expect(m.tool_median_ms.Bash).toBe(250); // 100, 200, 300, 9999
    expect(m.first_pass_approval_rate).toBe(2 / 4); // E's first review (approve) is now inside
  });

  it('an empty log says n/a, never 0 or NaN', () => {
    const log = openEventLog(tempDir());
    const m = metricsFor(log.db, NOW, 7);
    log.close();
    expect(m.sessions).toBe(0);
    const rows = metricRows(m).filter(([label]) => label !== 'sessions' && label !== 'outcomes labelled');
    for (const [label, value, kind] of rows) {
      expect(value, label).toBeNull();
      expect(formatMetric(value, kind), label).toBe('n/a');
    }
  });

  it('median and formatting', () => {
    expect(median([])).toBeNull();
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(formatMetric(1 / 3, 'rate')).toBe('33.3%');
    expect(formatMetric(Number.NaN, 'rate')).toBe('n/a');
  });
});

describe('forge-reflect metrics (CLI)', () => {
  it('prints n/a on an empty log, stores snapshots and shows them side by side', () => {
    const dir = tempDir();
    const cli = (args: string[], now: string) =>
      spawnSync(process.execPath, [CLI, ...args], {
        encoding: 'utf8',
        cwd: dir,
        env: { ...process.env, FORGE_DIR: join(dir, '.forge'), NO_COLOR: '1', FORGE_NOW: now },
      });
    const shown = cli(['metrics'], '2025-11-22T12:00:00Z');
    expect(shown.status).toBe(0);
    expect(shown.stdout).toMatch(/tool success rate\s+n\/a/);
    expect(shown.stdout).not.toMatch(/NaN/);
    expect(cli(['metrics', 'snapshot'], '2025-11-20T12:00:00Z').stdout).toMatch(/stored snapshot #1/);
    expect(cli(['metrics', 'snapshot', '--days', '30'], '2025-11-22T12:00:00Z').status).toBe(0);
    const trend = cli(['metrics', '--trend'], '2025-11-22T12:00:00Z');
    expect(trend.stdout.split('\n')[0]).toMatch(/^METRIC\s+2025-11-20 \(7d\)\s+2025-11-22 \(30d\)$/);
    expect(cli(['metrics', '--days', '14'], '2025-11-22T12:00:00Z').status).toBe(2);
  });
});
