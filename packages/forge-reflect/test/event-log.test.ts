import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS, openEventLog, SCHEMA_VERSION } from '../src/log/event-log.js';
import type { EventRow } from '../src/events.js';
import { UserError } from '../src/errors.js';
import { cleanupTempDirs, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

function row(id: string, extra: Partial<EventRow> = {}): EventRow {
  return {
    id,
    session_id: 'sess-aaaa-1',
    agent_id: null,
    ts: '2025-11-22T10:15:00.000001Z',
    runtime: 'claude-code',
    type: 'tool.executed',
    hook_event: 'PostToolUse',
    tool_name: 'Bash',
    tool_use_id: null,
    duration_ms: 5,
    cwd: '/repo',
    payload: '{}',
    truncated: 0,
    ...extra,
  };
}

describe('openEventLog', () => {
  it('creates a migrated database in a new state folder, 0600, in WAL mode', () => {
    const stateDir = join(tempDir(), '.forge');
    const log = openEventLog(stateDir);
    try {
      expect(log.schemaVersion()).toBe(SCHEMA_VERSION);
      expect(SCHEMA_VERSION).toBe(MIGRATIONS.length);
      expect(log.db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(Number(log.db.pragma('busy_timeout', { simple: true }))).toBeGreaterThanOrEqual(1000);
      const columns = (log.db.prepare('PRAGMA table_info(events)').all() as { name: string }[]).map((c) => c.name);
      expect(columns).toEqual([
        'id',
        'session_id',
        'agent_id',
        'ts',
        'runtime',
        'type',
        'hook_event',
        'tool_name',
        'tool_use_id',
        'duration_ms',
        'cwd',
        'payload',
        'truncated',
      ]);
      const indexes = (
        log.db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL").all() as { name: string }[]
      ).map((i) => i.name);
      expect(indexes.sort()).toEqual(['events_by_session', 'events_by_tool', 'events_by_ts', 'events_by_type']);
      log.insertBatch([row('a')]);
      expect(statSync(log.path).mode & 0o777).toBe(0o600);
      expect(existsSync(`${log.path}-wal`)).toBe(true);
      expect(statSync(`${log.path}-wal`).mode & 0o777).toBe(0o600);
      expect(statSync(stateDir).mode & 0o777).toBe(0o700);
    } finally {
      log.close();
    }
  });

  it('migrates an existing empty file, and re-opening changes nothing', () => {
    const stateDir = tempDir();
    writeFileSync(join(stateDir, 'events.db'), '');
    const first = openEventLog(stateDir);
    first.insertBatch([row('a'), row('b')]);
    const schema = first.db.prepare('SELECT sql FROM sqlite_master ORDER BY name').all();
    first.close();
    for (let i = 0; i < 3; i++) {
      const again = openEventLog(stateDir);
      expect(again.schemaVersion()).toBe(SCHEMA_VERSION);
      expect(again.count()).toBe(2);
      expect(again.db.prepare('SELECT sql FROM sqlite_master ORDER BY name').all()).toEqual(schema);
      again.close();
    }
  });

  it('refuses a database from a newer schema with a UserError', () => {
    const stateDir = tempDir();
    const log = openEventLog(stateDir);
    log.db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    log.close();
    expect(() => openEventLog(stateDir)).toThrow(UserError);
    expect(() => openEventLog(stateDir)).toThrow(/newer than this forge-reflect knows/);
  });

  it('turns a file that is not a database into a one-line UserError', () => {
    const stateDir = tempDir();
    writeFileSync(join(stateDir, 'events.db'), 'this is not sqlite, just text that is long enough to have a header.....................');
    expect(() => openEventLog(stateDir)).toThrow(/not usable .* move it aside/);
  });
});

describe('insertBatch and query', () => {
  it('inserts once per id and counts the ignored', () => {
    const log = openEventLog(tempDir());
    try {
      expect(log.insertBatch([row('a'), row('b')])).toEqual({ inserted: 2, ignored: 0 });
      expect(log.insertBatch([row('b'), row('c')])).toEqual({ inserted: 1, ignored: 1 });
      expect(log.count()).toBe(3);
    } finally {
      log.close();
    }
  });

  it('filters by session prefix, type, tool (any case) and time; limit keeps the latest, oldest first', () => {
    const log = openEventLog(tempDir());
    try {
      log.insertBatch([
        row('1', { ts: '2025-11-22T10:00:00.000000Z', session_id: 'aaaa-1', tool_name: 'Bash' }),
        row('2', { ts: '2025-11-22T11:00:00.000000Z', session_id: 'aaaa-1', tool_name: 'Edit' }),
        row('3', { ts: '2025-11-22T12:00:00.000000Z', session_id: 'bbbb-2', tool_name: 'bash', type: 'tool.failed' }),
        row('4', { ts: '2025-11-22T13:00:00.000000Z', session_id: 'aaaa-1', tool_name: null, type: 'turn.stopped' }),
      ]);
      const ids = (f: Parameters<typeof log.query>[0]) => log.query(f).map((r) => r.id);
      expect(ids({})).toEqual(['1', '2', '3', '4']);
      expect(ids({ session: 'aaaa' })).toEqual(['1', '2', '4']);
      expect(ids({ session: 'aaaa-1' })).toEqual(['1', '2', '4']);
      expect(ids({ session: 'zzzz' })).toEqual([]);
      expect(ids({ type: 'tool.failed' })).toEqual(['3']);
      expect(ids({ tool: 'BASH' })).toEqual(['1', '3']);
      expect(ids({ since: '2025-11-22T11:00:00.000000Z' })).toEqual(['2', '3', '4']);
      expect(ids({ limit: 2 })).toEqual(['3', '4']);
      expect(ids({ session: 'aaaa', tool: 'bash', since: '2025-11-22T09:00:00.000000Z' })).toEqual(['1']);
      const plan = log.db.prepare("EXPLAIN QUERY PLAN SELECT id FROM events WHERE tool_name = 'x' COLLATE NOCASE").all() as { detail: string }[];
      expect(plan.map((p) => p.detail).join(' ')).toContain('events_by_tool');
    } finally {
      log.close();
    }
  });
});
