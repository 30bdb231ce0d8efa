/**
 * One headless Codex CLI session (`codex exec`) in a scratch repo against the loopback mock: its
 * own CODEX_HOME whose config.toml points a custom provider at the mock, trusts the project, and
 * turns off the update check, analytics, OpenTelemetry and plugins (which would look up GitHub).
 * `--dangerously-bypass-hook-trust` stands in for the one-time hook review of the interactive TUI.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureClient } from './clients.js';
import { runProcess, type ProcessResult } from './run-claude.js';
import { baseEnv } from './scratch.js';

export interface CodexRun extends ProcessResult {
  sessionId: string | undefined;
  home: string;
}

export async function runCodex(options: { cwd: string; mockUrl: string; prompt: string; env?: NodeJS.ProcessEnv }): Promise<CodexRun> {
  const codex = ensureClient('codex');
  const home = mkdtempSync(join(tmpdir(), 'forge-e2e-codex-'));
  const codexHome = join(home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  // TOML basic strings take JSON's escapes for these paths and URLs.
  writeFileSync(
    join(codexHome, 'config.toml'),
    [
      'model = "gpt-5.5"',
      'model_provider = "mock"',
      'check_for_update_on_startup = false',
      '',
      '[model_providers.mock]',
      'name = "mock"',
      `base_url = ${JSON.stringify(`${options.mockUrl}/v1`)}`,
      'env_key = "MOCK_API_KEY"',
      'wire_api = "responses"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[otel]',
      'exporter = "none"',
      '',
      '[features]',
      'plugins = false',
      '',
      `[projects.${JSON.stringify(options.cwd)}]`,
      'trust_level = "trusted"',
      '',
    ].join('\n'),
  );
  const env = baseEnv({ HOME: home, CODEX_HOME: codexHome, MOCK_API_KEY: 'mock-not-a-real-key', ...options.env });
  const r = await runProcess(
    codex,
    ['exec', '--sandbox', 'workspace-write', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', options.prompt],
    options.cwd,
    env,
    180_000,
  );
  const sessionId = /session id: ([0-9a-f-]{36})/.exec(r.stderr + r.stdout)?.[1];
  return { ...r, sessionId, home };
}
