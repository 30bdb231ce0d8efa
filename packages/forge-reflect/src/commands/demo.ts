/**
 * `forge-reflect demo`: the whole kit on an embedded default. In a throwaway git repo it installs
 * the kit with `forge-reflect install`, plays a scripted agent session of realistic payloads through
 * the vendored hooks with REFLECTION_MODE=solo (the agent's self-report is the `reflection` block
 * of its final answer, as the /reflect instructions ask), drains the spool, and prints the report
 * and the events it produced, and where the files are. It needs nothing but the install.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { DEMO_BASE_FILES, demoSession, type DemoStep } from '../demo/session-script.js';
import { drainSpool } from '../log/drain.js';
import { UserError } from '../errors.js';
import { openEventLog } from '../log/event-log.js';
import { painter, useColour, writeJson } from '../output.js';
import { kitPath } from '../paths.js';
import { isSidecarName } from '../sidecar/files.js';

const CLI = kitPath('packages', 'forge-reflect', 'bin', 'forge-reflect.js');
const VENDORED = '.claude/hooks/forge-reflect';

/**
 * The environment of the demo's hooks: the user's, minus every kit setting, plus solo mode. The demo
 * drains the spool itself, so its Stop hook starts no background ingest (one found on PATH would
 * still be writing in the demo's repo when the demo returns).
 */
function hookEnv(repo: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(REFLECTION_|FORGE_)/.test(key)) env[key] = value;
  }
  return { ...env, REFLECTION_MODE: 'solo', CLAUDE_PROJECT_DIR: repo, NO_COLOR: '1', FORGE_REFLECT_CLI: 'off' };
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, input?: string) {
  const result = spawnSync(command, args, { cwd, env, input: input ?? '', encoding: 'utf8', timeout: 60_000 });
  if (result.error) throw new UserError(`demo: cannot run ${command} (${result.error.message})`);
  return result;
}

function gitIn(repo: string, env: NodeJS.ProcessEnv) {
  return (...args: string[]) => {
    const r = run(
      'git',
      ['-c', 'user.name=forge-reflect demo', '-c', 'user.email=demo@forge-reflect.invalid', '-c', 'commit.gpgsign=false', ...args],
      repo,
      env,
    );
    if (r.status !== 0) throw new UserError(`demo: git ${args[0]} failed (${r.stderr.trim()}); is git installed?`);
  };
}

function makeRepo(parent: string, env: NodeJS.ProcessEnv): string {
  mkdirSync(parent, { recursive: true });
  const repo = mkdtempSync(join(parent, 'forge-reflect-demo-'));
  for (const [path, content] of Object.entries(DEMO_BASE_FILES)) {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), content);
  }
  const git = gitIn(repo, env);
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'acme-app: a service with a login flow');
  return repo;
}

interface Played {
  step: string;
  event: string;
  ok: boolean;
}

function play(step: DemoStep, repo: string, env: NodeJS.ProcessEnv): Played {
  for (const [path, content] of Object.entries(step.writes ?? {})) {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), content);
  }
  // As the registration runs them: the event, then the runtime.
  const hook = step.event === 'Stop' ? 'reflect-stop-hook.sh' : 'reflect-event-hook.sh';
  const args = step.event === 'Stop' ? ['claude-code'] : [step.event, 'claude-code'];
  const r = run('bash', [join(repo, VENDORED, hook), ...args], repo, env, JSON.stringify(step.payload));
  // The hook's promise: exit 0 and an empty stdout, always.
  return { step: step.say, event: step.event, ok: r.status === 0 && r.stdout === '' };
}

/** The CLI's own output for a command run against the demo repo's state. */
function cliOutput(repo: string, env: NodeJS.ProcessEnv, args: string[]): string {
  const r = run(process.execPath, [CLI, ...args], repo, { ...env, FORGE_DIR: join(repo, '.forge') });
  if (r.status !== 0) throw new UserError(`demo: forge-reflect ${args[0]} failed (${r.stderr.trim()})`);
  return r.stdout;
}

export async function run_(args: Record<string, unknown>): Promise<number> {
  const env = hookEnv('');
  const repo = makeRepo(resolve(String(args.dir ?? tmpdir())), env);
  const repoEnv = hookEnv(repo);
  const paint = painter(useColour());
  const json = Boolean(args.json);
  const say = (text = '') => {
    if (!json) process.stdout.write(`${text}\n`);
  };

  say(paint.bold('forge-reflect demo: a scripted agent session, played through the real hooks'));
  say(`repo     ${repo}  (a throwaway git repo)`);
  const install = run(process.execPath, [CLI, 'install', '--repo', repo, '--json'], repo, repoEnv);
  if (install.status !== 0) throw new UserError(`demo: install failed (${install.stderr.trim()})`);
  // Committed before the session, as a user would: the session's change is then the agent's alone.
  gitIn(repo, repoEnv)('add', '-A');
  gitIn(repo, repoEnv)('commit', '-q', '-m', 'vendor forge-reflect');
  say(`install  forge-reflect install --repo ${repo}: hooks in ${VENDORED}/, registered in .claude/settings.json (committed)`);
  say(`mode     REFLECTION_MODE=solo (the registration tells the hooks their runtime: claude-code)\n`);

  const played: Played[] = [];
  for (const step of demoSession(repo, join(repo, '.demo-transcript.jsonl'))) {
    const result = play(step, repo, repoEnv);
    played.push(result);
    say(`  ${result.ok ? paint.ok('✓') : paint.bad('✗')} ${step.say.padEnd(52)} ${paint.dim(step.event)}`);
  }
  const stateDir = join(repo, '.forge');
  const drained = drainSpool(stateDir);
  const log = openEventLog(stateDir);
  const byType = log.db.prepare('SELECT type, COUNT(*) AS n FROM events GROUP BY type ORDER BY type').all() as Array<{ type: string; n: number }>;
  const secretsInLog = (log.db.prepare("SELECT COUNT(*) AS n FROM events WHERE payload LIKE '%sk-ant-api03-DEMO%'").get() as { n: number }).n;
  log.close();
  const reflections = join(stateDir, 'reflections');
  const sidecars = readdirSync(reflections).filter(isSidecarName).sort();
  const sidecarPath = sidecars.length > 0 ? join(reflections, sidecars[sidecars.length - 1] as string) : null;
  const broken = played.filter((p) => !p.ok);

  if (json) {
    writeJson({
      repo,
      steps: played,
      drained,
      events_by_type: Object.fromEntries(byType.map((r) => [r.type, r.n])),
      secrets_in_log: secretsInLog,
      sidecar_path: sidecarPath,
      sidecar: sidecarPath ? JSON.parse(readFileSync(sidecarPath, 'utf8')) : null,
    });
  } else {
    say(`\n${paint.bold('report')}  (forge-reflect report)\n`);
    process.stdout.write(cliOutput(repo, repoEnv, ['report']));
    if (sidecarPath) {
      say(`\n${paint.bold('the sidecar')}  (forge-reflect show)\n`);
      process.stdout.write(cliOutput(repo, repoEnv, ['show', sidecarPath]));
    }
    say(`\n${paint.bold('events')}  (forge-reflect events; the prompt's API key was redacted before storing)\n`);
    process.stdout.write(cliOutput(repo, repoEnv, ['events', '--limit', '50']));
    say(`\n${paint.bold('where the files are')}`);
    say(`  sidecars    ${reflections}/`);
    say(`  event log   ${join(stateDir, 'events.db')}`);
    say(`  hooks       ${join(repo, VENDORED)}/`);
    say(`  settings    ${join(repo, '.claude', 'settings.json')}`);
    say(`\nLook around: cd ${repo} && ${process.execPath} ${CLI} report --format markdown`);
    say(`Remove it:   rm -rf ${repo}`);
  }
  if (broken.length > 0 || sidecarPath === null) {
    process.stderr.write(
      `forge-reflect demo: ${broken.length} hook run(s) broke the promise${sidecarPath ? '' : ' and no sidecar was written'}; run forge-reflect doctor\n`,
    );
    return 1;
  }
  return 0;
}

export { run_ as run };
