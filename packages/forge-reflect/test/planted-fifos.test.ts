// A FIFO under a name the kit reads by itself (a spool file, config.json, events.db) must not hold a
// command: a FIFO's open waits for a writer, for ever. Every case runs the built CLI as a child with a
// time limit, so a command that waits fails the test instead of hanging the suite.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, cleanupTempDirs, DIST, spoolId, tempDir, writeSpoolFile } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const LIMIT_MS = 15_000;

function cli(stateDir: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: LIMIT_MS, env: { ...process.env, FORGE_DIR: stateDir, NO_COLOR: '1' } });
  expect(r.signal, `forge-reflect ${args.join(' ')} was still running after ${LIMIT_MS} ms`).toBeNull();
  return r;
}

function mkfifo(path: string): void {
  expect(spawnSync('mkfifo', [path]).status).toBe(0);
}

function storedSessions(stateDir: string): string[] {
  const r = cli(stateDir, 'events', '--json');
  expect(r.status).toBe(0);
  return (JSON.parse(r.stdout) as Array<{ session_id: string }>).map((e) => e.session_id);
}

describe('a FIFO planted under a name the kit reads', () => {
  it('as a spool file: rejected with its reason, and the event beside it drained', () => {
    const state = tempDir();
    writeSpoolFile(state, { payload: JSON.stringify({ session_id: 'beside', hook_event_name: 'Stop' }), receivedUs: 1_763_806_600_000_000 });
    const name = `${spoolId(1_763_806_600_000_100)}.event`;
    mkfifo(join(state, 'spool', name));
    const r = cli(state, 'ingest');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('drained 1, rejected 1');
    expect(existsSync(join(state, 'spool', name))).toBe(false);
    const rejected = join(state, 'spool', 'rejected');
    expect(readdirSync(rejected).sort()).toEqual([name, name.replace(/\.event$/, '.reason')].sort());
    expect(readFileSync(join(rejected, name.replace(/\.event$/, '.reason')), 'utf8')).toContain('spool file is not a regular file');
    expect(storedSessions(state)).toEqual(['beside']);
  });

  it('as config.json: the drain goes on with the built-in redaction and says why', () => {
    const state = tempDir();
    writeSpoolFile(state, { payload: JSON.stringify({ session_id: 'kept', hook_event_name: 'Stop' }), receivedUs: 1_763_806_600_000_000 });
    mkfifo(join(state, 'config.json'));
    const r = cli(state, 'ingest');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('drained 1');
    expect(r.stderr).toContain(`cannot read ${join(state, 'config.json')} (not a regular file); extra redaction patterns ignored`);
    expect(storedSessions(state)).toEqual(['kept']);
  });

  it('as events.db: a command says what to do, doctor flags it, and doctor --repair moves it aside', () => {
    const state = tempDir();
    mkfifo(join(state, 'events.db'));
    const events = cli(state, 'events');
    expect(events.status).toBe(1);
    expect(events.stderr).toContain(`the event log ${join(state, 'events.db')} is not a regular file; move it aside (forge-reflect doctor --repair does)`);
    const doctor = cli(state, 'doctor');
    expect(doctor.status).toBe(1);
    expect(doctor.stdout).toMatch(/event log .*events\.db is not a regular file/);
    const repair = cli(state, 'doctor', '--repair');
    expect(repair.stdout).toMatch(/the broken file was moved to .*events\.db\.corrupt-/);
    expect(readdirSync(state).some((f) => f.startsWith('events.db.corrupt-'))).toBe(true);
    expect(cli(state, 'events').status).toBe(0);
  });

  it('readRegularFile refuses a FIFO, a folder and a device at once, reads a file whole, past the size fstat gave, or its last bytes', () => {
    const dir = tempDir();
    mkfifo(join(dir, 'fifo'));
    const script = `
      const { readRegularText } = await import(${JSON.stringify(join(DIST, 'regular-file.js'))});
      const { writeFileSync } = await import('node:fs');
      writeFileSync(process.argv[1] + '/file', 'x'.repeat(70000));
      const out = {};
      for (const name of ['fifo', '.', '/dev/null', 'file', 'missing']) {
        try { out[name] = readRegularText(name.startsWith('/') ? name : process.argv[1] + '/' + name).length; } catch (e) { out[name] = e.code; }
      }
      // /proc files say size 0 and hold more: read to their end, not to fstat's size.
      out.proc = readRegularText('/proc/self/status').includes('\\nPid:');
      // Or only its last bytes (the helper reads a transcript's tail so).
      writeFileSync(process.argv[1] + '/digits', '0123456789');
      out.tail = readRegularText(process.argv[1] + '/digits', 4);
      console.log(JSON.stringify(out));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script, dir], { encoding: 'utf8', timeout: LIMIT_MS });
    expect(r.signal).toBeNull();
    expect(JSON.parse(r.stdout)).toEqual({ fifo: 'ENOTREG', '.': 'ENOTREG', '/dev/null': 'ENOTREG', file: 70000, missing: 'ENOENT', proc: true, tail: '6789' });
  });
});
