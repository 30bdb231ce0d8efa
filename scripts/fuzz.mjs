#!/usr/bin/env node
// scripts/fuzz.mjs [--quick] [--cases N] [--seed S] [--keep]: feeds both hooks and the drain random
// and mutated payloads and checks the kit's promise on every case:
//   - every hook run exits 0 with empty stdout;
//   - no file appears or changes outside the state dir (the repo's work tree and a sibling folder);
//   - every spooled event ends either in the log (once) or in spool/rejected/ with a .reason;
//   - a hook without a clock (bash before 5: a Mac's 3.2, the stock-Mac pass of scripts/test-shell.mjs)
//     names every spool file with 16 zeros and "clock":"file" and writes no spool log, and the log
//     holds its event under the file's time of writing (docs/spool-format.md); a hook with one never
//     names a file so;
//   - every sidecar the Stop hook wrote is valid reflection.v1;
//   - the drain (the built CLI, `forge-reflect ingest`) exits 0 and prints no stack trace.
// Cases: N event-hook payloads (drained in batches) and N/10 Stop runs with a fuzzed self-report.
// Prints one JSON line of figures; exit 1 (with the failing case and seed) on the first broken invariant.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const KIT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(KIT, 'packages/forge-reflect/bin/forge-reflect.js');
const EVENT_HOOK = join(KIT, 'hooks/reflect-event-hook.sh');
const STOP_HOOK = join(KIT, 'hooks/reflect-stop-hook.sh');
const PAYLOADS = join(KIT, 'tests/fixtures/payloads');

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const value = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : fallback;
};
const quick = flag('--quick');
const CASES = value('--cases', quick ? 500 : 5000);
const SEED = value('--seed', 20251122) >>> 0;
const STOP_CASES = Math.max(5, Math.round(CASES / 10));
const BATCH = 200;

// xorshift32: the same seed gives the same cases
let rng = SEED || 1;
const rnd = () => {
  rng ^= rng << 13;
  rng ^= rng >>> 17;
  rng ^= rng << 5;
  return (rng >>> 0) / 0x1_0000_0000;
};
const int = (n) => Math.floor(rnd() * n);
const pick = (list) => list[int(list.length)];

function listFixtures(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listFixtures(path));
    else if (name.endsWith('.json')) out.push(readFileSync(path));
  }
  return out;
}
const FIXTURES = listFixtures(PAYLOADS);
const EVENTS = [
  'PostToolUse',
  'PostToolUseFailure',
  'SessionStart',
  'SubagentStop',
  'UserPromptSubmit',
  'SessionEnd',
  'PreCompact',
  'Notification',
  '',
  '../x',
  'a b',
  'Stop;rm -rf /',
  'é',
];
const NASTY = [
  '',
  '\u0000',
  '\u001b[31m',
  '../../etc/passwd',
  '"',
  '\\',
  '\ud800',
  '__proto__',
  'constructor',
  '\u202e',
  '$(touch pwned)',
  '`id`',
  '%s%n',
  '\r\n',
  'A'.repeat(5000),
];

function randomString() {
  switch (int(5)) {
    case 0:
      return pick(NASTY);
    case 1:
      return 'x'.repeat(int(70_000));
    case 2:
      return String.fromCharCode(...Array.from({ length: int(64) }, () => int(0x3000)));
    default:
      return int(1e9).toString(36) + pick(NASTY);
  }
}

function randomValue(depth = 0) {
  switch (depth > 3 ? int(4) : int(7)) {
    case 0:
      return null;
    case 1:
      return rnd() < 0.5;
    case 2:
      return pick([0, -1, 1e308, -0, 3.5, 2 ** 53 + 1]);
    case 3:
      return randomString();
    case 4:
      return Array.from({ length: int(4) }, () => randomValue(depth + 1));
    default: {
      const out = {};
      for (let i = int(5); i > 0; i--)
        out[
          pick(['session_id', 'tool_name', 'hook_event_name', 'cwd', 'tool_input', 'tool_response', '__proto__', 'constructor', randomString().slice(0, 40)])
        ] = randomValue(depth + 1);
      return out;
    }
  }
}

const depthBomb = (n) => Buffer.from(`${'['.repeat(n)}${']'.repeat(n)}`);

/** One payload: a fixture mutated, random bytes, truncated JSON, wrong types, huge strings or a depth bomb. */
function randomPayload() {
  const base = pick(FIXTURES);
  switch (int(9)) {
    case 0:
      return Buffer.from(Array.from({ length: int(2048) }, () => int(256)));
    case 1:
      return base.subarray(0, int(base.length));
    case 2: {
      const copy = Buffer.from(base);
      for (let i = int(8) + 1; i > 0; i--) copy[int(copy.length)] = int(256);
      return copy;
    }
    case 3: {
      const json = JSON.parse(base.toString('utf8'));
      for (const key of Object.keys(json)) if (rnd() < 0.4) json[key] = randomValue();
      return Buffer.from(JSON.stringify(json));
    }
    case 4:
      return Buffer.from(JSON.stringify(randomValue()));
    case 5:
      return depthBomb(10_000);
    case 6:
      return Buffer.from(
        JSON.stringify({
          session_id: randomString(),
          hook_event_name: 'PostToolUse',
          tool_name: 'Bash',
          tool_response: { stdout: 'y'.repeat(int(1_200_000)) },
        }),
      );
    case 7:
      return Buffer.from('{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}},"session_id":"proto"}');
    default:
      return base;
  }
}

function randomSelfReport() {
  switch (int(8)) {
    case 0:
      return null;
    case 1:
      return depthBomb(10_000);
    case 2:
      return Buffer.from(
        JSON.stringify({ confidence: 0.5, most_likely_wrong: { surface: 'auth', description: randomString() }, known_not_in_diff: randomString() }),
      );
    case 3:
      return Buffer.from('{"__proto__":{"x":1},"constructor":1,"confidence":0.4,"most_likely_wrong":null,"known_not_in_diff":null}');
    case 4:
      return Buffer.from(JSON.stringify(randomValue()));
    case 5:
      return Buffer.from(Array.from({ length: int(512) }, () => int(256)));
    case 6:
      return Buffer.from('{"confidence":0.9,"most_likely_wrong":{"surface":"data","description":"cut');
    default:
      return Buffer.from(
        JSON.stringify({
          confidence: rnd(),
          most_likely_wrong: { surface: 'data', description: `\u001b]0;title\u0007${'z'.repeat(int(9000))}` },
          known_not_in_diff: null,
        }),
      );
  }
}

/** Every path under root with its size and mtime, except the state dir (and .git internals). */
function snapshot(root, skip) {
  const out = new Map();
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (skip.includes(path)) continue;
      const st = lstatSync(path);
      if (st.isDirectory()) walk(path);
      else out.set(path, `${st.size}:${st.mtimeMs}`);
    }
  };
  walk(root);
  return out;
}

function fail(message, detail) {
  process.stderr.write(`fuzz: FAILED (seed ${SEED}): ${message}\n${detail ? `${String(detail).slice(0, 2000)}\n` : ''}`);
  process.exit(1);
}

const sandbox = mkdtempSync(join(tmpdir(), 'forge-fuzz-'));
const repo = join(sandbox, 'repo');
const outside = join(sandbox, 'outside');
mkdirSync(outside);
writeFileSync(join(outside, 'keep.txt'), 'untouched\n');
const git = (...a) => spawnSync('git', ['-C', repo, ...a], { encoding: 'utf8' });
mkdirSync(repo);
git('init', '-q', '-b', 'main');
writeFileSync(join(repo, 'README.md'), 'hello\n');
git('add', 'README.md');
git('-c', 'user.email=f@example.com', '-c', 'user.name=f', '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'init');
mkdirSync(join(repo, 'src/auth'), { recursive: true });
writeFileSync(join(repo, 'src/auth/token.ts'), 'export const t = 1;\n');
const state = join(repo, '.forge');
const skip = [state, join(repo, '.git')];
const before = snapshot(sandbox, skip);
const gitBefore = git('status', '--porcelain', '--ignored').stdout;

const env = { ...process.env, REFLECTION_MODE: 'solo', HOME: sandbox };
for (const k of ['FORGE_DIR', 'REFLECTION_DIR', 'REFLECTION_INPUT', 'FORGE_REFLECT_CLI', 'FORGE_DEBUG']) delete env[k];
// no drain started by the Stop hook: the fuzzer drains, so it knows what was spooled
env.PATH = (env.PATH ?? '')
  .split(':')
  .filter((p) => !existsSync(join(p, 'forge-reflect')))
  .join(':');

// The hooks' bash: `bash` on PATH, or in the stock-Mac pass (which routes every hook run to it) the
// stand-in's 3.2. bash 5 has a clock (EPOCHREALTIME); an older one has none (docs/decisions.md).
const HOOK_BASH = process.env.FORGE_TEST_PLATFORM === 'macos-like' ? join(process.env.FORGE_TEST_MACOS_BIN ?? '', 'bash') : 'bash';
const hookMajor = Number(spawnSync(HOOK_BASH, ['-c', 'echo "${BASH_VERSINFO[0]}"'], { encoding: 'utf8' }).stdout?.trim());
if (!Number.isInteger(hookMajor) || hookMajor < 3) fail(`cannot tell the version of the hooks' bash (${HOOK_BASH})`);
const HOOK_CLOCK = hookMajor >= 5;
const ZEROS = '0000000000000000';

const figures = {
  seed: SEED,
  clock: HOOK_CLOCK ? 'hook' : 'file',
  event_cases: 0,
  stop_cases: 0,
  spooled: 0,
  logged: 0,
  rejected: 0,
  sidecars: 0,
  events_lost: 0,
  invariant_failures: 0,
};
/** Each spooled file's name (without `.event`: its name in rejected/ too) → the id the log keeps it under. */
const spooled = new Map();

function runHook(script, arg, input) {
  const r = spawnSync('bash', arg === null ? [script] : [script, arg], { cwd: repo, env, input, maxBuffer: 1 << 20, timeout: 60_000 });
  if (r.status !== 0 || r.stdout.length > 0)
    fail(
      `${script} ${arg ?? ''} broke the promise: exit ${r.status} signal ${r.signal}, stdout ${JSON.stringify(r.stdout.toString().slice(0, 200))}`,
      input.subarray(0, 300).toString('utf8'),
    );
}

function noteSpool() {
  const dir = join(state, 'spool');
  if (!existsSync(dir)) return;
  if (!HOOK_CLOCK && existsSync(join(dir, 'events.log'))) fail('a hook without a clock appended to spool/events.log');
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.event') || name.startsWith('.')) continue;
    const stem = name.slice(0, -6);
    if (spooled.has(stem)) continue;
    spooled.set(stem, loggedIdOf(join(dir, name), stem));
  }
}

/** The id the drain logs a spool file under: its name, or without a clock its time of writing in place of the zeros. */
function loggedIdOf(path, stem) {
  if (HOOK_CLOCK) {
    if (stem.startsWith(ZEROS)) fail(`a hook with a clock named a spool file with 16 zeros: ${stem}`);
    return stem;
  }
  if (!stem.startsWith(`${ZEROS}-`)) fail(`a hook without a clock named a spool file with a time: ${stem}`);
  const text = readFileSync(path).toString('utf8');
  let env;
  try {
    env = JSON.parse(text.slice(0, text.indexOf('\n')));
  } catch {
    fail(`spool file ${stem} has no JSON envelope`, text.slice(0, 300));
  }
  if (env.clock !== 'file' || env.received_us !== 0)
    fail(`spool file ${stem} is named with 16 zeros, its envelope says clock ${env.clock}, received_us ${env.received_us}`);
  return `${String(Math.round(statSync(path).mtimeMs * 1000)).padStart(16, '0')}${stem.slice(16)}`;
}

function drain() {
  noteSpool();
  const r = spawnSync(process.execPath, [CLI, 'ingest'], { cwd: repo, env, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0 || /at .*\.js:\d+|SQLITE_BUSY|RangeError/.test(r.stderr + r.stdout))
    fail(`forge-reflect ingest failed: exit ${r.status}`, r.stderr + r.stdout);
}

const t0 = Date.now();
for (let i = 0; i < CASES; i++) {
  runHook(EVENT_HOOK, pick(EVENTS), randomPayload());
  figures.event_cases++;
  if ((i + 1) % BATCH === 0) drain();
}
for (let i = 0; i < STOP_CASES; i++) {
  const report = randomSelfReport();
  if (report !== null) writeFileSync(join(state, 'reflection-input.json'), report);
  if (rnd() < 0.3) writeFileSync(join(repo, `src/f${i}.ts`), `${i}\n`);
  noteSpool();
  runHook(STOP_HOOK, null, randomPayload());
  figures.stop_cases++;
}
drain();

// Invariants over the whole run.
const after = snapshot(sandbox, skip);
for (const [path, sig] of after) {
  if (path.startsWith(join(repo, 'src/f')) && !before.has(path)) continue; // the fuzzer's own edits
  if (before.get(path) !== sig) fail(`a file outside the state dir was written: ${path}`);
}
for (const path of before.keys()) if (!after.has(path)) fail(`a file outside the state dir vanished: ${path}`);
const gitAfter = git('status', '--porcelain', '--ignored')
  .stdout.split('\n')
  .filter((l) => !/src\/f\d+\.ts|^$/.test(l));
const gitBeforeLines = gitBefore.split('\n').filter((l) => l !== '');
const extra = gitAfter.filter((l) => !gitBeforeLines.includes(l) && l !== '!! .forge/');
if (extra.length > 0) fail('git sees new files outside the state dir', extra.join('\n'));

const left = readdirSync(join(state, 'spool')).filter((n) => n.endsWith('.event'));
if (left.length > 0) fail(`${left.length} events were left in the spool after the last drain`);
const rejectedDir = join(state, 'spool/rejected');
const rejected = new Set();
if (existsSync(rejectedDir)) {
  for (const name of readdirSync(rejectedDir)) {
    if (!name.endsWith('.event')) continue;
    const id = name.slice(0, -6);
    if (!existsSync(join(rejectedDir, `${id}.reason`))) fail(`rejected ${name} has no .reason`);
    rejected.add(id);
  }
}
const q = spawnSync(
  process.execPath,
  [
    '--input-type=module',
    '-e',
    `
import Database from 'better-sqlite3';
const db = new Database(process.argv[1], { readonly: true });
process.stdout.write(JSON.stringify(db.prepare('SELECT id FROM events').all().map((r) => r.id)));
`,
    join(state, 'events.db'),
  ],
  { cwd: join(KIT, 'packages/forge-reflect'), encoding: 'utf8', maxBuffer: 64 << 20 },
);
if (q.status !== 0) fail('cannot read the log', q.stderr);
const ids = JSON.parse(q.stdout);
const logged = new Set(ids);
if (logged.size !== ids.length) fail('an event is in the log twice');
for (const [stem, id] of spooled) {
  const inLog = logged.has(id);
  const inRejected = rejected.has(stem);
  if (inLog === inRejected)
    fail(`event ${stem}${id === stem ? '' : ` (logged as ${id})`} is ${inLog ? 'both in the log and rejected' : 'lost: neither in the log nor rejected'}`);
}
figures.spooled = spooled.size;
figures.logged = logged.size;
figures.rejected = rejected.size;

const { reflectionV1Schema } = await import(join(KIT, 'packages/reflection-types/dist/index.js'));
const sidecars = readdirSync(join(state, 'reflections')).filter((n) => n.endsWith('.reflection.json'));
for (const name of sidecars) {
  const parsed = reflectionV1Schema.safeParse(JSON.parse(readFileSync(join(state, 'reflections', name), 'utf8')));
  if (!parsed.success) fail(`sidecar ${name} is not valid reflection.v1`, JSON.stringify(parsed.error.issues[0]));
  const sc = parsed.data;
  for (const text of [sc.known_not_in_diff, sc.most_likely_wrong?.description]) {
    if (typeof text === 'string' && (text.length > 4096 || /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(text)))
      fail(`sidecar ${name} holds an uncapped or control-character string`);
  }
}
if (sidecars.length !== STOP_CASES) fail(`${STOP_CASES} Stop runs wrote ${sidecars.length} sidecars`);
figures.sidecars = sidecars.length;
figures.seconds = Math.round((Date.now() - t0) / 100) / 10;
process.stdout.write(`${JSON.stringify(figures)}\n`);
if (!flag('--keep')) rmSync(sandbox, { recursive: true, force: true });
else process.stderr.write(`fuzz: kept ${sandbox}\n`);
