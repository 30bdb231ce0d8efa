import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, symlinkSync, utimesSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { DRAIN_LOCK_NAME, LEGACY_LOCK_NAME } from '../src/log/drain-lock.js';
import { drainSpool, MAX_SPOOL_FILE_BYTES } from '../src/log/drain.js';
import { openEventLog } from '../src/log/event-log.js';
import type { EventRow } from '../src/events.js';
import { NO_EXTRA_RULES } from '../src/log/redact.js';
import { isoFromMicros, parseSpoolFile } from '../src/log/spool-event.js';
import { CLI, cleanupTempDirs, DIST, readJson, referenceName, referencePayloadFiles, spoolEventFiles, tempDir, writeSpoolFile } from './helpers/spool.js';
import { IN_CONTEXT, PRIVATE_KEYS, SELF_EVIDENT, pemSecretPart } from './helpers/secrets.js';

afterEach(cleanupTempDirs);

const quiet = { warn: () => {} };

const HOLDER = `
const { acquireDrainLock } = await import(process.argv[1]);
const lock = acquireDrainLock(process.argv[2]);
process.stdout.write(lock ? 'held\\n' : 'busy\\n');
setInterval(() => {}, 60_000);
`;

/** Takes the lock, keeps no reference to it, and collects garbage before saying it holds it. */
const FORGETFUL_HOLDER = `
const { acquireDrainLock } = await import(process.argv[1]);
const taken = acquireDrainLock(process.argv[2]) !== undefined;
await new Promise((resolve) => setTimeout(resolve, 50));
globalThis.gc();
process.stdout.write(taken ? 'held\\n' : 'busy\\n');
setInterval(() => {}, 60_000);
`;

/** A process (the built drain lock) that holds the drain lock until SIGKILLed. */
function holdLock(spool: string, options: { forgetful?: boolean } = {}): Promise<{ kill(): Promise<NodeJS.Signals | null> }> {
  const script = options.forgetful ? ['--expose-gc', '--input-type=module', '-e', FORGETFUL_HOLDER] : ['--input-type=module', '-e', HOLDER];
  const child = spawn(process.execPath, [...script, pathToFileURL(join(DIST, 'log', 'drain-lock.js')).href, spool], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  return new Promise((resolve, reject) => {
    child.stdout.once('data', (data: Buffer) => {
      if (data.toString() !== 'held\n') reject(new Error(`the holder did not get the lock: ${data.toString()}`));
      resolve({ kill: () => (child.kill('SIGKILL'), exited) });
    });
    child.on('error', reject);
  });
}

function rows(stateDir: string): EventRow[] {
  const log = openEventLog(stateDir);
  try {
    return log.db.prepare('SELECT * FROM events ORDER BY id').all() as EventRow[];
  } finally {
    log.close();
  }
}

describe('draining the reference payloads', () => {
  it('stores every file as one typed, redacted row with its id, time and runtime', () => {
    const stateDir = tempDir();
    const files = referencePayloadFiles();
    const byId = new Map<string, Record<string, unknown>>();
    let us = 1_763_806_500_123_456;
    for (const file of files) {
      const payload = readJson(file);
      const event = typeof payload.hook_event_name === 'string' ? payload.hook_event_name : '';
      const name = writeSpoolFile(stateDir, { payload: readFileSync(file), event, receivedUs: (us += 1000) });
      byId.set(name.replace(/\.event$/, ''), { file: referenceName(file), payload, us });
    }
    const counts = drainSpool(stateDir, quiet);
    expect(counts).toMatchObject({ drained: files.length, rejected: 0, alreadyPresent: 0, locked: false, busy: false });
    expect(spoolEventFiles(stateDir)).toEqual([]);

    const stored = rows(stateDir);
    expect(stored).toHaveLength(files.length);
    const expectations: Record<string, Partial<EventRow>> = {
      'post-tool-use-bash.json': {
        runtime: 'claude-code',
        type: 'tool.executed',
        tool_name: 'Bash',
        duration_ms: 4187,
        tool_use_id: 'toolu_01ABCxyz9PqR2sT3uV4wX5yZ',
      },
      'post-tool-use-failure-bash.json': { runtime: 'claude-code', type: 'tool.failed', tool_name: 'Bash' },
      'post-tool-use-in-subagent-read.json': { type: 'tool.executed', agent_id: 'a4d2c8f1e0b3a297', tool_name: 'Read' },
      'session-start.json': { type: 'session.started', session_id: '7f3c2a9e-4b1d-4e8a-9c6f-2d5e8b1a0c34' },
      'subagent-stop.json': { type: 'subagent.stopped' },
      'pre-compact.json': { type: 'context.compacting' },
      'notification.json': { type: 'notification' },
      'other-runtimes/cursor-after-shell-execution.json': {
        runtime: 'cursor',
        type: 'tool.executed',
        session_id: 'cdefee2d-2727-4b73-bf77-d9d830f31d2a',
        duration_ms: 4187,
      },
      'other-runtimes/gemini-after-agent.json': { runtime: 'gemini', type: 'turn.stopped' },
      'other-runtimes/codex-notify-agent-turn-complete.json': { runtime: 'codex', type: 'turn.stopped', session_id: '019a3f2e-7c41-7d20-9b1a-5e6f7a8b9c0d' },
      'other-runtimes/copilot-post-tool-use.json': { runtime: 'copilot', type: 'tool.executed', tool_name: 'bash' },
      'other-runtimes/cline-post-tool-use.json': { runtime: 'cline', type: 'tool.executed', tool_name: 'execute_command', session_id: '1787234400123' },
    };
    for (const row of stored) {
      const source = byId.get(row.id) as { file: string; payload: Record<string, unknown>; us: number };
      expect(source, row.id).toBeDefined();
      expect(row.ts).toBe(isoFromMicros(source.us));
      expect(row.ts).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
      expect(row.truncated).toBe(0);
      expect(JSON.parse(row.payload)).toEqual(source.payload); // no secrets in the references: stored as sent
      expect(row.cwd).toBe('/home/dev/acme-app');
      const want = expectations[source.file];
      if (want) expect(row, source.file).toMatchObject(want);
    }
    expect(new Set(stored.map((r) => r.runtime))).toEqual(new Set(['claude-code', 'cursor', 'codex', 'gemini', 'copilot', 'cline']));
  });

  it('gives the same micro-second time as the file name', () => {
    expect(isoFromMicros(1_763_806_500_123_456)).toBe('2025-11-22T10:15:00.123456Z');
    expect(isoFromMicros(1_763_806_500_000_007)).toBe('2025-11-22T10:15:00.000007Z');
  });
});

describe('redaction on the way in', () => {
  it('leaves none of the corpus secrets anywhere in the database files', () => {
    const stateDir = tempDir();
    const secrets: string[] = [];
    for (const s of SELF_EVIDENT) {
      secrets.push(s.value);
      const payload = {
        session_id: 'sess-secret-1',
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        tool_input: { command: `curl -H 'X-Key: ${s.value}' https://api.example.com` },
        tool_response: { stdout: JSON.stringify({ key: s.value }), stderr: '' },
        [s.value]: 'as a key',
      };
      writeSpoolFile(stateDir, { payload: JSON.stringify(payload), event: 'PostToolUse' });
    }
    for (const [, secret, text] of IN_CONTEXT) {
      secrets.push(secret);
      writeSpoolFile(stateDir, {
        payload: JSON.stringify({
          session_id: 'sess-secret-2',
          hook_event_name: 'PostToolUse',
          tool_name: 'Write',
          tool_input: { file_path: '/r/.env', content: text },
        }),
        event: 'PostToolUse',
      });
    }
    for (const key of PRIVATE_KEYS) {
      secrets.push(pemSecretPart(key.value));
      writeSpoolFile(stateDir, {
        payload: JSON.stringify({ session_id: 's3', hook_event_name: 'PostToolUse', tool_name: 'Read', tool_response: { file: { content: key.value } } }),
        event: 'PostToolUse',
      });
    }
    // a secret spelled with JSON escapes, and one in a truncated payload
    const escaped = SELF_EVIDENT[0]?.value as string;
    writeSpoolFile(stateDir, { payload: `{"session_id":"s4","hook_event_name":"Stop","last_assistant_message":"\\u0073${escaped.slice(1)}"}`, event: 'Stop' });
    const cutSecret = SELF_EVIDENT[7]?.value as string;
    writeSpoolFile(stateDir, {
      payload: `{"session_id":"s5","hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":{"stdout":"GH=${cutSecret} and more outp`,
      truncated: true,
      event: 'PostToolUse',
    });

    const counts = drainSpool(stateDir, quiet);
    expect(counts.rejected).toBe(0);
    expect(counts.drained).toBe(SELF_EVIDENT.length + IN_CONTEXT.length + PRIVATE_KEYS.length + 2);

    const log = openEventLog(stateDir);
    log.db.pragma('wal_checkpoint(TRUNCATE)');
    const dbFiles = readdirSync(stateDir).filter((f) => f.startsWith('events.db'));
    const bytes = Buffer.concat(dbFiles.map((f) => readFileSync(join(stateDir, f))));
    log.close();
    expect(bytes.includes(Buffer.from('[REDACTED:'))).toBe(true);
    const leaked = secrets.filter((s) => bytes.includes(Buffer.from(s)) || bytes.includes(Buffer.from(s.slice(4, 20))));
    expect(leaked).toEqual([]);
  });

  it('applies configured patterns, and a broken one is a warning, not a failure', () => {
    const stateDir = tempDir();
    writeFileSync(
      join(stateDir, 'config.json'),
      JSON.stringify({
        redact: {
          patterns: [
            { kind: 'employee_id', regex: 'EMP-\\d{6}' },
            { kind: 'bad', regex: '(' },
          ],
        },
      }),
    );
    writeSpoolFile(stateDir, { payload: JSON.stringify({ session_id: 's', hook_event_name: 'UserPromptSubmit', prompt: 'look up EMP-123456' }) });
    const warnings: string[] = [];
    expect(drainSpool(stateDir, { warn: (m) => warnings.push(m) }).drained).toBe(1);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('invalid regex');
    expect(JSON.parse(rows(stateDir)[0]?.payload as string).prompt).toBe('look up [REDACTED:employee_id]');
  });
});

describe('payloads that are cut off or broken', () => {
  it('keeps a truncated payload that no longer parses as its redacted text, typed from what is left', () => {
    const stateDir = tempDir();
    const secret = SELF_EVIDENT.find((s) => s.kind === 'github_token')?.value as string;
    const full = JSON.stringify({
      session_id: 'sess-trunc',
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'cat big.log' },
      tool_response: { stdout: `token ${secret}\n${'x'.repeat(5000)}`, stderr: '' },
      tool_use_id: 'toolu_late',
    });
    const cut = full.slice(0, 3000);
    writeSpoolFile(stateDir, { payload: cut, truncated: true, event: 'PostToolUse' });
    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 1, rejected: 0 });
    const [row] = rows(stateDir);
    expect(row).toMatchObject({ truncated: 1, type: 'tool.executed', runtime: 'claude-code', session_id: 'sess-trunc', tool_name: 'Bash', tool_use_id: null });
    const text = JSON.parse(row?.payload as string) as string;
    expect(typeof text).toBe('string');
    expect(text).not.toContain(secret);
    expect(text).toContain('[REDACTED:github_token]');
    expect(text.startsWith('{"session_id":"sess-trunc"')).toBe(true);
  });

  it('keeps a truncated payload that still parses as JSON, with truncated = 1', () => {
    const stateDir = tempDir();
    writeSpoolFile(stateDir, { payload: '{"session_id":"s","hook_event_name":"Stop"}', truncated: true });
    drainSpool(stateDir, quiet);
    expect(rows(stateDir)[0]).toMatchObject({ truncated: 1, type: 'turn.stopped', payload: '{"session_id":"s","hook_event_name":"Stop"}' });
  });

  it('moves an untruncated non-JSON payload to rejected/ with a reason, and stores nothing', () => {
    const stateDir = tempDir();
    const name = writeSpoolFile(stateDir, { payload: 'this is not json', event: 'PostToolUse' });
    writeSpoolFile(stateDir, { payload: '{"session_id":"ok","hook_event_name":"Stop"}' });
    const counts = drainSpool(stateDir, quiet);
    expect(counts).toMatchObject({ drained: 1, rejected: 1 });
    const stem = name.replace(/\.event$/, '');
    const rejected = join(stateDir, 'spool', 'rejected');
    expect(readFileSync(join(rejected, name), 'utf8')).toContain('this is not json');
    expect(readFileSync(join(rejected, `${stem}.reason`), 'utf8')).toMatch(/payload is not JSON and not marked truncated/);
    expect(statSync(rejected).mode & 0o777).toBe(0o700);
    expect(statSync(join(rejected, `${stem}.reason`)).mode & 0o777).toBe(0o600);
    expect(spoolEventFiles(stateDir)).toEqual([]);
    expect(rows(stateDir).map((r) => r.session_id)).toEqual(['ok']);
    // the rejected file is not picked up again
    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 0, rejected: 0 });
  });

  it.each([
    ['an envelope that is not JSON', { envelopeLine: 'v=1 event=Stop', payload: '{}' }, /envelope \(line 1\) is not JSON/],
    ['an envelope of another version', { envelopeLine: '{"v":2,"event":"Stop"}', payload: '{}' }, /envelope version 2/],
    ['an envelope that is an array', { envelopeLine: '[1]', payload: '{}' }, /not a JSON object/],
    ['an empty payload', { payload: '' }, /payload is empty/],
    ['a name outside the contract', { payload: '{}', name: 'hello.event' }, /file name is not/],
  ])('rejects %s', (_what, spec, reason) => {
    const stateDir = tempDir();
    const name = writeSpoolFile(stateDir, spec);
    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 0, rejected: 1 });
    const stem = name.replace(/\.event$/, '');
    expect(readFileSync(join(stateDir, 'spool', 'rejected', `${stem}.reason`), 'utf8')).toMatch(reason);
    expect(existsSync(join(stateDir, 'spool', 'rejected', name))).toBe(true);
  });

  it('rejects a file without any newline, a symlink and a folder named *.event', () => {
    const stateDir = tempDir();
    const spool = join(stateDir, 'spool');
    mkdirSync(spool, { recursive: true });
    writeFileSync(join(spool, '1763806500000001-1-abcd.event'), '{"v":1}');
    const old = new Date(Date.now() - 120_000); // a fresh one may still be being written (below)
    utimesSync(join(spool, '1763806500000001-1-abcd.event'), old, old);
    writeFileSync(join(stateDir, 'target.json'), '{}');
    symlinkSync(join(stateDir, 'target.json'), join(spool, '1763806500000002-1-abcd.event'));
    mkdirSync(join(spool, '1763806500000003-1-abcd.event'));
    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 0, rejected: 3 });
    const reasons = readdirSync(join(spool, 'rejected'))
      .filter((f) => f.endsWith('.reason'))
      .sort()
      .map((f) => readFileSync(join(spool, 'rejected', f), 'utf8'));
    expect(reasons[0]).toMatch(/no newline/);
    expect(reasons[1]).toMatch(/symbolic link/);
    expect(reasons[2]).toMatch(/not a regular file/);
  });
});

describe('files the event hook writes under their final name, their length in the envelope', () => {
  const envelope = (bytes: number) =>
    `{"v":1,"source":"event-hook","event":"PostToolUse","runtime":"claude-code","received_us":1763806500000001,"pid":7,"cwd":"/r","cap":1048576,"bytes":${bytes}}\n`;
  const payload = '{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash"}';
  const name = '1763806500000001-7-abcd.event';
  const spoolOf = (stateDir: string) => {
    const spool = join(stateDir, 'spool');
    mkdirSync(spool, { recursive: true });
    return spool;
  };

  it('leaves a fresh file that is short of its bytes, and drains it once it is whole', () => {
    const stateDir = tempDir();
    const spool = spoolOf(stateDir);
    writeFileSync(join(spool, name), envelope(payload.length) + payload.slice(0, 20));
    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 0, rejected: 0, inFlight: 1 });
    expect(spoolEventFiles(stateDir)).toEqual([name]);
    writeFileSync(join(spool, name), payload.slice(20), { flag: 'a' });
    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 1, rejected: 0, inFlight: 0 });
    expect(rows(stateDir).map((r) => [r.id, r.session_id, r.tool_name])).toEqual([[name.slice(0, -6), 's1', 'Bash']]);
  });

  it.each([
    ['an empty file (its writer opened it, nothing more)', ''],
    ['half an envelope', envelope(payload.length).slice(0, 40)],
    ['an envelope without its payload', envelope(payload.length)],
  ])('leaves %s while it is fresh', (_what, content) => {
    const stateDir = tempDir();
    writeFileSync(join(spoolOf(stateDir), name), content);
    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 0, rejected: 0, inFlight: 1 });
    expect(spoolEventFiles(stateDir)).toEqual([name]);
  });

  it('rejects a short file untouched for over 60 s, naming what is missing, and stores nothing', () => {
    const stateDir = tempDir();
    const spool = spoolOf(stateDir);
    writeFileSync(join(spool, name), envelope(payload.length) + payload.slice(0, 20));
    const old = new Date(Date.now() - 120_000);
    utimesSync(join(spool, name), old, old);
    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 0, rejected: 1, inFlight: 0 });
    expect(readFileSync(join(spool, 'rejected', name.replace(/\.event$/, '.reason')), 'utf8')).toMatch(
      new RegExp(`payload holds 20 of the ${payload.length} bytes its envelope names, and it was last written 1[12]\\d s ago`),
    );
    expect(rows(stateDir)).toEqual([]);
  });

  it('rejects at once a payload longer than its envelope names', () => {
    const stateDir = tempDir();
    writeFileSync(join(spoolOf(stateDir), name), envelope(payload.length - 1) + payload);
    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 0, rejected: 1, inFlight: 0 });
  });

  it('drains a whole file at once, and a file without `bytes` (moved into place) as before', () => {
    const stateDir = tempDir();
    const spool = spoolOf(stateDir);
    writeFileSync(join(spool, name), envelope(Buffer.byteLength(payload)) + payload);
    writeFileSync(join(spool, '1763806500000002-7-abcd.event'), `{"v":1,"event":"Stop"}\n{"session_id":"s2","hook_event_name":"Stop"}`);
    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 2, rejected: 0, inFlight: 0 });
  });
});

describe('files of a hook without a clock (bash 3.2: 16 zeros in the name, "clock":"file")', () => {
  /** A clockless spool file as the event hook writes it on bash 3.2, written at `writtenUs`. */
  const clockless = (stateDir: string, pid: number, writtenUs: number, clock = 'file'): string => {
    const name = `0000000000000000-${pid}-abcd1234.event`;
    const payload = JSON.stringify({ session_id: `p${pid}`, hook_event_name: 'PostToolUse', tool_name: 'Bash' });
    const envelope = {
      v: 1,
      source: 'event-hook',
      event: 'PostToolUse',
      runtime: 'claude-code',
      received_us: 0,
      pid,
      cwd: '/repo',
      cap: 1048576,
      clock,
      bytes: payload.length,
    };
    const path = join(stateDir, 'spool', name);
    mkdirSync(join(stateDir, 'spool'), { recursive: true });
    writeFileSync(path, `${JSON.stringify(envelope)}\n${payload}`);
    utimesSync(path, writtenUs / 1e6, writtenUs / 1e6);
    return name;
  };

  it("takes each event's time, to the microsecond, from its time of writing, and the id with it, in the order written", () => {
    const stateDir = tempDir();
    const base = 1_796_226_943_000_000;
    // The times as the file system keeps them (utimes may round a microsecond away).
    const written = [clockless(stateDir, 30, base + 777_001), clockless(stateDir, 10, base + 123_456), clockless(stateDir, 20, base + 123_789)].map((name) =>
      Math.round(statSync(join(stateDir, 'spool', name)).mtimeMs * 1000),
    );
    const [late, early, middle] = written as [number, number, number];
    expect(early).toBeLessThan(middle);
    expect(middle).toBeLessThan(late);
    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 3, rejected: 0 });
    const log = openEventLog(stateDir);
    const stored = log.db.prepare('SELECT id, ts, session_id FROM events ORDER BY ts, id').all() as Array<{ id: string; ts: string; session_id: string }>;
    log.close();
    expect(stored.map((r) => r.session_id)).toEqual(['p10', 'p20', 'p30']);
    expect(stored.map((r) => r.ts)).toEqual([isoFromMicros(early), isoFromMicros(middle), isoFromMicros(late)]);
    expect(stored.map((r) => r.id)).toEqual([`${early}-10-abcd1234`, `${middle}-20-abcd1234`, `${late}-30-abcd1234`]);
    expect(early % 1_000_000).not.toBe(0);
    expect(spoolEventFiles(stateDir)).toEqual([]);
  });

  it('gives the same id at every read (a drain killed before it removed the file takes it once)', () => {
    const stateDir = tempDir();
    const name = clockless(stateDir, 40, 1_796_226_943_500_000);
    const first = parseSpoolFile(name, readFileSync(join(stateDir, 'spool', name)), NO_EXTRA_RULES, statSync(join(stateDir, 'spool', name)).mtimeMs);
    if (!first.ok) throw new Error(first.reason);
    const log = openEventLog(stateDir);
    expect(log.insertBatch([first.row]).inserted).toBe(1);
    log.close();
    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 0, alreadyPresent: 1, rejected: 0 });
  });

  it('refuses 16 zeros without "clock":"file", and without a time of writing asks to be read again', () => {
    const stateDir = tempDir();
    clockless(stateDir, 50, 1_796_226_943_500_000, 'none');
    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 0, rejected: 1 });
    const name = clockless(stateDir, 60, 1_796_226_943_500_000);
    const outcome = parseSpoolFile(name, readFileSync(join(stateDir, 'spool', name)), NO_EXTRA_RULES);
    expect(outcome).toMatchObject({ ok: false, incomplete: true });
  });
});

describe('a spool file larger than the hook writes', () => {
  /** A whole event (no `bytes`, no `cap`: moved into place) of exactly `size` bytes. */
  const eventOfSize = (size: number) => {
    const head = `{"v":1,"source":"event-hook","event":"PostToolUse","runtime":"claude-code","received_us":1763806500000001,"pid":7,"cwd":"/r"}\n{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":"`;
    return `${head}${'x'.repeat(size - head.length - 2)}"}`;
  };

  it(`drains one of exactly MAX_SPOOL_FILE_BYTES (${MAX_SPOOL_FILE_BYTES}) bytes, and rejects one byte more, naming the size`, () => {
    const stateDir = tempDir();
    const spool = join(stateDir, 'spool');
    mkdirSync(spool, { recursive: true });
    writeFileSync(join(spool, '1763806500000001-7-abcd.event'), eventOfSize(MAX_SPOOL_FILE_BYTES));
    writeFileSync(join(spool, '1763806500000002-7-abcd.event'), eventOfSize(MAX_SPOOL_FILE_BYTES + 1));
    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 1, rejected: 1, inFlight: 0 });
    expect(rows(stateDir).map((r) => r.id)).toEqual(['1763806500000001-7-abcd']);
    expect(readFileSync(join(spool, 'rejected', '1763806500000002-7-abcd.reason'), 'utf8')).toContain(
      `spool file is ${MAX_SPOOL_FILE_BYTES + 1} bytes, more than the ${MAX_SPOOL_FILE_BYTES} a hook writes`,
    );
  });
});

describe('exactly once', () => {
  it('drains twice without duplicates', () => {
    const stateDir = tempDir();
    for (let i = 0; i < 5; i++) writeSpoolFile(stateDir, { payload: JSON.stringify({ session_id: `s${i}`, hook_event_name: 'Stop' }) });
    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 5 });
    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 0, alreadyPresent: 0, rejected: 0 });
    writeSpoolFile(stateDir, { payload: JSON.stringify({ session_id: 's5', hook_event_name: 'Stop' }) });
    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 1 });
    expect(rows(stateDir)).toHaveLength(6);
  });

  it('gives no duplicates after a drain killed between commit and unlink', () => {
    const stateDir = tempDir();
    const names: string[] = [];
    for (let i = 0; i < 7; i++)
      names.push(writeSpoolFile(stateDir, { payload: JSON.stringify({ session_id: `s${i}`, hook_event_name: 'PostToolUse', tool_name: 'Bash' }) }));
    // the killed drain: rows committed, files still in the spool
    const log = openEventLog(stateDir);
    const committed = names.slice(0, 5).map((name) => {
      const outcome = parseSpoolFile(name, readFileSync(join(stateDir, 'spool', name)), NO_EXTRA_RULES);
      if (!outcome.ok) throw new Error(outcome.reason);
      return outcome.row;
    });
    expect(log.insertBatch(committed).inserted).toBe(5);
    log.close();
    expect(spoolEventFiles(stateDir)).toHaveLength(7);

    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 2, alreadyPresent: 5, rejected: 0 });
    expect(spoolEventFiles(stateDir)).toEqual([]);
    const stored = rows(stateDir);
    expect(stored).toHaveLength(7);
    expect(new Set(stored.map((r) => r.id)).size).toBe(7);
  });

  it('drains in name order across several batches', () => {
    const stateDir = tempDir();
    for (let i = 0; i < 23; i++)
      writeSpoolFile(stateDir, { payload: JSON.stringify({ session_id: `s${i}`, hook_event_name: 'Stop' }), receivedUs: 1_763_806_600_000_000 - i * 10 });
    expect(drainSpool(stateDir, { ...quiet, batchSize: 5 })).toMatchObject({ drained: 23 });
    const log = openEventLog(stateDir);
    const order = (log.db.prepare('SELECT session_id FROM events ORDER BY rowid').pluck().all() as string[]).map((s) => Number(s.slice(1)));
    log.close();
    expect(order).toEqual([...order].sort((a, b) => b - a)); // inserted oldest (highest i) first
  });

  it('ends a batch at its byte budget too: large spool files are committed a few at a time, none lost', () => {
    const stateDir = tempDir();
    const big = 'x'.repeat(3_000);
    for (let i = 0; i < 10; i++)
      writeSpoolFile(stateDir, {
        payload: JSON.stringify({ session_id: `s${i}`, hook_event_name: 'Stop', text: big }),
        receivedUs: 1_763_806_600_000_000 + i * 10,
      });
    const sizes: number[] = [];
    const log = openEventLog(stateDir);
    const counting = {
      ...log,
      insertBatch: (batch: EventRow[], mark?: Parameters<typeof log.insertBatch>[1]) => (sizes.push(batch.length), log.insertBatch(batch, mark)),
    };
    // A budget of 7,000 bytes ends a batch at its third file for any file of 2,334-3,499 bytes.
    const fileSizes = spoolEventFiles(stateDir).map((name) => statSync(join(stateDir, 'spool', name)).size);
    expect(fileSizes).toHaveLength(10);
    expect(fileSizes.every((size) => size >= 2_334 && size <= 3_499)).toBe(true);
    expect(drainSpool(stateDir, { ...quiet, log: counting, batchBytes: 7_000 })).toMatchObject({ drained: 10, rejected: 0 });
    log.close();
    expect(sizes).toEqual([3, 3, 3, 1]);
    expect(spoolEventFiles(stateDir)).toEqual([]);
    expect(
      rows(stateDir)
        .map((r) => r.session_id)
        .sort(),
    ).toEqual(Array.from({ length: 10 }, (_, i) => `s${i}`).sort());
  });
});

describe('spool housekeeping and the lock', () => {
  it('removes .tmp-* leftovers older than 60 s and leaves fresh ones', () => {
    const stateDir = tempDir();
    const spool = join(stateDir, 'spool');
    mkdirSync(spool, { recursive: true });
    writeFileSync(join(spool, '.tmp-1763806500000001-1-abcd.event'), 'half');
    writeFileSync(join(spool, '.tmp-1763806500000002-1-abcd.event'), 'being written');
    const old = new Date(Date.now() - 120_000);
    utimesSync(join(spool, '.tmp-1763806500000001-1-abcd.event'), old, old);
    expect(drainSpool(stateDir, quiet)).toMatchObject({ removedTemp: 1, drained: 0, rejected: 0 });
    expect(readdirSync(spool).sort()).toEqual([DRAIN_LOCK_NAME, '.tmp-1763806500000002-1-abcd.event']);
  });

  it('returns at once, draining nothing, while a live drain in another process holds the lock', async () => {
    const stateDir = tempDir();
    writeSpoolFile(stateDir, { payload: '{"session_id":"s","hook_event_name":"Stop"}' });
    const holder = await holdLock(join(stateDir, 'spool'));
    try {
      expect(drainSpool(stateDir, quiet)).toMatchObject({ locked: true, drained: 0 });
      expect(spoolEventFiles(stateDir)).toHaveLength(1);
    } finally {
      await holder.kill();
    }
  });

  it('keeps a lock whose holder dropped every reference to it, after a garbage collection', async () => {
    const stateDir = tempDir();
    writeSpoolFile(stateDir, { payload: '{"session_id":"s","hook_event_name":"Stop"}' });
    const holder = await holdLock(join(stateDir, 'spool'), { forgetful: true });
    try {
      expect(drainSpool(stateDir, quiet)).toMatchObject({ locked: true, drained: 0 });
    } finally {
      await holder.kill();
    }
  });

  it('is never blocked by a SIGKILLed drain, whatever process now has its pid', async () => {
    const stateDir = tempDir();
    const spool = join(stateDir, 'spool');
    for (let i = 0; i < 5; i++) writeSpoolFile(stateDir, { payload: `{"session_id":"s${i}","hook_event_name":"Stop"}` });
    const holder = await holdLock(spool);
    expect(await holder.kill()).toBe('SIGKILL');
    // an earlier version's pid lock naming a live process (this one, and pid 1): not obeyed
    writeFileSync(join(spool, LEGACY_LOCK_NAME), `${process.pid} ${Date.now()} livetoken\n`);
    expect(drainSpool(stateDir, quiet)).toMatchObject({ locked: false, drained: 5 });
    expect(existsSync(join(spool, LEGACY_LOCK_NAME))).toBe(false);
    writeSpoolFile(stateDir, { payload: '{"session_id":"s6","hook_event_name":"Stop"}' });
    writeFileSync(join(spool, LEGACY_LOCK_NAME), `1 ${Date.now()} inittoken\n`);
    expect(drainSpool(stateDir, quiet)).toMatchObject({ locked: false, drained: 1 });
    expect(spoolEventFiles(stateDir)).toEqual([]);
    expect(statSync(join(spool, DRAIN_LOCK_NAME)).mode & 0o777).toBe(0o600);
  });

  it('lets `ingest` drain everything right after a drain was SIGKILLed holding the lock', async () => {
    const stateDir = tempDir();
    const spool = join(stateDir, 'spool');
    for (let i = 0; i < 40; i++) writeSpoolFile(stateDir, { payload: `{"session_id":"s${i}","hook_event_name":"Stop"}` });
    const holder = await holdLock(spool);
    expect(await holder.kill()).toBe('SIGKILL');
    writeFileSync(join(spool, LEGACY_LOCK_NAME), `1 ${Date.now()} inittoken\n`);
    const ingest = spawnSync(process.execPath, [CLI, 'ingest', '--json'], { env: { ...process.env, FORGE_DIR: stateDir }, encoding: 'utf8' });
    expect(ingest.status, ingest.stderr).toBe(0);
    expect(JSON.parse(ingest.stdout)).toMatchObject({ drained: 40, locked: false });
    expect(spoolEventFiles(stateDir)).toEqual([]);
  });

  it("refuses a symbolic link planted at the lock's name, and leaves its target alone", () => {
    const stateDir = tempDir();
    writeSpoolFile(stateDir, { payload: '{"session_id":"s","hook_event_name":"Stop"}' });
    const target = join(tempDir(), 'victim');
    writeFileSync(target, 'keep me');
    symlinkSync(target, join(stateDir, 'spool', DRAIN_LOCK_NAME));
    expect(() => drainSpool(stateDir, quiet)).toThrow(/cannot create the drain lock .*ELOOP/);
    expect(readFileSync(target, 'utf8')).toBe('keep me');
    expect(spoolEventFiles(stateDir)).toHaveLength(1);
  });

  it("replaces a stray file under the lock's name that is not a database", () => {
    const stateDir = tempDir();
    writeSpoolFile(stateDir, { payload: '{"session_id":"s","hook_event_name":"Stop"}' });
    writeFileSync(join(stateDir, 'spool', DRAIN_LOCK_NAME), 'x'.repeat(200));
    expect(drainSpool(stateDir, quiet)).toMatchObject({ locked: false, drained: 1 });
  });

  it('does nothing, and creates no database, when there is no spool', () => {
    const stateDir = tempDir();
    expect(drainSpool(stateDir, quiet)).toMatchObject({ drained: 0, rejected: 0, locked: false });
    expect(existsSync(join(stateDir, 'events.db'))).toBe(false);
  });
});
