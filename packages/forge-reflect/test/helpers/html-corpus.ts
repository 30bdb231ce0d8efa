/**
 * A known corpus for the HTML report: 30 sidecars (one task each, confidence 0.15/0.35/0.55/0.75/0.95
 * in turn, every third one needing review on auth, the rest docs) and one outcome per task, so that
 * each confidence has 6 rows and k+1 of the 6 at the k-th confidence are correct: five reliability
 * bins of n=6 with shares 1/6 … 5/6, 15 correct and 15 wrong. The event log holds 7 tool calls:
 * Bash 4 (1 failed), Write 2, Edit 1.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openEventLog } from '../../src/log/event-log.js';

export const CONFIDENCES = [0.15, 0.35, 0.55, 0.75, 0.95] as const;
export const TURNS = 30;

export const TOOL_CALLS: ReadonlyArray<[tool: string, failed: boolean, ms: number]> = [
  ['Bash', false, 1200],
  ['Bash', true, 300],
  ['Bash', false, 90],
  ['Bash', false, 4000],
  ['Write', false, 12],
  ['Write', false, 15],
  ['Edit', false, 20],
];

export function writeHtmlCorpus(stateDir: string, options: { outcomes?: boolean } = {}): void {
  const dir = join(stateDir, 'reflections');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (let i = 0; i < TURNS; i++) {
    const review = i % 3 === 0;
    const minute = String(i).padStart(2, '0');
    const sidecar = {
      schema: 'reflection.v1',
      task_ref: `acme#${i}`,
      agent: 'claude-code',
      session_id: `s${i}`,
      timestamp: `2026-11-01T10:${minute}:00.000000Z`,
      repo: 'acme',
      confidence: CONFIDENCES[i % 5],
      most_likely_wrong: { surface: 'auth', description: `the <b>likely</b> flaw of turn ${i}` },
      known_not_in_diff: null,
      risk: {
        needs_review: review,
        score: review ? 1 : 0.1,
        surface: review ? 'auth' : 'docs',
        reason: review ? 'auth surface (weight 1)' : 'docs surface (weight 0.1)',
      },
      files_changed: [review ? 'src/auth/a.ts' : 'docs/a.md'],
      provenance: { source: 'stop-hook', reflection_attempt: 1, degraded: false, reflection_mode: 'solo' },
    };
    writeFileSync(join(dir, `20261101T10${minute}00.000000Z-s${i}-1.reflection.json`), JSON.stringify(sidecar));
  }
  const log = openEventLog(stateDir);
  try {
    const event = log.db.prepare(`INSERT INTO events (id, session_id, ts, runtime, type, hook_event, tool_name, tool_use_id, duration_ms, payload)
                                  VALUES (?, 's0', ?, 'claude-code', ?, 'PostToolUse', ?, ?, ?, '{}')`);
    TOOL_CALLS.forEach(([tool, failed, ms], i) =>
      event.run(`e${i}`, `2026-11-01T10:00:0${i}.000000Z`, failed ? 'tool.failed' : 'tool.executed', tool, `toolu_${i}`, ms),
    );
    if (options.outcomes === false) return;
    const insert = log.db.prepare('INSERT INTO outcomes (task_ref, correct, source, at, recorded_at) VALUES (?, ?, ?, ?, ?)');
    for (let i = 0; i < TURNS; i++) {
      const k = i % 5;
      insert.run(`acme#${i}`, Math.floor(i / 5) % 6 < k + 1 ? 1 : 0, 'human', '2026-11-02T00:00:00.000000Z', '2026-11-02T00:00:00.000000Z');
    }
  } finally {
    log.close();
  }
}
