#!/usr/bin/env node
// node scripts/test-shell.mjs: `npm run test:shell`. Runs every bats suite under the system bash,
// then the hook suites again as on a stock Mac: every hook under the stand-in's bash 3.2 with the
// stand-in's bin/ (FreeBSD's userland, no timeout, flock or setsid) alone on its PATH, after the
// test's own fake programs. A test skipped in either pass fails the run, and so does a stand-in
// that cannot be made (node scripts/macos-like.mjs).
//
//   node scripts/test-shell.mjs                                   both passes (what npm test runs)
//   node scripts/test-shell.mjs --platform macos-like FILE...     one or more bats or vitest files, Mac pass only
//   node scripts/test-shell.mjs --platform system FILE...         the same under the system bash
//   node scripts/test-shell.mjs --platform macos-like --filter RE FILE   only tests whose name matches RE
//   node scripts/test-shell.mjs --list macos-like                 the files of the Mac pass, one a line
//
// How the Mac pass works. The test code (bats and its bash 5, vitest, the test bodies and their GNU
// tools) runs as in the system pass; only the hooks change. A folder made for the run is put first
// on PATH with one program, `bash` (tests/helpers/macos-like-bash.sh): when its first argument is a
// kit hook (hooks/*.sh, hooks/lib/*.sh, a vendored copy, or tests/helpers/text-encoding-check.bash,
// which drives the hook's own functions) it runs the stand-in's bash 3.2 with a PATH made of the
// caller's PATH entries that are the test's own (fake tools in a test's temp folder) followed by the
// stand-in's bin/, and OSTYPE=darwin23; for anything else (`bash -c ...` of a test body) it runs
// the system bash unchanged. A test that starts a hook by its shebang (#!/usr/bin/env bash) reaches
// it through env's PATH lookup. FORGE_PROC_ROOT names a folder that does not exist (a Mac has no
// /proc; a test about the /proc path sets FORGE_PROC_ROOT=/proc itself). tests/helpers/hooks.bash
// builds its PATHs (path_without, path_without_node) and spies from the stand-in in this pass, and
// tests/bats/test-platform.bats checks, from inside the hooks, that all of this holds.
//
// Each bats file runs on its own; a process one leaves behind (a helper or a fake that outlived its
// hook) is a failure named after it, and is ended, so it cannot keep the run waiting for ever.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureMacosLike } from './macos-like.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The suites of the Mac pass: every bats file that runs a hook (checked by tests/bats/test-platform.bats)
 * but those below, and every vitest file that does.
 */
export const MAC_BATS = [
  'tests/bats/event-hook.bats', // the event hook; 8 hooks at once; a writer killed
  'tests/bats/stop-hook.bats', // the Stop hook; SIGKILL in mid-run; locks
  'tests/bats/session-record.bats',
  'tests/bats/faults.bats', // full disks, a read-only repo, 16 hooks at once beside a drain
  'tests/bats/hardening.bats',
  'tests/bats/fuzz.bats', // scripts/fuzz.mjs --quick
  'tests/bats/text-encoding.bats', // the hooks' own encoders, in the hook's bash
  'tests/bats/install.bats', // the vendored Stop hook, end to end
  'tests/bats/test-platform.bats', // this harness, checked from inside the hooks
  'tests/bats/plugins.bats', // the plugins' hooks: on their own, deferring to settings, the CLI found
];
/** bats files that run a hook and are not in the Mac pass, and why. */
export const MAC_BATS_EXCLUDED = {
  'tests/bats/doctor.bats': 'doctor checks the machine it runs on (its bash, its tools): its Mac behaviour is tested by its own suites',
  'tests/bats/bench.bats': "the speed suite: its runs under the stand-in are the bench's own",
  'tests/bats/hook-portable.bats': 'runs lib/common.sh under both bashes itself, in every pass',
  'tests/bats/hook-syntax.bats': 'parses every hook file with bash 3.2 itself, in every pass',
};
export const MAC_VITEST = [
  'packages/risk-floor/test/bash-parity.test.ts', // the bash twin of the risk table, in the hook's bash
  'packages/forge-reflect/test/hardening.test.ts', // the redaction corpus through the real event hook
  'packages/forge-reflect/test/drain-segments.test.ts', // records as the real event hook appends them
  'packages/forge-reflect/test/install.test.ts', // the vendored Stop hook
  'packages/forge-reflect/test/runtimes-commands.test.ts', // the registered commands, real hooks included
  'packages/forge-reflect/test/runtimes-install.test.ts', // Codex's and Gemini's Stop commands
  'packages/forge-reflect/test/export-otlp.test.ts', // the ingest the real Stop hook starts
  'packages/forge-reflect/test/runtime-qwen.test.ts', // Qwen's hooks, named by their environment
  'packages/forge-reflect/test/runtime-copilot.test.ts', // Copilot running Claude's hooks, named by COPILOT_CLI
  'packages/forge-reflect/test/runtime-opencode.test.ts', // the opencode plugin handing events to the hooks
  'packages/forge-reflect/test/runtime-cline.test.ts', // Cline's hook files calling the hooks
  'packages/forge-reflect/test/stop-failure.test.ts', // a turn ended on a model error, through the real Stop hook
];

/** Files naming a hook that run none, and why (checked by tests/bats/test-platform.bats). */
export const MAC_VITEST_EXCLUDED = {
  'packages/forge-reflect/test/helper-code-cache.test.ts': 'runs the bundled node helper alone, no bash',
  'packages/forge-reflect/test/install-merge.test.ts': 'the registration text only',
  'packages/forge-reflect/test/helper-protocol.test.ts': 'reads the Stop hook as text for the facts it sends',
  'packages/forge-reflect/test/runtimes.test.ts': 'the registration texts and payload shapes only',
  'packages/forge-reflect/test/plugins.test.ts': "the plugin files and doctor reading them; tests/bats/plugins.bats runs the plugins' hooks",
  'packages/forge-reflect/test/schema-validators-generated.test.ts': 'reads the helper bundle as text',
  'packages/risk-floor/test/risk-floor.test.ts': 'a hook path in its corpus of paths',
};

const BATS = join(root, 'node_modules', 'bats', 'bin', 'bats');
const VITEST = join(root, 'node_modules', 'vitest', 'vitest.mjs');

/** sh's single quotes around s. */
function shQuote(s) {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Makes the Mac pass's PATH folder and returns the environment of the pass. Throws when the
 * stand-in cannot be made.
 */
export function macosLikeEnv(env = process.env) {
  const macBin = ensureMacosLike(env);
  for (const tool of ['bash', 'sh', 'sed', 'stat', 'date', 'git', 'node', 'perl']) {
    if (!existsSync(join(macBin, tool))) throw new Error(`the stand-in's bin/ (${macBin}) has no ${tool}`);
  }
  const version = spawnSync(join(macBin, 'bash'), ['-c', 'echo "$BASH_VERSION"'], { encoding: 'utf8', env: { PATH: macBin } });
  if (version.status !== 0 || !version.stdout.startsWith('3.2.')) {
    throw new Error(`the stand-in's bash is not 3.2: ${JSON.stringify(version.stdout || version.stderr)}`);
  }
  const hostPath = env.PATH ?? '';
  const systemBash = spawnSync('sh', ['-c', 'command -v bash'], { encoding: 'utf8', env: { PATH: hostPath } }).stdout.trim();
  if (!systemBash.startsWith('/')) throw new Error('no bash on PATH');
  const shim = mkdtempSync(join(tmpdir(), 'forge-macos-like-shim-'));
  const proc = join(shim, 'no-proc'); // never made: a Mac has no /proc
  writeFileSync(
    join(shim, 'bash'),
    [
      // The system's bash in POSIX mode: it reads no BASH_ENV (a test's, meant for the hook), and,
      // unlike dash, passes on the functions bash exports (bats's own).
      `#!${systemBash} --posix`,
      '# Made by scripts/test-shell.mjs for one run of the stock-Mac pass; see tests/helpers/macos-like-bash.sh.',
      `forge_shim=${shQuote(shim)}`,
      `forge_mac_bin=${shQuote(macBin)}`,
      `forge_host_path=${shQuote(hostPath)}`,
      `forge_system_bash=${shQuote(systemBash)}`,
      `forge_no_proc=${shQuote(proc)}`,
      `. ${shQuote(join(root, 'tests', 'helpers', 'macos-like-bash.sh'))}`,
      '',
    ].join('\n'),
  );
  chmodSync(join(shim, 'bash'), 0o755);
  return {
    shim,
    env: {
      ...env,
      PATH: `${shim}:${hostPath}`,
      FORGE_TEST_PLATFORM: 'macos-like',
      FORGE_TEST_MACOS_BIN: macBin,
      FORGE_TEST_SHIM: shim,
      FORGE_TEST_HOST_PATH: hostPath,
      FORGE_TEST_SYSTEM_BASH: systemBash,
      // For a hook started without the shim (a PATH a test made of the stand-in's tools, whose bash is
      // the stand-in's itself); the shim sets the same for every hook it starts.
      FORGE_PROC_ROOT: proc,
      OSTYPE: 'darwin23',
      UNAME_s: 'Darwin',
      UNAME_r: '23.6.0',
      UNAME_m: 'arm64',
    },
  };
}

// --- Processes a run leaves behind ---
// Every process of a pass carries TEST_SHELL_RUN=<id> in its environment (unless a test gave it an
// environment of its own). One still running once the pass is over, outside the pass's own process
// tree, was left behind by a test or by the hook it ran: a failure (the hooks promise that nothing
// they start outlives them holding their output, and a helper or a drain ends). It is named and
// ended, by its pid. A left-behind process that holds bats's output open would otherwise keep the
// run waiting for ever. (Linux: read from /proc; elsewhere nothing is found.)
const STRAY_GRACE_MS = 15_000;
const SILENCE_MS = 10 * 60_000;

/** The live processes whose environment holds MARK and which are not in the tree of any of ROOTS. */
function strays(mark, roots) {
  if (!existsSync('/proc/self/environ')) return [];
  const parent = new Map();
  const marked = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue;
      parent.set(pid, Number(fields[1]));
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(mark)) marked.push(pid);
    } catch {
      // gone, or not ours to read
    }
  }
  const inTree = (pid) => {
    for (let p = pid, n = 0; p > 1 && n < 4096; p = parent.get(p) ?? 0, n++) if (p === process.pid || roots.includes(p)) return true;
    return false;
  };
  return marked
    .filter((pid) => !inTree(pid))
    .map((pid) => {
      let cmd = '?';
      try {
        cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      } catch {
        // gone meanwhile
      }
      return { pid, cmd: cmd.length > 160 ? `${cmd.slice(0, 160)}…` : cmd };
    });
}

/** Ends the processes LIST (SIGKILL, by pid); returns a line naming them. */
function endStrays(list) {
  for (const { pid } of list) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  const shown = list.slice(0, 8).map(({ pid, cmd }) => `${pid} ${cmd}`);
  if (list.length > 8) shown.push(`and ${list.length - 8} more`);
  return shown.join('; ');
}

/**
 * Runs a command, its output passed through and also returned. When the command has printed
 * `expected` results (bats's plan) and does not end within STRAY_GRACE_MS, or prints nothing for
 * SILENCE_MS, the processes the run left behind are ended (they hold its output open) and said.
 */
function run(command, args, env, { countResults } = {}) {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['inherit', 'pipe', 'inherit'] });
    const notes = [];
    let out = '';
    let timer;
    const unblock = (why) => {
      const list = strays(`TEST_SHELL_RUN=${env.TEST_SHELL_RUN}`, [child.pid]);
      if (list.length) notes.push(`${why}, held open by ${list.length} process(es) the tests left behind, ended: ${endStrays(list)}`);
      else notes.push(`${why}, and no process left behind was found`);
    };
    const arm = () => {
      clearTimeout(timer);
      const plan = countResults ? /^1\.\.(\d+)$/m.exec(out) : null;
      const done = plan ? out.split('\n').filter((l) => /^(not )?ok \d+ /.test(l)).length >= Number(plan[1]) : false;
      timer = done
        ? setTimeout(() => unblock(`bats reported every test but did not end within ${STRAY_GRACE_MS / 1000} s`), STRAY_GRACE_MS)
        : setTimeout(() => {
            unblock(`no output for ${SILENCE_MS / 60_000} minutes`);
            arm();
          }, SILENCE_MS);
    };
    child.stdout.on('data', (chunk) => {
      out += chunk;
      process.stdout.write(chunk);
      arm();
    });
    arm();
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ status: code ?? (signal ? 128 : 1), out, notes });
    });
  });
}

/** Waits up to MS for what a run started to end; ends and names what is left (after WHAT). */
async function leftBehind(env, what, ms) {
  const mark = `TEST_SHELL_RUN=${env.TEST_SHELL_RUN}`;
  const until = Date.now() + ms;
  let list = strays(mark, []);
  while (list.length && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 250));
    list = strays(mark, []);
  }
  return list.length ? [`${what}: ${list.length} process(es) it started still ran ${ms / 1000} s after it ended; ended them: ${endStrays(list)}`] : [];
}

/** The bats files of FILES, folders expanded (sorted, as bats --recursive takes them). */
function batsFilesOf(files) {
  const out = [];
  const walk = (path) => {
    if (statSync(join(root, path)).isDirectory()) {
      for (const name of readdirSync(join(root, path)).sort()) {
        const child = `${path.replace(/\/$/, '')}/${name}`;
        if (statSync(join(root, child)).isDirectory() || name.endsWith('.bats')) walk(child);
      }
    } else out.push(path);
  };
  for (const f of files) walk(f);
  return out;
}

/**
 * Runs bats over FILES, one file at a time (what a file leaves behind is named after it and ended
 * before the next); returns the problems (failures, skips, nothing run, processes left).
 */
async function runBats(files, env, filter) {
  const problems = [];
  let ran = 0;
  for (const file of batsFilesOf(files)) {
    const args = ['--formatter', 'tap', ...(filter ? ['--filter', filter] : []), file];
    const started = Date.now();
    process.stdout.write(`# ${file}\n`);
    const { status, out, notes } = await run(BATS, args, env, { countResults: true });
    process.stdout.write(`# ${file}: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    for (const note of notes) problems.push(`${file}: ${note}`);
    const lines = out.split('\n');
    for (const line of lines.filter((l) => /^ok \d+ .*# skip\b/.test(l))) problems.push(`${file}: skipped (a skip is a failure): ${line}`);
    const failed = lines.filter((l) => /^not ok \d+ /.test(l));
    for (const line of failed) problems.push(`${file}: ${line}`);
    ran += lines.filter((l) => /^(not )?ok \d+ /.test(l)).length;
    if (status !== 0 && failed.length === 0) problems.push(`${file}: bats exited ${status}`);
    problems.push(...(await leftBehind(env, file, 5_000)));
  }
  if (ran === 0) problems.push('bats ran no test');
  return problems;
}

/** Runs vitest over FILES; returns the problems. */
async function runVitest(files, env, filter) {
  const report = join(mkdtempSync(join(tmpdir(), 'forge-vitest-')), 'report.json');
  const args = [VITEST, 'run', '--reporter=default', '--reporter=json', `--outputFile=${report}`, ...(filter ? ['-t', filter] : []), ...files];
  const { status, notes } = await run(process.execPath, args, env);
  const problems = notes.map((n) => `vitest: ${n}`);
  if (!existsSync(report)) {
    problems.push('vitest wrote no report');
  } else {
    const r = JSON.parse(readFileSync(report, 'utf8'));
    for (const file of r.testResults ?? []) {
      for (const t of file.assertionResults ?? []) {
        if (t.status === 'failed') problems.push(`not ok ${relative(root, file.name)} > ${t.fullName}`);
        else if (t.status !== 'passed') problems.push(`${t.status} (a skip is a failure): ${relative(root, file.name)} > ${t.fullName}`);
      }
      if (file.status === 'failed' && !(file.assertionResults ?? []).length) problems.push(`not ok ${relative(root, file.name)}: ${file.message ?? 'failed'}`);
    }
    if ((r.numTotalTests ?? 0) === 0) problems.push('vitest ran no test');
    rmSync(dirname(report), { recursive: true, force: true });
  }
  if (status !== 0 && !problems.some((p) => p.startsWith('not ok'))) problems.push(`vitest exited ${status}`);
  return problems;
}

async function pass(name, files, env, filter) {
  const bats = files.filter((f) => f.endsWith('.bats') || (existsSync(join(root, f)) && statSync(join(root, f)).isDirectory()));
  const vitest = files.filter((f) => /\.test\.ts$/.test(f));
  const other = files.filter((f) => !bats.includes(f) && !vitest.includes(f));
  if (other.length) throw new Error(`neither a bats nor a vitest file: ${other.join(' ')}`);
  const started = Date.now();
  process.stdout.write(`\n=== test:shell, ${name} pass: ${files.length === 1 ? files[0] : `${files.length} files`} ===\n`);
  const problems = [];
  const marked = { ...env, TEST_SHELL_RUN: `${process.pid}-${name}-${Date.now()}` };
  if (bats.length) problems.push(...(await runBats(bats, marked, filter)));
  if (vitest.length) {
    problems.push(...(await runVitest(vitest, marked, filter)));
    problems.push(...(await leftBehind(marked, 'vitest', STRAY_GRACE_MS)));
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  return { name, seconds, problems };
}

function parseArgs(argv) {
  const o = { platform: 'both', filter: undefined, files: [], list: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--platform') o.platform = argv[++i];
    else if (a.startsWith('--platform=')) o.platform = a.slice(11);
    else if (a === '--filter' || a === '-f') o.filter = argv[++i];
    else if (a === '--list') o.list = argv[++i];
    else if (a === '--help' || a === '-h') o.help = true;
    else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
    else o.files.push(a);
  }
  if (!['both', 'system', 'macos-like'].includes(o.platform)) throw new Error(`--platform is system, macos-like or both, not ${o.platform}`);
  return o;
}

async function main() {
  let o;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`test-shell: ${error.message}\n`);
    return 2;
  }
  if (o.help) {
    const text = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
    process.stdout.write(
      `${text
        .slice(1, 13)
        .map((l) => l.replace(/^\/\/ ?/, ''))
        .join('\n')}\n`,
    );
    return 0;
  }
  if (o.list) {
    const lists = {
      'macos-like': [...MAC_BATS, ...MAC_VITEST],
      'macos-like-excluded': [...Object.keys(MAC_BATS_EXCLUDED), ...Object.keys(MAC_VITEST_EXCLUDED)],
    };
    if (!lists[o.list]) {
      process.stderr.write(`test-shell: --list takes ${Object.keys(lists).join(' or ')}\n`);
      return 2;
    }
    process.stdout.write(`${lists[o.list].join('\n')}\n`);
    return 0;
  }
  const results = [];
  if (o.platform !== 'macos-like') {
    results.push(await pass('system', o.files.length ? o.files : ['tests/bats'], process.env, o.filter));
  }
  if (o.platform !== 'system') {
    let mac;
    try {
      mac = macosLikeEnv();
    } catch (error) {
      // No stand-in is a failure of the pass, never a skip.
      results.push({ name: 'macos-like', seconds: '0.0', problems: [`the stock-Mac stand-in cannot be used: ${error.message}`] });
    }
    if (mac) {
      const gone = () => rmSync(mac.shim, { recursive: true, force: true });
      process.once('SIGINT', () => {
        gone();
        process.exit(130);
      });
      try {
        const r = await pass('macos-like', o.files.length ? o.files : [...MAC_BATS, ...MAC_VITEST], mac.env, o.filter);
        // Scripts the shim gave the system bash: test code. A hook file among them would be a call
        // the shim did not recognise, so run in bash 5: a failure of the harness.
        const noted = join(mac.shim, 'system-scripts');
        const scripts = existsSync(noted) ? [...new Set(readFileSync(noted, 'utf8').split('\n').filter(Boolean))] : [];
        const hooks = scripts.filter((f) => resolve(f).startsWith(join(root, 'hooks') + '/') || /\/\.[a-z]+\/hooks\/forge-reflect\//.test(f));
        for (const f of hooks) r.problems.push(`a hook file ran in the system bash, not the stand-in's (tests/helpers/macos-like-bash.sh): ${f}`);
        if (scripts.length)
          process.stdout.write(
            `\nscripts the stock-Mac pass ran in the system bash (test code): ${scripts.map((f) => (resolve(f).startsWith(`${root}/`) ? relative(root, resolve(f)) : f)).join(', ')}\n`,
          );
        results.push(r);
      } finally {
        gone();
      }
    }
  }
  process.stdout.write('\n');
  let failed = false;
  for (const r of results) {
    process.stdout.write(`test:shell ${r.name} pass: ${r.problems.length ? 'FAILED' : 'ok'} in ${r.seconds} s\n`);
    for (const p of r.problems) process.stdout.write(`  ${p}\n`);
    if (r.problems.length) failed = true;
  }
  return failed ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main();
}
