/**
 * Eight hook-like writer processes spool 200 events each while three drain processes drain
 * concurrently: every event must land exactly once, and no drain may fail or print anything
 * (SQLITE_BUSY in particular). The drain processes run the built package (dist/).
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { DRAIN_LOCK_NAME } from '../src/log/drain-lock.js';
import { drainSpool } from '../src/log/drain.js';
import { openEventLog } from '../src/log/event-log.js';
import { DRAINED_DIR_NAME, readDrainedLists, removeListedHere } from '../src/log/drained-lists.js';
import { cleanupTempDirs, DIST, spoolEventFiles, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const WRITERS = 8;
const PER_WRITER = 200;
const DRAINERS = 3;

const WRITER = `
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
const [spool, count, writer] = [process.argv[1], Number(process.argv[2]), process.argv[3]];
mkdirSync(spool, { recursive: true, mode: 0o700 });
const pause = new Int32Array(new SharedArrayBuffer(4));
for (let i = 0; i < count; i++) {
  const us = Date.now() * 1000 + i;
  const payload = JSON.stringify({ session_id: 'writer-' + writer, hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_use_id: 'toolu_' + writer + '_' + i, tool_input: { command: 'echo ' + i }, tool_response: { stdout: String(i), stderr: '' } });
  const envelope = JSON.stringify({ v: 1, source: 'event-hook', event: 'PostToolUse', received_us: us, pid: process.pid, cwd: '/repo', bytes: Buffer.byteLength(payload), truncated: false });
  const name = String(us).padStart(16, '0') + '-' + process.pid + '-' + randomBytes(3).toString('hex') + '.event';
  writeFileSync(join(spool, '.tmp-' + name), envelope + '\\n' + payload, { mode: 0o600 });
  renameSync(join(spool, '.tmp-' + name), join(spool, name));
  if (i % 10 === 0) Atomics.wait(pause, 0, 0, 2);
}
`;

const DRAINER = `
import { existsSync } from 'node:fs';
const [drainUrl, stateDir, doneFlag, takeLock, listFrom] = [process.argv[1], process.argv[2], process.argv[3], process.argv[4] === 'lock', Number(process.argv[5])];
const { drainSpool } = await import(drainUrl);
// without the lock the drains really overlap: the log must stay right on its own
// with listFrom 1 every drain lists what it committed for a remover (none runs here: checked below)
const options = { batchSize: 50, lock: { take: takeLock }, listFrom, removeListed: () => {} };
const pause = new Int32Array(new SharedArrayBuffer(4));
const total = { drained: 0, alreadyPresent: 0, rejected: 0, locked: 0, busy: 0, runs: 0 };
const add = (c) => { total.drained += c.drained; total.alreadyPresent += c.alreadyPresent; total.rejected += c.rejected; total.locked += c.locked ? 1 : 0; total.busy += c.busy ? 1 : 0; total.runs++; };
while (!existsSync(doneFlag)) {
  const c = drainSpool(stateDir, options);
  add(c);
  if (c.locked || c.drained === 0) Atomics.wait(pause, 0, 0, 3);
}
add(drainSpool(stateDir, options));
process.stdout.write(JSON.stringify(total));
`;

function loggedIds(stateDir: string): string[] {
  const log = openEventLog(stateDir);
  try {
    return log.db.prepare('SELECT id FROM events').pluck().all() as string[];
  } finally {
    log.close();
  }
}

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[]): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.each([
  ['drains that respect the lock and unlink', 'lock', 1e9],
  ['drains that skip the lock, overlap and unlink', 'no-lock', 1e9],
  ['drains that respect the lock and list files for a remover', 'lock', 1],
  ['drains that skip the lock, overlap and list files for a remover', 'no-lock', 1],
])('concurrent writers and %s', (_mode, takeLock, listFrom) => {
  it(`stores exactly ${WRITERS * PER_WRITER} rows from ${WRITERS} writers x ${PER_WRITER} files with ${DRAINERS} drains running`, async () => {
    const drainJs = join(DIST, 'log', 'drain.js');
    if (!existsSync(drainJs)) throw new Error(`${drainJs} is missing: run \`npx tsc -b\` before this suite`);
    const stateDir = tempDir();
    const spool = join(stateDir, 'spool');
    const doneFlag = join(stateDir, 'writers-done');

    const drainers = Array.from({ length: DRAINERS }, () =>
      run(['--input-type=module', '-e', DRAINER, pathToFileURL(drainJs).href, stateDir, doneFlag, takeLock, String(listFrom)]),
    );
    const writers = Array.from({ length: WRITERS }, (_, w) => run(['--input-type=module', '-e', WRITER, spool, String(PER_WRITER), String(w)]));
    const written = await Promise.all(writers);
    for (const w of written) expect(w, w.stderr).toMatchObject({ code: 0, stderr: '' });
    writeFileSync(doneFlag, '');
    const drained = await Promise.all(drainers);

    let byDrainers = 0;
    for (const d of drained) {
      expect(d, d.stderr).toMatchObject({ code: 0, stderr: '' });
      const total = JSON.parse(d.stdout) as { drained: number; rejected: number; busy: number };
      if (process.env.FORGE_TEST_VERBOSE) console.log(d.stdout);
      expect(total.rejected).toBe(0);
      byDrainers += total.drained;
    }
    const last = drainSpool(stateDir, { warn: () => {}, listFrom, removeListed: () => {} });
    expect(last.rejected).toBe(0);
    expect(byDrainers + last.drained).toBe(WRITERS * PER_WRITER);

    const log = openEventLog(stateDir);
    try {
      expect(log.count()).toBe(WRITERS * PER_WRITER);
      expect(Number(log.db.prepare('SELECT count(DISTINCT tool_use_id) FROM events').pluck().get())).toBe(WRITERS * PER_WRITER);
      const perWriter = log.db.prepare('SELECT session_id, count(*) AS n FROM events GROUP BY session_id ORDER BY session_id').all();
      expect(perWriter).toEqual(Array.from({ length: WRITERS }, (_, w) => ({ session_id: `writer-${w}`, n: PER_WRITER })));
    } finally {
      log.close();
    }
    // Only committed files were listed: every listed name has its row. With listFrom 1 every drained
    // file was listed (some twice, by drains that overlapped): all of them are, and none waits.
    const logged = new Set(loggedIds(stateDir));
    const listed = [...readDrainedLists(spool, [], Date.now()).names].map((n) => n.slice(0, -'.event'.length));
    expect(listed.filter((id) => !logged.has(id))).toEqual([]);
    expect(listed.length).toBe(listFrom === 1 ? WRITERS * PER_WRITER : 0);
    expect(spoolEventFiles(stateDir).length).toBe(listed.length);
    // The remover then leaves nothing.
    const lists = existsSync(join(spool, DRAINED_DIR_NAME)) ? readdirSync(join(spool, DRAINED_DIR_NAME)).map((n) => join(spool, DRAINED_DIR_NAME, n)) : [];
    removeListedHere(spool, lists);
    expect(spoolEventFiles(stateDir)).toEqual([]);
    expect(readdirSync(spool).filter((n) => n !== 'rejected' && n !== DRAIN_LOCK_NAME && n !== DRAINED_DIR_NAME)).toEqual([]);
  });
});
