// The hooks as the runtime starts them: a fresh bash per event, payload on stdin.
// Targets (issue 3): event hook (solo) <= 0.25x node -e 0; any hook with the mode off <= 0.1x;
// Stop hook (solo, 200 changed files) <= 2x.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const name = 'hooks';
export const describe = 'median wall time of each hook, started as the runtime starts it';

function scratchRepo(files) {
  const dir = mkdtempSync(join(tmpdir(), 'forge-bench-'));
  const git = (...a) => execFileSync('git', a, { cwd: dir, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'bench@example.com');
  git('config', 'user.name', 'bench');
  const areas = ['src/auth', 'src/components', 'db/migrations', 'docs', 'deploy', 'lib', 'test'];
  const paths = [];
  for (let i = 0; i < files; i += 1) {
    const area = areas[i % areas.length];
    mkdirSync(join(dir, area), { recursive: true });
    const path = `${area}/file-${i}.ts`;
    writeFileSync(join(dir, path), `export const v${i} = ${i};\n`);
    paths.push(path);
  }
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  for (const path of paths) writeFileSync(join(dir, path), `export const changed = true;\n`);
  return dir;
}

export async function run(ctx) {
  const { root, runs, nodeBaseline, timeProcess, medianOf } = ctx;
  const repo = scratchRepo(200);
  const eventHook = join(root, 'hooks/reflect-event-hook.sh');
  const stopHook = join(root, 'hooks/reflect-stop-hook.sh');
  const toolPayload = readFileSync(join(root, 'tests/fixtures/payloads/post-tool-use-edit.json'));
  const stopPayload = readFileSync(join(root, 'tests/fixtures/payloads/stop.json'));
  const env = (mode) => {
    // No detached drain after each Stop: it would load the machine during later timed runs.
    const e = { ...process.env, FORGE_DIR: join(repo, '.forge'), FORGE_REFLECT_CLI: 'off' };
    delete e.REFLECTION_MODE;
    if (mode) e.REFLECTION_MODE = mode;
    return e;
  };
  const time = (hook, hookArgs, input, mode) =>
    medianOf(runs, () => {
      const r = timeProcess('bash', [hook, ...hookArgs], { cwd: repo, input, env: env(mode) });
      if (r.status !== 0 || r.stdout.length > 0) throw new Error(`${hook} broke its promise in the benchmark`);
      return r.ms;
    });
  const row = (what, median_ms, limit) => ({
    what,
    median_ms,
    ratio: median_ms / nodeBaseline,
    target: `<= ${limit}x`,
    met: median_ms / nodeBaseline <= limit,
  });
  try {
    const rows = [
      row('event hook, mode off', time(eventHook, ['PostToolUse'], toolPayload, ''), 0.1),
      row('stop hook, mode off', time(stopHook, [], stopPayload, ''), 0.1),
      row('event hook, solo (PostToolUse)', time(eventHook, ['PostToolUse'], toolPayload, 'solo'), 0.25),
      row('stop hook, solo, 200 changed files', time(stopHook, [], stopPayload, 'solo'), 2),
    ];
    const sidecar = execFileSync('sh', ['-c', 'ls .forge/reflections/*.reflection.json | head -n 1'], { cwd: repo, encoding: 'utf8' }).trim();
    const files = JSON.parse(readFileSync(join(repo, sidecar), 'utf8')).files_changed.length;
    if (files !== 200) throw new Error(`expected 200 changed files in the Stop sidecar, got ${files}`);
    return rows;
  } finally {
    rmSync(repo, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }
}
