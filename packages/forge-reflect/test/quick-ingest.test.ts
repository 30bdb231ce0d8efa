// The CLI's quick ingest (issue 12): `forge-reflect ingest [--json]` skips yargs
// (src/quick-ingest.ts) and does and says what the full CLI's ingest does; any other form goes to
// the full parser; `--version` names this package wherever it runs.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chunksWith, staticClosure } from './helpers/bundle.js';
import { CLI, cleanupTempDirs, DIST, REFERENCE_DIR, referencePayloadFiles, spoolRecord, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

/** One-line reference payloads (compact JSON): what the hook appends as records. */
function oneLinePayloads(): Buffer[] {
  return referencePayloadFiles().map((f) => Buffer.from(JSON.stringify(JSON.parse(readFileSync(f, 'utf8')))));
}

/** Writes `n` records to spool/events.log as the hook appends them; returns their ids. */
function writeLog(stateDir: string, n: number): string[] {
  const shapes = oneLinePayloads();
  const spool = join(stateDir, 'spool');
  mkdirSync(spool, { recursive: true, mode: 0o700 });
  const records = Array.from({ length: n }, (_, i) =>
    spoolRecord(shapes[i % shapes.length] as Buffer, {
      receivedUs: 1_763_806_500_000_000 + i * 11,
      rand: i.toString(16).padStart(8, '0'),
      cwd: '/repo',
      runtime: '',
    }),
  );
  writeFileSync(join(spool, 'events.log'), Buffer.concat(records.map((r) => r.bytes)), { mode: 0o600 });
  return records.map((r) => r.id);
}

describe('the CLI', () => {
  it('a plain ingest loads no yargs; the full CLI does', () => {
    const yargsChunks = chunksWith('yargs-parser');
    expect(yargsChunks.length).toBeGreaterThan(0);
    const quick = staticClosure('quick-ingest.js');
    for (const chunk of yargsChunks) expect(quick.has(chunk)).toBe(false);
    expect(yargsChunks.some((chunk) => staticClosure('cli.js').has(chunk))).toBe(true);
  });

  it('draining records starts neither node:crypto nor node:child_process (each is loaded where it is used)', () => {
    const state = tempDir();
    const spool = join(state, 'spool');
    mkdirSync(spool, { recursive: true, mode: 0o700 });
    // No failed tool call (its signature is a hash) and no spool file (a drained file is removed by a spawned rm).
    const payloads = ['session-start.json', 'post-tool-use-bash.json', 'stop.json'].map((f) =>
      Buffer.from(JSON.stringify(JSON.parse(readFileSync(join(REFERENCE_DIR, f), 'utf8')))),
    );
    const records = payloads.map((p, i) => spoolRecord(p, { receivedUs: 1_763_806_500_000_000 + i, rand: `0000000${i}`, cwd: '/repo', runtime: '' }));
    writeFileSync(join(spool, 'events.log'), Buffer.concat(records.map((r) => r.bytes)), { mode: 0o600 });
    const list = join(state, 'modules.txt');
    const probe = join(state, 'probe.cjs');
    writeFileSync(probe, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n')));`);
    const run = spawnSync(process.execPath, ['--require', probe, CLI, 'ingest'], { env: { ...process.env, FORGE_DIR: state }, encoding: 'utf8' });
    expect(run.stdout).toBe('drained 3, rejected 0, already present 0\n');
    const loaded = readFileSync(list, 'utf8').split('\n');
    expect(loaded).toContain('NativeModule fs');
    expect(loaded).not.toContain('NativeModule crypto');
    expect(loaded).not.toContain('NativeModule child_process');
  });

  it('ingest and ingest --json drain the log; other forms go to the full parser', () => {
    const state = tempDir();
    writeLog(state, 3_000);
    const env = { ...process.env, FORGE_DIR: state, NO_COLOR: '1' };
    const json = spawnSync(process.execPath, [CLI, 'ingest', '--json'], { env, encoding: 'utf8' });
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      state_dir: state,
      drained: 3_000,
      rejected: 0,
      already_present: 0,
      removed_temp: 0,
      in_flight: 0,
      locked: false,
      busy: false,
    });
    const plain = spawnSync(process.execPath, [CLI, 'ingest'], { env, encoding: 'utf8' });
    expect(plain.status).toBe(0);
    expect(plain.stdout).toBe('drained 0, rejected 0, already present 0\n');
    const bogus = spawnSync(process.execPath, [CLI, 'ingest', '--bogus'], { env, encoding: 'utf8' });
    expect(bogus.status).toBe(2);
    expect(bogus.stderr).toMatch(/bogus/);
    const help = spawnSync(process.execPath, [CLI, 'ingest', '--help'], { env, encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/forge-reflect ingest/);
  });

  it('--version names this package, not the package.json above the working directory', () => {
    const elsewhere = tempDir();
    writeFileSync(join(elsewhere, 'package.json'), JSON.stringify({ name: 'someone-elses-app', version: '9.9.9' }));
    const ours = (JSON.parse(readFileSync(join(DIST, '..', 'package.json'), 'utf8')) as { version: string }).version;
    const run = spawnSync(process.execPath, [CLI, '--version'], { cwd: elsewhere, encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe(ours);
  });
});
