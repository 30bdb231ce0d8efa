/**
 * One headless Gemini CLI session (`gemini -p … --yolo`) in a scratch repo against the loopback
 * mock: its own HOME whose user settings choose API-key auth and turn off usage statistics,
 * telemetry and auto-update; the workspace is trusted for the run (GEMINI_CLI_TRUST_WORKSPACE),
 * so the project's .gemini/settings.json, and with it the kit's hooks, is loaded.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureClient } from './clients.js';
import { runProcess, type ProcessResult } from './run-claude.js';
import { baseEnv } from './scratch.js';

export interface GeminiRun extends ProcessResult {
  sessionId: string | undefined;
}

export async function runGemini(options: { cwd: string; mockUrl: string; prompt: string; env?: NodeJS.ProcessEnv }): Promise<GeminiRun> {
  const gemini = ensureClient('gemini');
  const home = mkdtempSync(join(tmpdir(), 'forge-e2e-gemini-'));
  mkdirSync(join(home, '.gemini'), { recursive: true });
  writeFileSync(
    join(home, '.gemini', 'settings.json'),
    JSON.stringify({
      security: { auth: { selectedType: 'gemini-api-key' } },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    }),
  );
  const env = baseEnv({
    HOME: home,
    GEMINI_API_KEY: 'mock-not-a-real-key',
    GOOGLE_GEMINI_BASE_URL: options.mockUrl,
    GEMINI_TELEMETRY_ENABLED: 'false',
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    ...options.env,
  });
  const r = await runProcess(gemini, ['-p', options.prompt, '--yolo', '--output-format', 'json'], options.cwd, env, 180_000);
  let sessionId: string | undefined;
  try {
    sessionId = (JSON.parse(r.stdout.slice(r.stdout.indexOf('{'))) as { session_id?: string }).session_id;
  } catch {
    sessionId = undefined;
  }
  return { ...r, sessionId };
}
