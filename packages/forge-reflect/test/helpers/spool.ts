/**
 * Test helpers: throwaway state folders and spool files written exactly as
 * docs/spool-format.md says the hooks write them (envelope line, `\n`, payload bytes).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scanAt } from '../../src/log/spool-log.js';

export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const KIT_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
export const CLI = join(PACKAGE_ROOT, 'bin', 'forge-reflect.js');
export const DIST = join(PACKAGE_ROOT, 'dist');
/** The reference payloads: `../shared/reference/…` (the source), else the repo's committed copy. */
export const REFERENCE_DIR = [join(KIT_ROOT, '..', 'shared', 'reference', 'claude-code-payloads'), join(KIT_ROOT, 'tests', 'fixtures', 'payloads')].find(
  (dir) => existsSync(dir),
) as string;
export const OTHER_RUNTIMES_DIR = join(REFERENCE_DIR, 'other-runtimes');

/** Every reference payload file: Claude Code's and other runtimes'. */
export function referencePayloadFiles(): string[] {
  const list = (dir: string) =>
    readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => join(dir, f));
  return [...list(REFERENCE_DIR), ...list(OTHER_RUNTIMES_DIR)];
}

export function referenceName(file: string): string {
  return file.startsWith(OTHER_RUNTIMES_DIR) ? `other-runtimes/${basename(file)}` : basename(file);
}

const made: string[] = [];

/** A fresh folder (removed by cleanupTempDirs). */
export function tempDir(prefix = 'forge-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/**
 * Removes every folder tempDir made. The Stop hook's helper may still be writing its code cache
 * there after the hook returned (the hook does not wait for that; on a loaded machine it can take
 * seconds), so a folder that fills again while it is removed is tried again, for up to 30 s.
 */
export function cleanupTempDirs(): void {
  for (const dir of made.splice(0)) removeSettled(dir, Date.now() + 30_000);
}

function removeSettled(dir: string, deadline: number): void {
  for (;;) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ENOTEMPTY' && code !== 'EBUSY') || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
}

let sequence = 0;
const BASE_US = 1_763_806_500_000_000;

export function spoolId(receivedUs: number, pid = 4242, rand?: string): string {
  const r = rand ?? (sequence++ & 0xffffffff).toString(16).padStart(8, '0');
  return `${String(receivedUs).padStart(16, '0')}-${pid}-${r}`;
}

export interface SpoolFileSpec {
  payload: string | Buffer;
  event?: string;
  source?: string;
  receivedUs?: number;
  pid?: number;
  truncated?: boolean;
  cwd?: string;
  /** Replaces the whole envelope line (for broken envelopes). */
  envelopeLine?: string;
  /** Overrides the file name (`<id>.event` by default). */
  name?: string;
}

let clock = BASE_US;

/** Writes one spool file the way the hook does (temp file, then rename). Returns its name. */
export function writeSpoolFile(stateDir: string, spec: SpoolFileSpec): string {
  const dir = join(stateDir, 'spool');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const receivedUs = spec.receivedUs ?? (clock += 13);
  const pid = spec.pid ?? 4242;
  const name = spec.name ?? `${spoolId(receivedUs, pid)}.event`;
  const payload = typeof spec.payload === 'string' ? Buffer.from(spec.payload) : spec.payload;
  const envelope =
    spec.envelopeLine ??
    JSON.stringify({
      v: 1,
      source: spec.source ?? 'event-hook',
      event: spec.event ?? '',
      received_us: receivedUs,
      pid,
      cwd: spec.cwd ?? '/home/dev/acme-app',
      bytes: payload.length,
      truncated: spec.truncated ?? false,
    });
  const tmp = join(dir, `.tmp-${name}`);
  writeFileSync(tmp, Buffer.concat([Buffer.from(`${envelope}\n`), payload]), { mode: 0o600 });
  renameSync(tmp, join(dir, name));
  return name;
}

/** A record of the spool log: its id and receive time, its bytes, and where its payload starts. */
export interface SpoolRecord {
  id: string;
  receivedUs: number;
  bytes: Buffer;
  payloadAt: number;
  payload: Buffer;
}

export interface SpoolRecordSpec {
  event?: string;
  runtime?: string;
  cwd?: string;
  receivedUs?: number;
  /** The random part of the id (default: a counter). */
  rand?: string;
  /** Changes or drops envelope fields (to name a wrong length, say). */
  envelope?: (env: Record<string, unknown>) => Record<string, unknown>;
}

/**
 * One record exactly as docs/spool-format.md says the event hook appends it: `\x1e`, the envelope
 * (v, source, event, runtime, received_us, pid, cwd, cap, bytes, id), `\x1f`, the payload, and a
 * `\n` unless the payload's own last byte is one.
 */
export function spoolRecord(payload: string | Buffer, spec: SpoolRecordSpec = {}): SpoolRecord {
  const receivedUs = spec.receivedUs ?? (clock += 17);
  const id = spoolId(receivedUs, 4242, spec.rand);
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const base = {
    v: 1,
    source: 'event-hook',
    event: spec.event ?? '',
    runtime: spec.runtime ?? 'claude-code',
    received_us: receivedUs,
    pid: 4242,
    cwd: spec.cwd ?? '/home/dev/acme-app',
    cap: 1_048_576,
    bytes: body.length,
    id,
  };
  const head = Buffer.from(`\x1e${JSON.stringify(spec.envelope ? spec.envelope(base) : base)}\x1f`);
  const tail = body.length > 0 && body[body.length - 1] === 0x0a ? Buffer.alloc(0) : Buffer.from('\n');
  return { id, receivedUs, bytes: Buffer.concat([head, body, tail]), payloadAt: head.length, payload: body };
}

export function spoolEventFiles(stateDir: string): string[] {
  try {
    return readdirSync(join(stateDir, 'spool')).filter((n) => n.endsWith('.event') && !n.startsWith('.'));
  } catch {
    return [];
  }
}

/**
 * The envelope of every event spooled in a state folder: line 1 of each spool file, and each
 * record of spool/events.log (read with the drain's own scanner).
 */
export function spooledEnvelopes(stateDir: string): Record<string, unknown>[] {
  const spool = join(stateDir, 'spool');
  const envelopes = spoolEventFiles(stateDir).map(
    (name) => JSON.parse(readFileSync(join(spool, name), 'utf8').split('\n')[0] as string) as Record<string, unknown>,
  );
  const log = join(spool, 'events.log');
  if (existsSync(log)) {
    const bytes = readFileSync(log);
    for (let pos = 0; pos < bytes.length; ) {
      const scan = scanAt(bytes, pos, bytes.length);
      if (scan.kind !== 'record') throw new Error(`spool/events.log at byte ${pos}: ${scan.kind === 'garbage' ? scan.reason : 'a record cut short'}`);
      envelopes.push(scan.env as unknown as Record<string, unknown>);
      pos = scan.end;
    }
  }
  return envelopes;
}

export function readJson(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

/**
 * Whether the hooks' bash has a clock (bash 5: EPOCHREALTIME). In the stock-Mac pass of
 * scripts/test-shell.mjs every hook runs in the stand-in's bash 3.2, which has none: the event hook
 * then appends no records, and every event is a file of its own named with 16 zeros and
 * `"clock":"file"`, which the drain dates by its time of writing (docs/decisions.md, "The clock").
 * Throws when the version cannot be told, or the Mac pass's bash is not 3.
 */
export function hookBashHasClock(): boolean {
  const macos = process.env.FORGE_TEST_PLATFORM === 'macos-like';
  const bash = macos ? join(process.env.FORGE_TEST_MACOS_BIN ?? '', 'bash') : 'bash';
  const r = spawnSync(bash, ['-c', 'echo "${BASH_VERSINFO[0]}"'], { encoding: 'utf8' });
  const major = Number(r.stdout?.trim());
  if (r.status !== 0 || !Number.isInteger(major)) throw new Error(`cannot tell the version of the hooks' bash (${bash}): ${r.stderr ?? r.error}`);
  if (macos && major !== 3) throw new Error(`the Mac pass's bash is ${major}, not 3.2 (${bash})`);
  return major >= 5;
}
