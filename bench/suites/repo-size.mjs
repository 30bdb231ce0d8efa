// The hooks against the repository's size: 10^3 ... 10^6 tracked files with a handful changed,
// each hook beside a bare `git status --porcelain` of the same repository timed in the same run
// (right before it, in the same state). Target (issue 42): SessionStart and Stop at most 1.5x that
// status at 10^5 and 10^6 files. Also the growth exponent of each against the size, git's beside.
//
// Two starts: a clean tree, and a tree already dirty at SessionStart (a file edited, one deleted,
// one new), which the session must not be blamed for; from 10^5 files a third, a clean tree with
// git's untracked cache on. In each session the agent edits two files,
// deletes one, adds one in an old folder and one in a new folder; every Stop's sidecar must name
// exactly those five, or the suite fails.
//
// The fixtures are built once (bench/repo-fixture.mjs; 10^6 files take minutes and gigabytes) and kept in
// FORGE_BENCH_CACHE (default ~/.cache/forge-reflect/bench); every run puts the files it changed back.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturePath, fixtureRepo } from '../repo-fixture.mjs';

export const name = 'repo-size';
export const describe = 'SessionStart and Stop against the repository size (10^3 ... 10^6 tracked files), beside a bare git status';

const LIMIT = 1.5;

export async function run(ctx) {
  const { root, runs, quick, timeProcess, median, growthExponent } = ctx;
  for (const tool of ['git', 'bash']) {
    if (spawnSync(tool, ['--version'], { stdio: 'ignore' }).status !== 0) return [{ what: 'every repo-size figure', skipped: `${tool} is not installed here` }];
  }
  if (!existsSync(join(root, 'hooks/lib/reflect-helper.cjs'))) return [{ what: 'every repo-size figure', skipped: 'the kit is not built (npm run build)' }];
  const sizes = (process.env.FORGE_BENCH_REPO_SIZES ?? (quick ? '1000,10000' : '1000,10000,100000,1000000')).split(',').map(Number);
  // As Claude Code starts them (its registered commands, with the kit's hooks in place of a vendored copy).
  const startHook = `LC_ALL=C BASH_ENV= exec bash ${JSON.stringify(join(root, 'hooks/reflect-event-hook.sh'))} SessionStart claude-code`;
  const stopHook = `BASH_ENV= exec bash ${JSON.stringify(join(root, 'hooks/reflect-stop-hook.sh'))} claude-code`;
  const rows = [];
  const curves = { status: [], start: [], stop: [] };
  for (const size of sizes) {
    const repo = await fixtureRepo(size, { log: (line) => process.stdout.write(`  (${line})\n`) });
    const env = (extra = {}) => {
      const e = { ...process.env, CLAUDE_PROJECT_DIR: repo, FORGE_REFLECT_CLI: 'off', REFLECTION_MODE: 'solo', ...extra };
      delete e.FORGE_DIR;
      delete e.REFLECTION_DIR;
      return e;
    };
    const timed = (command, args, input = '') => {
      const r = timeProcess(command, args, { cwd: repo, input, env: env() });
      if (r.status !== 0 || (command === 'sh' && r.stdout.length > 0))
        throw new Error(`${args.join(' ')} broke its promise in the benchmark (exit ${r.status})`);
      return r.ms;
    };
    const gitStatus = () => timed('git', ['status', '--porcelain']);
    // The files a run touches: numbers spread over the tree, one in an area the risk floor knows.
    const file = (k) => fixturePath(Math.floor((size * k) / 7));
    const before = { edit: file(1), del: file(2), add: 'wip/notes.md' };
    const session = { edits: [file(3), file(4)], del: file(5), inOld: `${file(6).replace(/[^/]+$/, '')}new-file.ts`, inNew: 'src/auth/session-new/token.ts' };
    const expected = [session.edits[0], session.edits[1], session.del, session.inOld, session.inNew].sort();
    const original = (path) => {
      const i = Number(/f(\d+)\.ts$/.exec(path)[1]);
      return `export const v${i} = ${i};\n`;
    };
    const put = (path, text) => {
      mkdirSync(join(repo, path, '..'), { recursive: true });
      writeFileSync(join(repo, path), text);
    };
    const restore = () => {
      for (const path of [before.edit, before.del, ...session.edits, session.del]) put(path, original(path));
      for (const path of [before.add, session.inOld]) rmSync(join(repo, path), { force: true });
      rmSync(join(repo, 'wip'), { recursive: true, force: true });
      rmSync(join(repo, 'src/auth/session-new'), { recursive: true, force: true });
      rmSync(join(repo, '.forge'), { recursive: true, force: true });
      // Untimed: git refreshes the stat data of the files put back, so no timed status pays for it.
      execFileSync('git', ['status', '--porcelain'], { cwd: repo, stdio: 'ignore' });
    };
    // The third start: a clean tree where the user has git's untracked cache on (core.untrackedCache,
    // as feature.manyFiles sets it), which the hooks must use rather than defeat.
    const gitConfig = (...a) => execFileSync('git', ['config', ...a], { cwd: repo, stdio: 'ignore' });
    const starts = size >= 100_000 ? ['clean', 'dirty', 'untracked cache'] : ['clean', 'dirty'];
    for (const start of starts) {
      if (start === 'untracked cache') gitConfig('core.untrackedCache', 'true');
      const times = { status: [], start: [], stop: [] };
      const wrong = [];
      // A run at 10^6 is five full looks at the tree, each seconds long: fewer runs there.
      const count = size >= 1_000_000 ? Math.min(runs, 7) : runs;
      for (let i = 0; i < count; i += 1) {
        restore();
        if (start === 'dirty') {
          put(before.edit, 'edited before the session\n');
          rmSync(join(repo, before.del));
          put(before.add, 'notes\n');
        }
        const id = `bench-${start.replace(' ', '-')}-${size}-${i}`;
        times.status.push(gitStatus());
        times.start.push(timed('sh', ['-c', startHook], JSON.stringify({ session_id: id, hook_event_name: 'SessionStart', source: 'startup' })));
        for (const path of session.edits) put(path, `changed in the session ${i}\n`);
        rmSync(join(repo, session.del));
        put(session.inOld, 'new\n');
        put(session.inNew, 'new\n');
        times.status.push(gitStatus());
        times.stop.push(timed('sh', ['-c', stopHook], JSON.stringify({ session_id: id, hook_event_name: 'Stop', last_assistant_message: 'done' })));
        const dir = join(repo, '.forge/reflections');
        const sidecar = JSON.parse(
          readFileSync(
            join(
              dir,
              readdirSync(dir).find((f) => f.endsWith('.reflection.json')),
            ),
            'utf8',
          ),
        );
        if (JSON.stringify(sidecar.files_changed) !== JSON.stringify(expected)) {
          wrong.push(`run ${i + 1}: the sidecar named ${JSON.stringify(sidecar.files_changed)}, not ${JSON.stringify(expected)} (${sidecar.risk.reason})`);
        }
        // The snapshot is the size of the index: one per run would fill the disk at 10^6.
        for (const f of readdirSync(join(repo, '.forge/sessions'))) unlinkSync(join(repo, '.forge/sessions', f));
      }
      if (start === 'untracked cache') {
        // Off again, and out of the index (false drops the extension at the next status).
        gitConfig('core.untrackedCache', 'false');
        restore();
        gitConfig('--unset', 'core.untrackedCache');
      }
      restore();
      const git = median(times.status);
      const label = `${size.toLocaleString('en-US')} files, ${start === 'untracked cache' ? 'clean start, untracked cache on' : `${start} start`}`;
      const target = size >= 100_000 ? `<= ${LIMIT}x git status` : 'context';
      for (const hook of ['start', 'stop']) {
        const ms = median(times[hook]);
        const ratio = ms / git;
        rows.push({
          what: `${hook === 'start' ? 'SessionStart' : 'Stop'}, ${label}`,
          median_ms: ms,
          ratio,
          versus: 'git status',
          git_status_ms: git,
          target,
          ...(size >= 100_000 || wrong.length > 0 ? { met: ratio <= LIMIT && wrong.length === 0 } : {}),
          note: `git status --porcelain ${git.toFixed(1)} ms, medians of ${count} runs each, timed in turn${wrong.length ? `; NOT EXACT in ${wrong.length} run(s): ${wrong[0]}` : '; every sidecar exact'}`,
        });
      }
      // Progress, for a run that takes many minutes (the rows are printed at the suite's end).
      process.stdout.write(
        `  (${label}: git status ${git.toFixed(0)} ms, SessionStart ${median(times.start).toFixed(0)} ms, Stop ${median(times.stop).toFixed(0)} ms, ${wrong.length ? `${wrong.length} run(s) not exact` : 'exact'})\n`,
      );
      if (start === 'clean') {
        curves.status.push({ size, ms: git });
        curves.start.push({ size, ms: median(times.start) });
        curves.stop.push({ size, ms: median(times.stop) });
      }
    }
  }
  if (sizes.length > 1) {
    rows.push({
      what: 'git status --porcelain vs tracked files',
      exponent: growthExponent(curves.status),
      points: curves.status,
      target: 'context (1 = linear)',
    });
    rows.push({
      what: 'SessionStart (clean) vs tracked files',
      exponent: growthExponent(curves.start),
      points: curves.start,
      target: "context: git status's exponent",
    });
    rows.push({
      what: 'Stop (clean start) vs tracked files',
      exponent: growthExponent(curves.stop),
      points: curves.stop,
      target: "context: git status's exponent",
    });
  }
  return rows;
}
