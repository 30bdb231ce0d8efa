/**
 * Whether the `ingest` that follows a Stop also exports: with `export.endpoint` in
 * `.forge/config.json`, or with an OTLP endpoint in the environment and `FORGE_EXPORT=on`.
 * `FORGE_EXPORT=off` turns it off either way. Free of OpenTelemetry code, so `ingest` can ask
 * cheaply and import the exporter only when the answer is yes.
 */
import { configPathOf } from '../state-dir.js';
import { hasEndpoint, type ExportConfig } from './otlp-config.js';
import { readRegularText } from '../regular-file.js';

/** How long the automatic export may take, retries included. */
export const AUTO_EXPORT_BUDGET_MS = 20_000;

/** The `export` object of `<state dir>/config.json` ({} when absent or unreadable). */
export function readExportConfig(stateDir: string): ExportConfig {
  try {
    const parsed = JSON.parse(readRegularText(configPathOf(stateDir))) as unknown;
    const e = parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>).export : undefined;
    return e !== null && typeof e === 'object' && !Array.isArray(e) ? (e as ExportConfig) : {};
  } catch {
    return {};
  }
}

export function autoExportEnabled(config: ExportConfig, env: NodeJS.ProcessEnv): boolean {
  const flag = (env.FORGE_EXPORT ?? '').trim().toLowerCase();
  if (flag === 'off') return false;
  if (typeof config.endpoint === 'string' && config.endpoint.trim() !== '') return true;
  return flag === 'on' && hasEndpoint({}, env, {});
}
