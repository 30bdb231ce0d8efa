/**
 * The per-tool metrics (seed 000 §2.3, §7.1: toolSuccessRate[tool], durations) and stagnation
 * (seed 003 §8.1: the same tool call failing 3+ times in a row), read from the rollups and the
 * window's edge hours, no statement scanning a table (checked with EXPLAIN QUERY PLAN).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openEventLog, type EventLog } from '../src/log/event-log.js';
import type { EventRow } from '../src/events.js';
import { DAY_MS } from '../src/loops/confidence.js';
import { formatMetric, metricRows } from '../src/loops/metrics-core.js';
import { metricsFor, WINDOW_SQL } from '../src/loops/metrics-store.js';
import { planWindow } from '../src/loops/metrics-window.js';
import { isoMicros } from '../src/since.js';
import { cleanupTempDirs, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const NOW = Date.parse('2026-11-22T12:00:00Z');
let seq = 0;

/** A tool call `seconds` after the start of yesterday, with its input. */
function call(session: string, seconds: number, tool: string, failed: boolean, input: object, duration: number | null = null): EventRow {
  const at = NOW - DAY_MS + seconds * 1000;
  return {
    id: `${String(at * 1000 + seq++).padStart(16, '0')}-1-test`,
    session_id: session,
    agent_id: null,
    ts: isoMicros(at),
    runtime: 'claude-code',
    type: failed ? 'tool.failed' : 'tool.executed',
    hook_event: 'PostToolUse',
    tool_name: tool,
    tool_use_id: null,
    duration_ms: duration,
    cwd: null,
    payload: JSON.stringify({ tool_name: tool, tool_input: input }),
    truncated: 0,
  };
}

function withLog(rows: EventRow[], body: (log: EventLog) => void): void {
  const log = openEventLog(tempDir());
  try {
    log.insertBatch(rows);
    body(log);
  } finally {
    log.close();
  }
}

describe('per-tool metrics', () => {
  it('gives each tool its success rate, calls, median and mean duration; a tool without durations says n/a', () => {
    const test = { command: 'npm test' };
    withLog(
      [
        call('s1', 1, 'Bash', false, test, 100),
        call('s1', 2, 'Bash', true, test, 300),
        call('s1', 3, 'Bash', false, test, 200),
        call('s1', 4, 'Bash', false, test, 1000),
        call('s1', 5, 'Write', false, { file_path: 'a' }, 10),
        call('s1', 6, 'Write', false, { file_path: 'b' }, 30),
        call('s1', 7, 'Write', true, { file_path: 'c' }, 20),
        call('s2', 8, 'apply_patch', false, { command: 'x' }),
      ],
      (log) => {
        const m = metricsFor(log.db, NOW, 7);
        expect(m.tools).toEqual({
          Bash: { calls: 4, success_rate: 0.75, median_ms: 250, mean_ms: 400 },
          Write: { calls: 3, success_rate: 2 / 3, median_ms: 20, mean_ms: 20 },
          apply_patch: { calls: 1, success_rate: 1, median_ms: null, mean_ms: null },
        });
        expect(m.tool_success_rate).toBe(6 / 8);
        const rows = metricRows(m).map(([name, value]) => [name, value]);
        expect(rows).toContainEqual(['success rate: Bash', 0.75]);
        expect(rows).toContainEqual(['mean duration: apply_patch', null]);
        // A count prints as a whole number, not as 0.00.
        const stagnant = metricRows(m).find(([name]) => name.startsWith('stagnant runs'));
        expect(stagnant && formatMetric(stagnant[1], stagnant[2])).toBe('0');
      },
    );
  });
});

describe('stagnation: the same call failing 3 or more times in a row', () => {
  const test = { command: 'npm test' };
  const lint = { command: 'npm run lint' };
  it('counts each run of 3+ consecutive identical failing calls in a session, and nothing else', () => {
    withLog(
      [
        // s1: 3 failures of the same call in a row → 1 run; a success breaks the next streak (2 + 2) → none.
        call('s1', 1, 'Bash', true, test),
        call('s1', 2, 'Bash', true, test),
        call('s1', 3, 'Bash', true, test),
        call('s1', 4, 'Bash', true, lint),
        call('s1', 5, 'Bash', true, lint),
        call('s1', 6, 'Bash', false, lint),
        call('s1', 7, 'Bash', true, lint),
        call('s1', 8, 'Bash', true, lint),
        // s2: 4 failures of one call, but another call failing in between → 2 + 2: none; then 5 in a row → 1 run.
        call('s2', 1, 'Bash', true, test),
        call('s2', 2, 'Bash', true, test),
        call('s2', 3, 'Bash', true, lint),
        call('s2', 4, 'Bash', true, test),
        call('s2', 5, 'Bash', true, test),
        call('s2', 6, 'Edit', true, { file_path: 'x' }),
        call('s2', 7, 'Edit', true, { file_path: 'x' }),
        call('s2', 8, 'Edit', true, { file_path: 'x' }),
        call('s2', 9, 'Edit', true, { file_path: 'x' }),
        call('s2', 10, 'Edit', true, { file_path: 'x' }),
        // s3: the same input through another tool is another call: 2 + 1, none.
        call('s3', 1, 'Bash', true, test),
        call('s3', 2, 'Bash', true, test),
        call('s3', 3, 'Read', true, test),
        // Sessions do not join: 2 in s4 and 1 in s5.
        call('s4', 1, 'Bash', true, test),
        call('s4', 2, 'Bash', true, test),
        call('s5', 3, 'Bash', true, test),
      ],
      (log) => expect(metricsFor(log.db, NOW, 7).stagnant_runs).toBe(2),
    );
  });
  it('is n/a, not 0, with no tool calls in the window', () => {
    withLog([], (log) => expect(metricsFor(log.db, NOW, 7).stagnant_runs).toBeNull());
  });
});

describe('the window queries read rollups and edges, by index', () => {
  it('EXPLAIN QUERY PLAN: no statement scans a table; the events are searched by the (type, ts) or (ts) index only', () => {
    withLog([], (log) => {
      const since = isoMicros(NOW - 7 * DAY_MS + 1234);
      const until = isoMicros(NOW);
      const params = { ...planWindow(since, until), since, until };
      for (const [name, sql] of Object.entries(WINDOW_SQL)) {
        const stmt = log.db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
        const plan = (stmt.all(Object.fromEntries(Object.entries(params).filter(([k]) => sql.includes(`@${k}`)))) as Array<{ detail: string }>).map(
          (r) => r.detail,
        );
        const text = `${name}:\n${plan.join('\n')}`;
        for (const d of plan) expect(d, text).not.toMatch(/^SCAN (?!\(subquery|SUBQUERY|CONSTANT)/);
        for (const d of plan.filter((x) => /\bevents\b/.test(x))) expect(d, text).toMatch(/^SEARCH events USING (COVERING )?INDEX events_by_(type|ts) \(/);
      }
    });
  });
});
