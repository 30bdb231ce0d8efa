/** Windows such as `14d`, `2w`, `36h`, `90m`: a whole number and a unit. Pure. */
const DURATION = /^(\d{1,6})(m|h|d|w)$/;
const UNIT_MS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

export const WINDOW_EXAMPLE = 'e.g. 14d, 2w or 36h';

/** Milliseconds, or undefined when the text is not a positive duration. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text.trim());
  if (!m) return undefined;
  const ms = Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  return ms > 0 ? ms : undefined;
}

const GIT_AGO = /^(\d{1,6})[ .](second|minute|hour|day|week|month|year)s?[ .]ago$/i;
const AGO_MS: Readonly<Record<string, number>> = {
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 604_800_000,
  month: 2_592_000_000,
  year: 31_536_000_000,
};

/** git's `N days ago` / `N.weeks.ago` forms (a month is 30 days, a year 365, as git counts them). */
export function parseGitAgo(text: string, now: number): number | undefined {
  const m = GIT_AGO.exec(text.trim());
  if (!m) return undefined;
  return now - Number(m[1]) * (AGO_MS[(m[2] as string).toLowerCase()] as number);
}
