/**
 * The Stop hook's Node helper (bundled into hooks/lib/reflect-helper.mjs with its dependencies, so
 * the vendored hook needs no node_modules). The hook gathers the facts with git and bash, calls
 * this to evaluate the risk floor and check the self-report with the real schemas, and falls back
 * to its bash twin when node is missing, fails or is too slow.
 *
 * Input: environment variables FORGE_H_* (set by reflect-stop-hook.sh). Output: the sidecar JSON
 * written to $FORGE_H_OUT (created exclusively, 0600), and one status line on stdout:
 * `ok`, `absent`, or `invalid <reason>` for the self-report. Exit 0 only when the sidecar was written.
 */
import { closeSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { REFLECTION_MODES, type ReflectionMode } from '@forge-reflect/reflection-types';
import { DEFAULT_THRESHOLD, parseThresholdText } from '@forge-reflect/risk-floor';
import { buildSidecar, type SelfReportFile } from './sidecar/build.js';

const SELF_REPORT_MAX_BYTES = 256 * 1024;

function readOrNull(path: string | undefined): string | null {
  if (!path) return null;
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function readSelfReportFile(path: string | undefined): SelfReportFile {
  if (!path) return { kind: 'absent' };
  let size: number;
  try {
    const stats = statSync(path);
    if (!stats.isFile()) return { kind: 'unreadable', reason: 'not a regular file' };
    size = stats.size;
  } catch {
    return { kind: 'absent' };
  }
  if (size > SELF_REPORT_MAX_BYTES) return { kind: 'unreadable', reason: `larger than ${SELF_REPORT_MAX_BYTES} bytes` };
  const text = readOrNull(path);
  return text === null ? { kind: 'unreadable', reason: 'cannot read' } : { kind: 'text', text };
}

function main(env: NodeJS.ProcessEnv): number {
  const out = env.FORGE_H_OUT;
  if (!out) return 2;
  const mode = (REFLECTION_MODES as readonly string[]).includes(env.FORGE_H_MODE ?? '') ? (env.FORGE_H_MODE as ReflectionMode) : 'solo';
  const attempt = Number(env.FORGE_H_ATTEMPT);
  const built = buildSidecar({
    numstat: env.FORGE_H_GIT_OK === '1' ? readOrNull(env.FORGE_H_NUMSTAT) : null,
    untracked: env.FORGE_H_GIT_OK === '1' ? readOrNull(env.FORGE_H_UNTRACKED) : null,
    selfReport: readSelfReportFile(env.FORGE_H_INPUT),
    sessionId: env.FORGE_H_SESSION_ID || 'unknown',
    taskRef: env.FORGE_H_TASK_REF || 'unknown',
    agent: env.FORGE_H_AGENT || 'unknown',
    repo: env.FORGE_H_REPO || 'unknown',
    timestamp: env.FORGE_H_TIMESTAMP ?? new Date().toISOString(),
    mode,
    attempt: Number.isInteger(attempt) && attempt >= 1 ? attempt : 1,
    threshold: parseThresholdText(env.REFLECTION_RISK_THRESHOLD ?? '') ?? DEFAULT_THRESHOLD,
  });
  const fd = openSync(out, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(built.sidecar, null, 2)}\n`);
  } finally {
    closeSync(fd);
  }
  const reason = (built.selfReportReason ?? '').replace(/[\r\n]+/g, ' ').slice(0, 500);
  process.stdout.write(`${built.selfReport}${reason ? ` ${reason}` : ''}\n`);
  return 0;
}

try {
  process.exitCode = main(process.env);
} catch (error) {
  process.stderr.write(`reflect-helper: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
