/**
 * Hardening: the redaction corpus through the real event hook and the drain (no secret may reach
 * the log file, under any key, `__proto__` included); depth bombs, prototype keys, huge and
 * control-character strings in the self-report and the payload; a symlinked spool is refused.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { drainSpool } from '../src/log/drain.js';
import { openEventLog } from '../src/log/event-log.js';
import { buildSidecar, CUT_MARK, SELF_REPORT_STRING_MAX } from '../src/sidecar/build.js';
import { NO_EXTRA_RULES } from '../src/log/redact.js';
import { parseSpoolFile } from '../src/log/spool-event.js';
import { CONTEXTS, IN_CONTEXT, PRIVATE_KEYS, SELF_EVIDENT } from './helpers/secrets.js';
import { cleanupTempDirs, hookBashHasClock, KIT_ROOT, spoolEventFiles, tempDir, writeSpoolFile } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const EVENT_HOOK = join(KIT_ROOT, 'hooks', 'reflect-event-hook.sh');
const bomb = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

function facts(text: string | null) {
  return {
    files: ['src/a.ts'],
    selfReport: text === null ? ({ kind: 'absent' } as const) : ({ kind: 'text', text } as const),
    sessionId: 's1',
    taskRef: 't',
    agent: 'a',
    repo: 'r',
    timestamp: '2025-11-22T10:00:00.000000Z',
    mode: 'solo' as const,
    attempt: 1,
    threshold: 0.5,
  };
}

describe('the redaction corpus through the real event hook and the drain', () => {
  it('leaves no secret anywhere in the log file, whatever key or context it sits under', () => {
    const repo = tempDir();
    const state = join(repo, '.forge');
    const secrets: string[] = [];
    const payloads: string[] = [];
    for (const s of [...SELF_EVIDENT, ...PRIVATE_KEYS]) {
      for (const [, wrap] of CONTEXTS) {
        secrets.push(s.value);
        payloads.push(
          JSON.stringify({
            session_id: 'sec',
            hook_event_name: 'PostToolUse',
            tool_name: 'Bash',
            tool_input: { command: wrap(s.value) },
            tool_response: { stdout: wrap(s.value) },
          }),
        );
      }
      // keys an attacker or a tool might use: the secret as a key, and under prototype keys
      payloads.push(
        `{"session_id":"sec","__proto__":${JSON.stringify(s.value)},"constructor":{"prototype":${JSON.stringify(s.value)}},${JSON.stringify(s.value)}:1}`,
      );
      secrets.push(s.value);
    }
    for (const [, secret, text] of IN_CONTEXT) {
      secrets.push(secret);
      payloads.push(JSON.stringify({ session_id: 'sec', tool_name: 'Bash', tool_input: { command: text } }));
    }
    // one truncated (not parseable) payload, kept as redacted text
    const big = SELF_EVIDENT[0]?.value ?? '';
    payloads.push(`{"session_id":"sec","tool_response":"${big} ${'x'.repeat(1_100_000)}`);
    const dir = join(repo, 'payloads');
    mkdirSync(dir);
    payloads.forEach((p, i) => writeFileSync(join(dir, `${i}.json`), p));
    const script = `for f in ${shellQuote(dir)}/*.json; do bash ${shellQuote(EVENT_HOOK)} PostToolUse <"$f"; done`;
    const r = spawnSync('bash', ['-c', script], {
      cwd: repo,
      env: { ...process.env, REFLECTION_MODE: 'solo', FORGE_DIR: state },
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
    // small payloads are appended to spool/events.log as records (docs/spool-format.md), the rest get
    // files; a hook without a clock (bash 3.2, the stock-Mac pass) gives every one a file of its own
    const liveLog = join(state, 'spool', 'events.log');
    const records = existsSync(liveLog) ? readFileSync(liveLog).filter((b) => b === 0x1e).length : 0;
    if (hookBashHasClock()) {
      expect(records).toBeGreaterThan(0);
    } else {
      expect(existsSync(liveLog)).toBe(false);
      for (const name of spoolEventFiles(state)) {
        expect(name).toMatch(/^0{16}-\d+-[0-9a-f]{8}\.event$/);
        expect(readFileSync(join(state, 'spool', name), 'utf8').split('\n')[0]).toMatch(/,"received_us":0,.*,"clock":"file"[,}]/);
      }
    }
    expect(spoolEventFiles(state).length + records).toBe(payloads.length);
    const counts = drainSpool(state, { warn: () => {} });
    expect(counts.drained + counts.rejected).toBe(payloads.length);
    expect(counts.rejected).toBe(0);
    const log = openEventLog(state);
    log.close(); // checkpoints the WAL into the main file
    const files = readdirSync(state)
      .filter((n) => n.startsWith('events.db'))
      .map((n) => readFileSync(join(state, n)).toString('latin1'));
    const found = [...new Set(secrets)].filter((s) => files.some((f) => f.includes(s)));
    expect(found).toEqual([]);
  });
});

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

describe('self-report limits (sidecar builder)', () => {
  it('caps each string at 4 KiB with a mark and strips control characters', () => {
    const long = 'é'.repeat(10_000);
    const text = JSON.stringify({
      confidence: 0.4,
      most_likely_wrong: { surface: 'data', description: `a\u001b[2J\u0007b\u202e\nc${long}` },
      known_not_in_diff: `x\u0000y${long}`,
    });
    const built = buildSidecar(facts(text));
    expect(built.selfReport).toBe('ok');
    const desc = built.sidecar.most_likely_wrong?.description ?? '';
    expect(desc.length).toBe(SELF_REPORT_STRING_MAX);
    expect(desc.endsWith(CUT_MARK)).toBe(true);
    expect(desc.startsWith('a[2Jb\nc')).toBe(true);
    expect(built.sidecar.known_not_in_diff?.startsWith('xyé')).toBe(true);
    expect(built.sidecar.known_not_in_diff?.length).toBe(SELF_REPORT_STRING_MAX);
    const short = buildSidecar(
      facts(JSON.stringify({ confidence: 0.4, most_likely_wrong: { surface: 'none', description: 'd' }, known_not_in_diff: 'short' })),
    );
    expect(short.sidecar.known_not_in_diff).toBe('short');
  });

  it('ignores __proto__, constructor and prototype keys instead of refusing or obeying them', () => {
    const text =
      '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"confidence":0.3,"most_likely_wrong":{"__proto__":{"x":1},"surface":"auth","description":"d"},"known_not_in_diff":null}';
    const built = buildSidecar(facts(text));
    expect(built.selfReport).toBe('ok');
    expect(built.sidecar.confidence).toBe(0.3);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(built.sidecar.most_likely_wrong ?? {})).toEqual(['surface', 'description']);
  });

  it('survives a depth bomb (10,000 nested arrays) as the whole report or inside a field', () => {
    for (const text of [bomb(10_000), `{"confidence":0.5,"most_likely_wrong":${bomb(10_000)},"known_not_in_diff":null}`, '['.repeat(100_000)]) {
      const built = buildSidecar(facts(text));
      expect(built.selfReport).toBe('invalid');
      expect(built.sidecar.provenance.degraded).toBe(true);
    }
  });

  it('keeps control characters out of session ids, task refs and reasons', () => {
    const f = { ...facts('not json \u001b[31m'), sessionId: 's\u001b]0;x\u0007', taskRef: 't\r\u0000' };
    const built = buildSidecar(f);
    expect(built.sidecar.session_id).toBe('s]0;x');
    expect(built.sidecar.task_ref).toBe('t');
    expect(built.selfReportReason ?? '').not.toMatch(/[\u0000-\u001f]/);
  });
});

describe('payload limits (drain)', () => {
  it('stores a depth-bombed payload and a prototype-key payload without a crash or pollution', () => {
    const state = tempDir();
    const names = [
      writeSpoolFile(state, { payload: bomb(10_000), event: 'PostToolUse' }),
      writeSpoolFile(state, { payload: `{"a":${bomb(50_000)}}`, event: 'PostToolUse' }),
      writeSpoolFile(state, { payload: '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}},"session_id":"p"}', event: 'PostToolUse' }),
    ];
    const counts = drainSpool(state, { warn: () => {} });
    expect(counts.drained).toBe(names.length);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const log = openEventLog(state);
    try {
      const rows = log.db.prepare('SELECT payload FROM events ORDER BY id').all() as { payload: string }[];
      expect(rows[0]?.payload).toBe(bomb(10_000));
      expect(JSON.parse(rows[2]?.payload ?? '')).toHaveProperty('session_id', 'p');
    } finally {
      log.close();
    }
  });

  it('parses a spool file whose payload is 10,000 nested objects', () => {
    const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const out = parseSpoolFile('1763806500123456-1-abcd.event', Buffer.from(`{"v":1,"event":"PostToolUse"}\n${deep}`), NO_EXTRA_RULES);
    expect(out.ok).toBe(true);
  });
});

describe('no write outside the state dir (drain)', () => {
  it('refuses a spool folder that is a symlink: nothing outside is read, moved or deleted', () => {
    const state = tempDir();
    const elsewhere = tempDir();
    writeSpoolFile(elsewhere, { payload: '{"session_id":"x"}' });
    writeFileSync(join(elsewhere, 'spool', '.tmp-old'), 'keep');
    const before = readdirSync(join(elsewhere, 'spool')).sort();
    mkdirSync(state, { recursive: true });
    symlinkSync(join(elsewhere, 'spool'), join(state, 'spool'));
    expect(() => drainSpool(state, { warn: () => {}, now: () => Date.now() + 3_600_000 })).toThrow(/symbolic link/);
    expect(readdirSync(join(elsewhere, 'spool')).sort()).toEqual(before);
    expect(existsSync(join(state, 'events.db'))).toBe(false);
  });
});
