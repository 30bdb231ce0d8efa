/**
 * The checks of `forge-reflect doctor`, one function each, in the order they print. Each returns
 * a verdict with what it saw and, when something is wrong, the fix. `fail` means the kit cannot do
 * its job (exit 1); `warn` means it works but something needs a look.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { VENDORED_DIR, type Check } from '../runtimes/module.js';
import { loadRegistration } from '../install/kit.js';
import { registrationCommands } from '../install/settings-merge.js';
import { bindingsFor } from '../runtimes/hook-map.js';
import { RUNTIME_IDS, runtimeModule } from '../runtimes/index.js';
import { eventsDbPathOf, rejectedDirOf, spoolDirOf } from '../state-dir.js';
import { isSidecarName } from '../sidecar/files.js';
import { LIVE_LOG_NAME } from '../log/spool-log.js';
import { readDrainedLists } from '../log/drained-lists.js';
import { isSpoolFileName } from '../log/spool-event.js';
import { readRegularText } from '../regular-file.js';
import { lstatOrNull } from '../install/files.js';
import { DRIVER_FIX, driverErrorLine, isDriverLoadError } from '../log/connection.js';

export interface DoctorContext {
  /** The repository the kit is installed in, or null outside one. */
  repo: string | null;
  stateDir: string;
  sidecarDir: string;
  env: NodeJS.ProcessEnv;
  now: number;
}

const ok = (name: string, detail: string): Check => ({ name, status: 'ok', detail });
const warn = (name: string, detail: string, fix: string): Check => ({ name, status: 'warn', detail, fix });
const fail = (name: string, detail: string, fix: string): Check => ({ name, status: 'fail', detail, fix });

export function checkNode(version = process.versions.node): Check {
  const major = Number(version.split('.')[0]);
  return major >= 20 ? ok('node', `v${version}`) : fail('node', `v${version}`, 'install Node.js 20 or newer');
}

/** The oldest bash the hooks run on: 3.2, every Mac's /bin/bash (Apple ships no newer one). */
export const MIN_BASH: readonly [number, number] = [3, 2];
const BASH_FIX =
  "install bash 3.2 or newer and put it first on PATH: the registered hooks run the first `bash` on PATH (every macOS has 3.2 as /bin/bash; elsewhere your package manager's bash)";

/**
 * bash as the registered hooks find it (the first `bash` on `env.PATH`) and git. bash 3.2 or newer
 * is ok; older, missing, or a `bash` that does not say its version fails with the fix.
 */
export function checkTools(env: NodeJS.ProcessEnv = process.env): Check {
  const name = 'bash and git';
  const bash = spawnSync('bash', ['-c', 'printf "%s %s %s\\n" "${BASH_VERSINFO[0]}" "${BASH_VERSINFO[1]}" "$BASH_VERSION"'], {
    encoding: 'utf8',
    env: { ...env, BASH_ENV: '' }, // as the registrations run it: no startup file
    // stdin not a socket (Node's pipes are socketpairs): bash 3.2 takes a `bash -c` whose stdin is a
    // socket for one started by rshd, and reads ~/.bashrc, which could print anything.
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 10_000,
  });
  if ((bash.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return fail(name, 'bash not found on PATH', BASH_FIX);
  if (bash.error || bash.status === null) return fail(name, `\`bash\` on PATH did not run (${bash.error?.message ?? `signal ${bash.signal}`})`, BASH_FIX);
  const seen = /^(\d+) (\d+) (\S+)\n?$/.exec(bash.stdout ?? '');
  if (bash.status !== 0 || !seen) return fail(name, `\`bash\` on PATH does not say its version (exit ${bash.status})`, BASH_FIX);
  const [major, minor, version] = [Number(seen[1]), Number(seen[2]), seen[3] as string];
  if (major < MIN_BASH[0] || (major === MIN_BASH[0] && minor < MIN_BASH[1])) {
    return fail(name, `bash ${version} is older than ${MIN_BASH.join('.')}, the oldest the hooks run on`, BASH_FIX);
  }
  const git = spawnSync('git', ['--version'], { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 });
  if (git.error || git.status !== 0) return fail(name, `bash ${version}; git not found`, 'install git');
  return ok(name, `bash ${version}, ${git.stdout.trim()}`);
}

const HOOK_FILES = ['reflect-stop-hook.sh', 'reflect-event-hook.sh', 'lib/common.sh', 'lib/fallback-sidecar.sh', 'lib/risk-table.sh', 'lib/reflect-helper.cjs'];
const EXECUTABLE = new Set(['reflect-stop-hook.sh', 'reflect-event-hook.sh']);

export function checkHooks(ctx: DoctorContext): Check {
  const name = 'hooks vendored';
  if (ctx.repo === null) return fail(name, 'not inside a git repository', 'run doctor inside the repository, or pass --repo DIR');
  const dir = join(ctx.repo, VENDORED_DIR);
  const problems: string[] = [];
  for (const rel of HOOK_FILES) {
    const path = join(dir, rel);
    try {
      const stats = statSync(path);
      if (!stats.isFile()) problems.push(`${rel} is not a file`);
      else if (EXECUTABLE.has(rel) && (stats.mode & 0o111) === 0) problems.push(`${rel} is not executable`);
    } catch {
      problems.push(`${rel} is missing`);
    }
  }
  if (problems.length > 0) return fail(name, `${VENDORED_DIR}: ${problems.join('; ')}`, `forge-reflect install --repo ${ctx.repo}`);
  const helper = spawnSync(process.execPath, [join(dir, 'lib/reflect-helper.cjs')], { encoding: 'utf8', env: {}, timeout: 10_000 });
  if (helper.status !== 2) return fail(name, `the node helper does not load (exit ${helper.status})`, `forge-reflect install --repo ${ctx.repo}`);
  return ok(name, `${VENDORED_DIR}: ${HOOK_FILES.length} files, scripts executable, node helper loads`);
}

/** Every hook command of a settings file that points into the vendored folder. */
function ourCommands(settings: unknown): Array<{ event: string; command: string }> {
  const out: Array<{ event: string; command: string }> = [];
  const hooks = (settings as { hooks?: unknown } | null)?.hooks;
  if (typeof hooks !== 'object' || hooks === null) return out;
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    for (const group of groups) {
      const handlers = (group as { hooks?: unknown })?.hooks;
      if (!Array.isArray(handlers)) continue;
      for (const h of handlers) {
        const command = (h as { command?: unknown })?.command;
        if (typeof command === 'string' && command.includes(VENDORED_DIR)) out.push({ event, command });
      }
    }
  }
  return out;
}

/**
 * One check per runtime whose files hold a registration of ours (every installed runtime), then
 * that runtime's own checks (trust). A file that is not valid JSON fails: the runtime runs none of
 * its hooks. No registration anywhere fails.
 */
export function checkRegistrations(ctx: DoctorContext): Check[] {
  const name = 'hook registrations';
  if (ctx.repo === null) return [fail(name, 'not inside a git repository', 'run doctor inside the repository, or pass --repo DIR')];
  const repo = ctx.repo;
  const checks: Check[] = [];
  for (const id of RUNTIME_IDS) {
    const module = runtimeModule(id);
    // Registered by hook files (Cline): the module checks its own files, when any is there.
    const hookFiles = module.hookFiles?.();
    if (hookFiles) {
      if (hookFiles.some((f) => lstatOrNull(join(repo, f.rel)) !== null)) checks.push(...module.doctorChecks(repo, ctx.env));
      continue;
    }
    const label = `${id} hooks`;
    const wanted = bindingsFor(id).map((b) => b.event);
    const current = registrationCommands(loadRegistration(id));
    const found: Array<{ event: string; command: string; file: string }> = [];
    const unreadable: string[] = [];
    for (const rel of module.registrationFiles) {
      let text: string;
      try {
        text = readRegularText(join(repo, rel));
      } catch {
        continue;
      }
      try {
        for (const c of ourCommands(JSON.parse(text))) found.push({ ...c, file: rel });
      } catch {
        unreadable.push(rel);
      }
    }
    if (unreadable.length > 0) {
      checks.push(fail(label, `${unreadable.join(', ')} is not valid JSON: ${module.label} runs none of its hooks`, `fix the JSON in ${unreadable[0]}`));
      continue;
    }
    if (found.length === 0) continue;
    const dangling = found.filter((f) => {
      const script = /\.claude\/hooks\/forge-reflect\/([\w.-]+\.sh)/.exec(f.command.replace(/["']/g, ''))?.[1];
      if (script === undefined) return true;
      try {
        accessSync(join(repo, VENDORED_DIR, script), id === 'claude-code' ? constants.X_OK : constants.R_OK);
        return false;
      } catch {
        return true;
      }
    });
    const missing = wanted.filter((e) => !found.some((f) => f.event === e && current.has(f.command)));
    const stale = found.filter((f) => !current.has(f.command));
    const files = [...new Set(found.map((f) => f.file))].join(' and ');
    const reinstall = `forge-reflect install --runtime ${id} --repo ${repo}`;
    if (dangling.length > 0) {
      checks.push(fail(label, `${dangling.length} registration(s) point at a missing script (${dangling[0]?.event} in ${dangling[0]?.file})`, reinstall));
    } else if (stale.length > 0) {
      checks.push(warn(label, `${stale.length} registration(s) in ${files} are from an older kit (${stale[0]?.event})`, `${reinstall} replaces them`));
    } else if (missing.length > 0) {
      checks.push(warn(label, `not registered for ${missing.join(', ')} in ${files}`, `${reinstall} adds them`));
    } else {
      checks.push(ok(label, `${wanted.length} events registered in ${files}`));
    }
    checks.push(...module.doctorChecks(repo, ctx.env));
  }
  if (checks.length === 0) {
    const all = RUNTIME_IDS.flatMap((id) => runtimeModule(id).registrationFiles).join(', ');
    return [fail(name, `none in ${all}`, `forge-reflect install --repo ${repo} (add --runtime codex or --runtime gemini for those)`)];
  }
  return checks;
}

export function checkMode(ctx: DoctorContext): Check {
  const mode = ctx.env.REFLECTION_MODE;
  if (mode === 'solo' || mode === 'orchestrated') return ok('REFLECTION_MODE', mode);
  const seen = mode === undefined ? 'unset' : JSON.stringify(mode);
  return warn('REFLECTION_MODE', `${seen}: the hooks do nothing`, 'export REFLECTION_MODE=solo where you start the agent');
}

export function checkStateDir(ctx: DoctorContext): Check {
  const name = 'state folder';
  let stats;
  try {
    stats = lstatSync(ctx.stateDir);
  } catch {
    return warn(name, `${ctx.stateDir} does not exist yet`, 'it is created by the first hook run or forge-reflect command');
  }
  if (stats.isSymbolicLink())
    return fail(
      name,
      `${ctx.stateDir} is a symbolic link; the hooks refuse to write through it`,
      'replace the link with a real folder, or set FORGE_DIR to one',
    );
  if (!stats.isDirectory()) return fail(name, `${ctx.stateDir} is not a folder`, 'move it aside, or set FORGE_DIR to a folder');
  try {
    accessSync(ctx.stateDir, constants.W_OK);
  } catch {
    return fail(name, `${ctx.stateDir} is not writable`, `chmod u+w ${ctx.stateDir}, or set FORGE_DIR to a writable folder`);
  }
  const open = (stats.mode & 0o077) !== 0;
  return open
    ? warn(name, `${ctx.stateDir} is readable by others (mode ${(stats.mode & 0o777).toString(8)})`, `chmod 700 ${ctx.stateDir}`)
    : ok(name, `${ctx.stateDir} (writable, 0700)`);
}

function countFiles(dir: string, suffix: string): number {
  try {
    return readdirSync(dir).filter((n) => n.endsWith(suffix) && !n.startsWith('.')).length;
  } catch {
    return 0;
  }
}

/** Bytes in the spool log not yet sealed by a drain (docs/spool-format.md). */
function liveLogBytes(stateDir: string): number {
  try {
    return statSync(join(spoolDirOf(stateDir), LIVE_LOG_NAME)).size;
  } catch {
    return 0;
  }
}

/** Spool files waiting for a drain: not those an earlier drain committed and listed for its remover. */
function countWaiting(spool: string, now: number): number {
  try {
    const names = readdirSync(spool);
    const listed = readDrainedLists(spool, [], now).names;
    return names.filter((n) => isSpoolFileName(n) && !listed.has(n)).length;
  } catch {
    return 0;
  }
}

export function checkSpool(ctx: DoctorContext): Check {
  const backlog = countWaiting(spoolDirOf(ctx.stateDir), ctx.now);
  const rejected = countFiles(rejectedDirOf(ctx.stateDir), '.event');
  const logBytes = liveLogBytes(ctx.stateDir);
  const inLog = logBytes > 0 ? ` + ${Math.ceil(logBytes / 1024)} KiB of spool log` : '';
  const detail = `${backlog} event file(s)${inLog} waiting, ${rejected} rejected`;
  if (rejected > 0) return warn('spool', detail, `read the .reason files in ${rejectedDirOf(ctx.stateDir)}`);
  if (backlog > 10_000) return warn('spool', detail, 'forge-reflect ingest');
  return ok('spool', detail);
}

export function checkLastSidecar(ctx: DoctorContext): Check {
  let newest = 0;
  try {
    for (const n of readdirSync(ctx.sidecarDir)) {
      if (!isSidecarName(n)) continue;
      newest = Math.max(newest, statSync(join(ctx.sidecarDir, n)).mtimeMs);
    }
  } catch {
    // no folder yet: reported below
  }
  if (newest === 0) return warn('last sidecar', `none in ${ctx.sidecarDir}`, 'with REFLECTION_MODE=solo, finish an agent turn (or run forge-reflect demo)');
  const minutes = Math.max(0, Math.round((ctx.now - newest) / 60_000));
  const age = minutes < 120 ? `${minutes} min` : minutes < 2880 ? `${Math.round(minutes / 60)} h` : `${Math.round(minutes / 1440)} days`;
  return ok('last sidecar', `${age} ago`);
}

/**
 * better-sqlite3 loads (checked even before there is a log: pnpm 10 skips its native build unless
 * approved, and the first drain would fail), then SQLite's quick_check of the event log, read-only.
 */
export async function checkEventLog(ctx: DoctorContext): Promise<Check> {
  const name = 'event log';
  const path = eventsDbPathOf(ctx.stateDir);
  let Driver: typeof import('better-sqlite3');
  try {
    const { createRequire } = await import('node:module');
    Driver = createRequire(import.meta.url)('better-sqlite3') as typeof import('better-sqlite3');
    new Driver(':memory:').close(); // the package loads without its addon; a Database loads the addon
  } catch (error) {
    if (!isDriverLoadError(error)) throw error;
    return fail(
      name,
      `better-sqlite3, the log's driver, cannot load (${driverErrorLine(error)}): its native build is missing, so nothing drains the spool into ${path}`,
      DRIVER_FIX,
    );
  }
  try {
    // SQLite would open a FIFO in the log's place and wait for ever at its first read.
    if (!statSync(path).isFile()) return fail(name, `${path} is not a regular file`, 'forge-reflect doctor --repair moves it aside and starts a fresh log');
  } catch {
    return ok(name, `${path} not created yet (better-sqlite3 loads)`);
  }
  try {
    const db = new Driver(path, { readonly: true, fileMustExist: true, timeout: 5_000 });
    try {
      const result = db.pragma('quick_check', { simple: true });
      const count = (db.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n;
      if (result !== 'ok') return fail(name, `quick_check: ${String(result)}`, 'forge-reflect doctor --repair moves it aside and starts a fresh log');
      return ok(name, `${path}: quick_check ok, ${count} events`);
    } finally {
      db.close();
    }
  } catch (error) {
    const message = (error as Error).message;
    return fail(name, `${path} is not a usable database (${message})`, 'forge-reflect doctor --repair moves it aside and starts a fresh log');
  }
}
