/**
 * One headless Cline CLI task (`cline --json -t 120 "prompt"`) in a scratch repo against the loopback
 * Chat Completions mock, with its own HOME: the provider `openai-compatible` set by `cline auth`
 * (a hand-written providers.json is ignored), telemetry opted out and the feature-flag cache seeded
 * (else it calls otel.cline.bot and data.cline.bot), and the session backend `local` (the default
 * starts a hub daemon that outlives the CLI). TaskComplete runs detached: the run returns once every
 * process carrying the run's mark (the CLI, its hooks, the Stop hook's drain) is gone.
 */
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureClient } from './clients.js';
import { leftRunning, MARK_NAME, newMark, type LeftProcess } from './left-running.js';
import { runProcess, type ProcessResult } from './run-claude.js';
import { baseEnv } from './scratch.js';

export interface ClineRun extends ProcessResult {
  /** The session (`~/.cline/data/sessions/<id>/`), the payloads' sessionContext.rootSessionId. */
  sessionId: string | undefined;
  /** The `run_result` line's text (the final answer) and finish reason. */
  result: string | undefined;
  finishReason: string | undefined;
  /** Processes of the run still there after the wait (killed). */
  left: LeftProcess[];
  home: string;
}

export async function runCline(options: { cwd: string; mockUrl: string; prompt: string; env?: NodeJS.ProcessEnv }): Promise<ClineRun> {
  const cline = ensureClient('cline');
  const home = mkdtempSync(join(tmpdir(), 'forge-e2e-cline-'));
  const data = join(home, '.cline', 'data');
  mkdirSync(join(data, 'settings'), { recursive: true });
  mkdirSync(join(data, 'cache'), { recursive: true });
  writeFileSync(join(data, 'settings', 'global-settings.json'), JSON.stringify({ telemetryOptOut: true }));
  writeFileSync(
    join(data, 'cache', 'feature-flags.json'),
    JSON.stringify({ version: 2, updatedAt: Date.now(), userId: null, flagsPayload: { featureFlags: {}, featureFlagPayloads: {} } }),
  );
  const mark = newMark();
  const env = baseEnv({ HOME: home, CLINE_SESSION_BACKEND_MODE: 'local', [MARK_NAME]: mark, ...options.env });
  for (const key of Object.keys(env)) if (key.startsWith('CLINE_') && key !== 'CLINE_SESSION_BACKEND_MODE') delete env[key];
  const auth = await runProcess(
    cline,
    ['auth', '-p', 'openai-compatible', '-k', 'sk-mock-not-a-real-key', '-m', 'mock-model', '-b', `${options.mockUrl}/v1`],
    options.cwd,
    env,
    60_000,
  );
  if (auth.status !== 0) return { ...auth, sessionId: undefined, result: undefined, finishReason: undefined, left: await leftRunning(mark), home };
  const r = await runProcess(cline, ['--json', '-t', '120', options.prompt], options.cwd, env, 180_000);
  const left = await leftRunning(mark, 60_000);
  let result: string | undefined;
  let finishReason: string | undefined;
  for (const line of r.stdout.split('\n')) {
    try {
      const item = JSON.parse(line) as { type?: string; text?: string; finishReason?: string };
      if (item.type === 'run_result') {
        result = item.text;
        finishReason = item.finishReason;
      }
    } catch {
      // not a JSON line
    }
  }
  let sessionId: string | undefined;
  try {
    sessionId = readdirSync(join(data, 'sessions'))[0];
  } catch {
    sessionId = undefined;
  }
  return { ...r, sessionId, result, finishReason, left, home };
}
