/**
 * The loops' clock. Commands take `--now TIME`, else the `FORGE_NOW` environment variable, else
 * the system clock; tests pin it so confidence decay and metric windows are exact.
 */
import { usageError } from '../errors.js';
import { isoMicros, parseSince, SINCE_EXAMPLE } from '../since.js';

export function resolveNow(args: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): number {
  const given = args.now !== undefined ? { from: '--now', text: String(args.now) } : env.FORGE_NOW ? { from: 'FORGE_NOW', text: env.FORGE_NOW } : undefined;
  if (given === undefined) return Date.now();
  const iso = parseSince(given.text, Date.now());
  if (iso === undefined || /^\d+\s*[smhdw]$/i.test(given.text.trim())) {
    throw usageError(`${given.from} ${JSON.stringify(given.text)} is not an ISO-8601 time; use e.g. 2025-11-22T10:00:00Z`);
  }
  return Date.parse(iso);
}

/** A time option (`--at`): ISO-8601 or an age before `now`. */
export function parseTimeOption(flag: string, value: unknown, now: number): string {
  const iso = parseSince(String(value), now);
  if (iso === undefined) throw usageError(`--${flag} ${JSON.stringify(String(value))} is not a time; use ${SINCE_EXAMPLE.replace(/--since/g, `--${flag}`)}`);
  return iso;
}

export { isoMicros };
