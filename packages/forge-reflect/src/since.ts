/**
 * `--since` values: ISO-8601 (`2025-11-22`, `2025-11-22T10:00Z`, `2025-11-22T10:00:00.5+02:00`)
 * or a relative age (`90s`, `30m`, `2h`, `7d`, `2w`). Pure: `now` is passed in.
 * Returns the instant in the log's `ts` format (UTC, microseconds), or undefined when invalid.
 */

const RELATIVE = /^(\d{1,9})\s*(s|m|h|d|w)$/i;
const UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

export const SINCE_EXAMPLE = '--since 30m, --since 2h, --since 7d or --since 2025-11-22T10:00:00Z';

/** An ISO instant with microseconds: `2025-11-22T10:00:00.000000Z`. */
export function isoMicros(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 23)}000Z`;
}

export function parseSince(text: string, now: number): string | undefined {
  const value = text.trim();
  const relative = RELATIVE.exec(value);
  if (relative) {
    const ms = now - Number(relative[1]) * (UNIT_MS[(relative[2] as string).toLowerCase()] as number);
    return isoMicros(Math.max(ms, 0)); // an age reaching before 1970 means everything
  }
  if (!ISO.test(value)) return undefined;
  const ms = Date.parse(value.replace(' ', 'T'));
  if (Number.isNaN(ms)) return undefined;
  // Date.parse rolls 2025-02-30 over to March; require the calendar date as written.
  const [y, mo, d] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const check = new Date(Date.UTC(y, mo - 1, d));
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d) return undefined;
  return isoMicros(ms);
}
