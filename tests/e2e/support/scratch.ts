/**
 * Scratch repositories for the real-client suite, in a temp folder whose path holds a space, with
 * the kit installed the way a user installs it: the packed tarball as a devDependency, then the
 * project's own `node_modules/.bin/forge-reflect install`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { packKit } from './kit.js';

export interface ScratchRepo {
  dir: string;
  git(...args: string[]): string;
  write(rel: string, text: string): void;
  cli(args: string[], env?: NodeJS.ProcessEnv): { status: number | null; stdout: string; stderr: string };
  cleanup(): void;
}

const GIT_IDENTITY = ['-c', 'user.email=e2e@forge-reflect.invalid', '-c', 'user.name=e2e', '-c', 'commit.gpgsign=false'];

/** A clean environment for child processes: none of the runner's kit settings leak in. */
export function baseEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(REFLECTION_|FORGE_|CLAUDE|ANTHROPIC_|OPENAI_|GEMINI_|GOOGLE_|CODEX_|NODE_OPTIONS$|NODE_EXTRA_CA_CERTS$)/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/** A template repo with the kit installed, built once per run (global setup) and copied for each test. */
let template: string | undefined = process.env.FORGE_E2E_TEMPLATE;

export function templateRepo(): string {
  if (template && existsSync(template)) return template;
  const dir = join(mkdtempSync(join(tmpdir(), 'forge e2e template ')), 'repo');
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', [...GIT_IDENTITY, ...args], { cwd: dir, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'README.md'), '# scratch\n');
  writeFileSync(join(dir, 'package.json'), '{\n  "name": "scratch",\n  "version": "1.0.0",\n  "private": true\n}\n');
  writeFileSync(join(dir, '.gitignore'), 'node_modules/\n');
  execFileSync('npm', ['install', '--save-dev', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', packKit()], {
    cwd: dir,
    env: baseEnv(),
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 600_000,
  });
  git('add', '-A');
  git('commit', '-q', '-m', 'scratch project with forge-reflect as a devDependency');
  template = dir;
  process.env.FORGE_E2E_TEMPLATE = dir;
  return dir;
}

/**
 * Removes a scratch tree that the Stop hook's detached drain (`forge-reflect ingest`, started once
 * the hook has exited) may still be writing in. rmSync's own retries list a folder's children once
 * and then only retry the folder's rmdir, so one file the drain creates after that listing (its
 * event log, say) failed every retry (seen in CI: 52 s of retries, then ENOTEMPTY). Each attempt
 * here removes the tree anew, until the drain is done with it (20 s at most).
 */
function removeWhileWritten(path: string): void {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      rmSync(path, { recursive: true, force: true });
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ENOTEMPTY' && code !== 'EBUSY') || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
}

export function makeScratchRepo(): ScratchRepo {
  const parent = mkdtempSync(join(tmpdir(), 'forge e2e '));
  const dir = join(parent, 'my project');
  cpSync(templateRepo(), dir, { recursive: true, verbatimSymlinks: true });
  const repo: ScratchRepo = {
    dir,
    git: (...args) => execFileSync('git', [...GIT_IDENTITY, ...args], { cwd: dir, encoding: 'utf8' }),
    write: (rel, text) => {
      mkdirSync(dirname(join(dir, rel)), { recursive: true });
      writeFileSync(join(dir, rel), text);
    },
    cli: (args, env = {}) => {
      const r = spawnSync(join(dir, 'node_modules', '.bin', 'forge-reflect'), args, { cwd: dir, env: baseEnv(env), encoding: 'utf8', timeout: 120_000 });
      return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
    },
    cleanup: () => removeWhileWritten(parent),
  };
  return repo;
}

/** `forge-reflect install` for each runtime, left uncommitted: the session must not be blamed for it. */
export function installKit(repo: ScratchRepo, runtimes: string[] = ['claude-code']): void {
  const help = repo.cli(['install', '--help']).stdout;
  for (const runtime of runtimes) {
    const args = help.includes('--runtime') ? ['install', '--runtime', runtime] : ['install'];
    const r = repo.cli(args);
    if (r.status !== 0) throw new Error(`forge-reflect ${args.join(' ')} failed (${r.status}): ${r.stderr}${r.stdout}`);
  }
}
