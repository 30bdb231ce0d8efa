/**
 * One headless GitHub Copilot CLI session (`copilot -p "prompt" --allow-all-tools`) in a scratch
 * repo against the loopback Chat Completions mock: its own HOME (so its own ~/.copilot), BYOK
 * provider `openai` at the mock, COPILOT_OFFLINE=true (without it Copilot looks up api.github.com),
 * no GitHub token, telemetry, auto-update, built-in MCP servers and remote off. The folder is trusted
 * with --trust-folder unless `trust` is false (an untrusted folder runs no repo hook). The unpacked
 * runtime is cached beside the client, so each session's fresh HOME does not unpack it again.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ensureClient } from './clients.js';
import { runProcess, type ProcessResult } from './run-claude.js';
import { baseEnv } from './scratch.js';

export interface CopilotRun extends ProcessResult {
  /** From the `copilot --resume=<id>` line stdout ends with. */
  sessionId: string | undefined;
  home: string;
  /** Copilot's debug log (all files of --log-dir). */
  log: string;
  /** The session's own transcript (events.jsonl), as Copilot left it. */
  transcript: string;
}

export async function runCopilot(options: { cwd: string; mockUrl: string; prompt: string; env?: NodeJS.ProcessEnv; trust?: boolean }): Promise<CopilotRun> {
  const copilot = ensureClient('copilot');
  const home = mkdtempSync(join(tmpdir(), 'forge-e2e-copilot-'));
  const logDir = join(home, 'logs');
  mkdirSync(logDir, { recursive: true });
  const env = baseEnv({
    HOME: home,
    TERM: 'dumb',
    COPILOT_OFFLINE: 'true',
    COPILOT_PROVIDER_BASE_URL: `${options.mockUrl}/v1`,
    COPILOT_PROVIDER_TYPE: 'openai',
    COPILOT_MODEL: 'gpt-4.1',
    COPILOT_AUTO_UPDATE: 'false',
    COPILOT_CACHE_HOME: join(dirname(dirname(dirname(copilot))), 'copilot-cache'),
    ...options.env,
  });
  for (const key of Object.keys(env)) {
    if (/^(GH_|GITHUB_|COPILOT_GITHUB_TOKEN$|COPILOT_HOME$|COPILOT_ALLOW_ALL$|COPILOT_CLI|COPILOT_PROJECT_DIR$)/.test(key)) delete env[key];
  }
  const args = [
    '-p',
    options.prompt,
    '--allow-all-tools',
    '--no-auto-update',
    '--disable-client-telemetry',
    '--disable-builtin-mcps',
    '--no-remote',
    '--no-ask-user',
    '--no-custom-instructions',
    '--log-dir',
    logDir,
    '--log-level',
    'debug',
  ];
  if (options.trust !== false) args.push('--trust-folder');
  const r = await runProcess(copilot, args, options.cwd, env, 240_000);
  // The session's folder in ~/.copilot/session-state (stdout names it too, in its resume hint).
  const stateDir = join(home, '.copilot', 'session-state');
  const sessions = existsSync(stateDir) ? readdirSync(stateDir) : [];
  const sessionId = /--resume=([0-9a-f-]{36})/.exec(r.stdout + r.stderr)?.[1] ?? (sessions.length === 1 ? sessions[0] : undefined);
  const log = readdirSync(logDir)
    .map((n) => readFileSync(join(logDir, n), 'utf8'))
    .join('\n');
  const transcriptPath = sessionId ? join(home, '.copilot', 'session-state', sessionId, 'events.jsonl') : '';
  const transcript = transcriptPath && existsSync(transcriptPath) ? readFileSync(transcriptPath, 'utf8') : '';
  return { ...r, sessionId, home, log, transcript };
}
