/** The runtime modules, and reading `--runtime` values. */
import { usageError } from '../errors.js';
import { claudeCode } from './claude-code.js';
import { codex } from './codex.js';
import { gemini } from './gemini.js';
import { qwen } from './qwen.js';
import { cline } from './cline.js';
import { opencode } from './opencode.js';
import { copilot } from './copilot.js';
import { RUNTIME_IDS, type RuntimeId } from './hook-map.js';
import type { RuntimeModule } from './module.js';

export const RUNTIME_MODULES: Readonly<Record<RuntimeId, RuntimeModule>> = { 'claude-code': claudeCode, codex, gemini, qwen, cline, opencode, copilot };

export function runtimeModule(id: RuntimeId): RuntimeModule {
  return RUNTIME_MODULES[id];
}

/**
 * `--runtime` values (repeatable, comma lists allowed, `all`) → runtime ids in canonical order,
 * each once. Nothing given: the default. An unknown name is a usage error listing the supported ones.
 */
export function parseRuntimes(value: unknown, fallback: readonly RuntimeId[] = ['claude-code']): RuntimeId[] {
  if (value === undefined || value === null) return [...fallback];
  const given = (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(',')).map((v) => v.trim());
  const chosen = new Set<RuntimeId>();
  for (const name of given) {
    if (name === 'all') RUNTIME_IDS.forEach((id) => chosen.add(id));
    else if ((RUNTIME_IDS as readonly string[]).includes(name)) chosen.add(name as RuntimeId);
    else throw usageError(`--runtime ${JSON.stringify(name)} is not a supported runtime; use ${RUNTIME_IDS.join(', ')} or all (repeat --runtime for several)`);
  }
  if (chosen.size === 0) throw usageError(`--runtime needs a value: ${RUNTIME_IDS.join(', ')} or all`);
  return RUNTIME_IDS.filter((id) => chosen.has(id));
}

export { RUNTIME_IDS, type RuntimeId, type RuntimeModule };
