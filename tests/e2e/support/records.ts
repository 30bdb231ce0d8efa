/** What a session left in a scratch repo: its sidecars (files) and events (through the project's CLI). */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { ScratchRepo } from './scratch.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

export function sidecarsOf(repo: ScratchRepo): Json[] {
  const dir = join(repo.dir, '.forge', 'reflections');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => n.endsWith('.reflection.json'))
    .sort()
    .map((n) => JSON.parse(readFileSync(join(dir, n), 'utf8')) as Json);
}

export function eventsOf(repo: ScratchRepo): Json[] {
  const r = repo.cli(['events', '--json', '--limit', '1000']);
  if (r.status !== 0) throw new Error(`forge-reflect events failed (${r.status}): ${r.stderr}`);
  const parsed = JSON.parse(r.stdout) as Json[] | { events: Json[] };
  return Array.isArray(parsed) ? parsed : parsed.events;
}

/** Every file under `rel` (recursively) with its bytes, for a byte-for-byte comparison. */
export function treeBytes(repo: ScratchRepo, rel: string): Record<string, string> {
  const root = join(repo.dir, rel);
  if (!existsSync(root)) return {};
  const out: Record<string, string> = {};
  for (const name of readdirSync(root, { recursive: true }) as string[]) {
    const path = join(root, name);
    try {
      out[name] = readFileSync(path).toString('base64');
    } catch {
      out[name] = '<folder>';
    }
  }
  return out;
}

export const REPORT = {
  confidence: 0.55,
  most_likely_wrong: { surface: 'auth', description: 'the token is never rotated' },
  known_not_in_diff: 'did not run the integration tests',
};

/** A final answer that ends with the self-report block (none when `report` is null). */
export function answerWith(text: string, report: object | null = REPORT): string {
  return report === null ? text : `${text}\n\n\`\`\`reflection\n${JSON.stringify(report)}\n\`\`\`\n`;
}

/** A logged event's payload, parsed (the CLI gives it as a string). */
export function payloadOf(e: Json): Json {
  return typeof e.payload === 'string' ? JSON.parse(e.payload) : e.payload;
}

/**
 * The one sidecar of the scripted session every runtime's test runs (a write to src/auth/token.ts,
 * REPORT in the final answer): the self-report merged, the auth surface asking for review.
 */
export function expectAuthTurnSidecar(repo: ScratchRepo, sessionId: string | undefined, agent: string): Json {
  const all = sidecarsOf(repo);
  expect(all).toHaveLength(1);
  const sidecar = all[0] as Json;
  expect(sidecar.session_id).toBe(sessionId);
  expect(sidecar.agent).toBe(agent);
  expect(sidecar.confidence).toBe(REPORT.confidence);
  expect(sidecar.most_likely_wrong).toEqual(REPORT.most_likely_wrong);
  expect(sidecar.known_not_in_diff).toBe(REPORT.known_not_in_diff);
  expect(sidecar.provenance.degraded).toBe(false);
  expect(sidecar.risk.surface).toBe('auth');
  expect(sidecar.risk.needs_review).toBe(true);
  expect(sidecar.files_changed).toEqual(['src/auth/token.ts']);
  return sidecar;
}

/** Every row of the log is the one session's, as the one runtime. */
export function expectOnlySession(log: Json[], sessionId: string | undefined, runtime: string): void {
  expect(log.every((e) => e.session_id === sessionId)).toBe(true);
  expect(new Set(log.map((e) => e.runtime))).toEqual(new Set([runtime]));
}

/** Each event once: no two rows (reflection.written aside) share the key that names a hook's event. */
export function expectEachEventOnce(log: Json[], key: (e: Json) => string): void {
  const keys = log.filter((e) => e.type !== 'reflection.written').map(key);
  expect(new Set(keys).size).toBe(keys.length);
}

/**
 * The spool log's files (segments and the live log) with their bytes. A drain overwrites what it
 * committed with zeros (docs/spool-format.md) and keeps the file 60 s after sealing it, so right
 * after a session's drain they are still there, all zeros.
 */
function spoolLogFiles(repo: ScratchRepo): Buffer[] {
  const spool = join(repo.dir, '.forge', 'spool');
  if (!existsSync(spool)) return [];
  return readdirSync(spool)
    .filter((n) => n.endsWith('.seg') || n === 'events.log')
    .sort()
    .map((name) => readFileSync(join(spool, name)));
}

/**
 * Linux: the client's payloads (all small in these sessions) arrived as records of the spool log,
 * and once drained, not one byte of them is left there (all zeros). A Mac (bash 3.2, which has no
 * clock): no records at all, every event a spool file of its own named with 16 zeros, logged with
 * its time of writing in its id (docs/decisions.md).
 */
export function expectEventsAsRecords(repo: ScratchRepo, log: Json[], platform: 'linux' | 'mac' = 'linux'): void {
  const files = spoolLogFiles(repo);
  expect(log.length).toBeGreaterThan(0);
  expect(new Set(log.map((e) => e.id)).size).toBe(log.length);
  if (platform === 'mac') {
    expect(files.reduce((n, f) => n + f.length, 0)).toBe(0);
    expect(log.filter((e) => !/^[1-9][0-9]{15}-/.test(String(e.id)))).toEqual([]);
    return;
  }
  // Every event but the Stop hook's two took at least a record's frame (\x1e … \x1f) in the log.
  const written = files.reduce((n, f) => n + f.length, 0);
  expect(written).toBeGreaterThanOrEqual(2 * log.filter((e) => e.type !== 'turn.stopped' && e.type !== 'reflection.written').length);
  expect(files.filter((f) => f.some((byte) => byte !== 0))).toEqual([]);
}
