/**
 * The real clients the suite drives (and pnpm, to install the kit with), pinned, installed once into a cache outside the project's
 * node_modules ($FORGE_E2E_CACHE, else $XDG_CACHE_HOME/forge-reflect/e2e, else ~/.cache/…) and
 * reused. Installing needs the npm registry once; a client that cannot be installed fails the
 * suite, it is never skipped.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const CLIENTS = {
  claude: { pkg: '@anthropic-ai/claude-code', version: '2.1.330', bin: 'claude' },
  codex: { pkg: '@openai/codex', version: '0.169.0', bin: 'codex' },
  gemini: { pkg: '@google/gemini-cli', version: '0.61.0', bin: 'gemini' },
  copilot: { pkg: '@github/copilot', version: '1.0.102', bin: 'copilot' },
  qwen: { pkg: '@qwen-code/qwen-code', version: '0.24.4', bin: 'qwen' },
  opencode: { pkg: 'opencode-ai', version: '1.18.33', bin: 'opencode' },
  cline: { pkg: 'cline', version: '3.0.65', bin: 'cline' },
  // Not an agent: the package manager the pnpm test installs the kit with (10: approval of builds).
  pnpm: { pkg: 'pnpm', version: '10.34.9', bin: 'pnpm' },
} as const;

export type ClientName = keyof typeof CLIENTS;

export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.FORGE_E2E_CACHE) return env.FORGE_E2E_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'forge-reflect', 'e2e');
}

/** The client's folder in the cache: `<cache>/<pkg with / as +>@<version>`. */
export function clientDir(name: ClientName): string {
  const { pkg, version } = CLIENTS[name];
  return join(cacheDir(), `${pkg.replace('/', '+')}@${version}`);
}

/**
 * The client's executable, installed first when it is not in the cache. It is installed into a
 * folder of its own and renamed into place, so runs that start together never share a half install.
 */
export function ensureClient(name: ClientName): string {
  const { pkg, version, bin } = CLIENTS[name];
  const dir = clientDir(name);
  const path = join(dir, 'node_modules', '.bin', bin);
  if (!existsSync(path)) {
    mkdirSync(cacheDir(), { recursive: true });
    const staging = mkdtempSync(`${dir}.installing-`);
    try {
      execFileSync('npm', ['install', '--prefix', staging, '--no-audit', '--no-fund', '--loglevel=error', `${pkg}@${version}`], {
        stdio: ['ignore', 'inherit', 'inherit'],
        timeout: 600_000,
      });
      if (!existsSync(join(staging, 'node_modules', '.bin', bin))) throw new Error(`${pkg}@${version} installed into ${staging} but its ${bin} is missing`);
      if (!existsSync(path)) renameSync(staging, dir);
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return path;
}
