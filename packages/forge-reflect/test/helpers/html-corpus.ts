/**
 * A known corpus for the HTML report: 30 sidecars (one task each, confidence 0.15/0.35/0.55/0.75/0.95
 * in turn, every third one needing review on auth, the rest docs) and one outcome per task, so that
 * each confidence has 6 rows and k+1 of the 6 at the k-th confidence are correct: five reliability
 * bins of n=6 with shares 1/6 … 5/6, 15 correct and 15 wrong.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openEventLog } from '../../src/event-log.js';

export const CONFIDENCES = [0.15, 0.35, 0.55, 0.75, 0.95] as const;
export const TURNS = 30;

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
      risk: { needs_review: review, score: review ? 1 : 0.1, surface: review ? 'auth' : 'docs', reason: review ? 'auth surface (weight 1)' : 'docs surface (weight 0.1)' },
      files_changed: [review ? 'src/auth/a.ts' : 'docs/a.md'],
      provenance: { source: 'stop-hook', reflection_attempt: 1, degraded: false, reflection_mode: 'solo' },
    };
    writeFileSync(join(dir, `20261101T10${minute}00.000000Z-s${i}-1.reflection.json`), JSON.stringify(sidecar));
  }
  if (options.outcomes === false) return;
  const log = openEventLog(stateDir);
  try {
    const insert = log.db.prepare('INSERT INTO outcomes (task_ref, correct, source, at, recorded_at) VALUES (?, ?, ?, ?, ?)');
    for (let i = 0; i < TURNS; i++) {
      const k = i % 5;
      insert.run(`acme#${i}`, Math.floor(i / 5) % 6 < k + 1 ? 1 : 0, 'human', '2026-11-02T00:00:00.000000Z', '2026-11-02T00:00:00.000000Z');
    }
  } finally {
    log.close();
  }
}
