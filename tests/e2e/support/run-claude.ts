/**
 * One headless Claude Code session (`claude -p`) in a scratch repo against the loopback mock, with
 * every switch that keeps the client off the network but for the mock, and its own config home.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureClient } from './clients.js';
import { baseEnv } from './scratch.js';

export interface ClaudeRun {
  status: number | null;
  /** The stream-json items the client printed. */
  items: Record<string, unknown>[];
  stderr: string;
  sessionId: string | undefined;
  configDir: string;
}

export interface ClaudeOptions {
  cwd: string;
  mockUrl: string;
  prompt: string;
  /** 'bypassPermissions' (the default here) or 'default' (the client then refuses calls that need approval). */
  permissionMode?: 'bypassPermissions' | 'default';
  env?: NodeJS.ProcessEnv;
}

/** Asynchronous on purpose: the mock answers from this same process, so the event loop must run. */
export async function runClaude(options: ClaudeOptions): Promise<ClaudeRun> {
  const claude = ensureClient('claude');
  const home = mkdtempSync(join(tmpdir(), 'forge-e2e-home-'));
  const configDir = join(home, '.claude');
  const mode = options.permissionMode ?? 'bypassPermissions';
  const env = baseEnv({
    HOME: home,
    CLAUDE_CONFIG_DIR: configDir,
    ANTHROPIC_BASE_URL: options.mockUrl,
    ANTHROPIC_API_KEY: 'sk-ant-mock-not-a-real-key',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_ERROR_REPORTING: '1',
    ...(mode === 'bypassPermissions' ? { IS_SANDBOX: '1' } : {}),
    ...options.env,
  });
  const r = await runProcess(
    claude,
    ['-p', options.prompt, '--permission-mode', mode, '--output-format', 'stream-json', '--verbose'],
    options.cwd,
    env,
    180_000,
  );
  const items: Record<string, unknown>[] = [];
  for (const line of (r.stdout ?? '').split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    try {
      items.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a partial line: ignored
    }
  }
  const init = items.find((i) => i.type === 'system' && i.subtype === 'init');
  return {
    status: r.status,
    items,
    stderr: `${r.stderr ?? ''}${r.error ? `\n${r.error.message}` : ''}`,
    sessionId: init?.session_id as string | undefined,
    configDir,
  };
}

export interface ProcessResult {
  status: number | null;
  stdout: string;
  stderr: string;
  error?: Error;
}

/** Runs a client to its end (killed after `timeoutMs`), stdin closed, output collected. */
export function runProcess(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<ProcessResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
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
