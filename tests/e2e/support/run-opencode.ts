/**
 * One headless opencode session (`opencode run --format json`, the prompt on stdin: a positional
 * prompt reaches the model wrapped in quotes) in a scratch repo against the loopback Chat
 * Completions mock, configured through OPENCODE_CONFIG_CONTENT (an openai-compatible provider whose
 * package is bundled in opencode), with its own HOME and XDG folders.
 *
 * Offline: the models.dev fetch and the update, LSP and share checks are switched off, and the URLs
 * opencode would fetch otherwise (its models catalog, the npm registry of its startup
 * `npm install @opencode-ai/plugin`) point at the mock, so any such call is a violation there. That
 * install is skipped where a config folder has node_modules/ and a package-lock.json listing the
 * package: the runner stubs it in the user's config folder, `stubPluginInstall` in a project's
 * `.opencode/` (as after opencode's first start).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureClient } from './clients.js';
import type { ProcessResult } from './run-claude.js';
import { baseEnv } from './scratch.js';

export interface OpencodeRun extends ProcessResult {
  sessionId: string | undefined;
  /** The text parts opencode printed (the answers). */
  text: string;
  home: string;
}

/** What opencode's startup install would leave: the package listed, so it installs nothing. */
export function stubPluginInstall(configDir: string): void {
  mkdirSync(join(configDir, 'node_modules'), { recursive: true });
  writeFileSync(join(configDir, 'package-lock.json'), '{"packages":{"":{"dependencies":{"@opencode-ai/plugin":"1.18.33"}}}}\n');
}

export function opencodeConfig(mockUrl: string): string {
  return JSON.stringify({
    autoupdate: false,
    share: 'disabled',
    provider: {
      mock: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Mock',
        options: { baseURL: `${mockUrl}/v1`, apiKey: 'sk-mock-not-a-real-key' },
        models: { 'mock-model': { name: 'Mock Model', tool_call: true, limit: { context: 128000, output: 8192 } } },
      },
    },
    model: 'mock/mock-model',
    small_model: 'mock/mock-model',
    permission: { edit: 'allow', bash: 'allow' },
  });
}

function runWithStdin(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, input: string, timeoutMs: number): Promise<ProcessResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin.on('error', () => {});
    child.stdin.end(input);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ status: null, stdout, stderr, error });
    });
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

export async function runOpencode(options: { cwd: string; mockUrl: string; prompt: string; env?: NodeJS.ProcessEnv }): Promise<OpencodeRun> {
  const opencode = ensureClient('opencode');
  const home = mkdtempSync(join(tmpdir(), 'forge-e2e-opencode-'));
  const xdg = {
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
  };
  for (const dir of Object.values(xdg)) mkdirSync(dir, { recursive: true });
  stubPluginInstall(join(xdg.XDG_CONFIG_HOME, 'opencode'));
  const env = baseEnv({
    HOME: home,
    ...xdg,
    OPENCODE_CONFIG_CONTENT: opencodeConfig(options.mockUrl),
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_MODELS_URL: `${options.mockUrl}/not-contacted/models`,
    npm_config_registry: `${options.mockUrl}/not-contacted/npm/`,
    NPM_CONFIG_REGISTRY: `${options.mockUrl}/not-contacted/npm/`,
    ...options.env,
  });
  for (const key of Object.keys(env)) if (key === 'OPENCODE' || key === 'OPENCODE_PID' || key === 'OPENCODE_CONFIG' || key === 'INIT_CWD') delete env[key];
  // opencode takes its project folder from PWD, not from its working directory.
  env.PWD = options.cwd;
  const r = await runWithStdin(
    opencode,
    ['run', '--format', 'json', ...(process.env.FORGE_E2E_DEBUG ? ['--print-logs', '--log-level', 'DEBUG'] : [])],
    options.cwd,
    env,
    `${options.prompt}\n`,
    180_000,
  );
  let sessionId: string | undefined;
  let text = '';
  for (const line of r.stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const item = JSON.parse(line) as { type?: string; sessionID?: string; part?: { text?: string } };
      sessionId ??= item.sessionID;
      if (item.type === 'text' && typeof item.part?.text === 'string') text += item.part.text;
    } catch {
      // a partial line
    }
  }
  if (process.env.FORGE_E2E_DEBUG)
    writeFileSync(join(process.env.FORGE_E2E_DEBUG, `opencode-${Date.now()}.log`), `${JSON.stringify(env)}\n${r.stdout}\n${r.stderr}`);
  return { ...r, sessionId, text, home };
}
