/**
 * One headless Qwen Code session (`qwen --yolo -o json "prompt"`) in a scratch repo against the
 * loopback Chat Completions mock: its own HOME, whose user settings choose the OpenAI-compatible
 * auth and turn off usage statistics (Aliyun RUM, a DNS lookup by default), telemetry and the
 * update check. `userHooks` go into that HOME's ~/.qwen/settings.json (a user's own registration).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureClient } from './clients.js';
import { runProcess, type ProcessResult } from './run-claude.js';
import { baseEnv } from './scratch.js';

export interface QwenRun extends ProcessResult {
  sessionId: string | undefined;
  /** The `result` element's text (the final answer). */
  result: string | undefined;
  home: string;
}

export async function runQwen(options: {
  cwd: string;
  mockUrl: string;
  prompt: string;
  env?: NodeJS.ProcessEnv;
  userHooks?: Record<string, unknown>;
}): Promise<QwenRun> {
  const qwen = ensureClient('qwen');
  const home = mkdtempSync(join(tmpdir(), 'forge-e2e-qwen-'));
  mkdirSync(join(home, '.qwen'), { recursive: true });
  writeFileSync(
    join(home, '.qwen', 'settings.json'),
    JSON.stringify({
      security: { auth: { selectedType: 'openai' } },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { enableAutoUpdate: false },
      ...(options.userHooks ? { hooks: options.userHooks } : {}),
    }),
  );
  const env = baseEnv({
    HOME: home,
    OPENAI_API_KEY: 'sk-mock-not-a-real-key',
    OPENAI_BASE_URL: `${options.mockUrl}/v1`,
    OPENAI_MODEL: 'mock-model',
    QWEN_USAGE_STATISTICS_ENABLED: 'false',
    QWEN_TELEMETRY_ENABLED: 'false',
    QWEN_CODE_SKIP_UPDATE_CHECK_ONCE: 'true',
    QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
    ...options.env,
  });
  for (const key of Object.keys(env)) if (key.startsWith('QWEN_CODE_SESSION') || key === 'QWEN_PROJECT_DIR') delete env[key];
  const r = await runProcess(qwen, ['--auth-type', 'openai', '--yolo', '--max-wall-time', '150', '-o', 'json', options.prompt], options.cwd, env, 180_000);
  let sessionId: string | undefined;
  let result: string | undefined;
  try {
    const items = JSON.parse(r.stdout.slice(r.stdout.indexOf('['))) as Array<{ type?: string; session_id?: string; result?: string }>;
    const last = items.find((i) => i.type === 'result');
    sessionId = last?.session_id;
    result = last?.result;
  } catch {
    sessionId = undefined;
  }
  return { ...r, sessionId, result, home };
}
