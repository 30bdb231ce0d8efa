/**
 * Which part of a metrics window is read from the rollups and which from the events (planWindow):
 * whole days and hours from log/rollups.ts's tables, the two partial edge hours from the events,
 * so every count is exact. Pure.
 */

/**
 * A window [since, until] as read from the rollups: whole days [dayLo, dayHi), whole hours
 * [h1Lo, h1Hi) and [h2Lo, h2Hi) around them, and the partial edge hours from the events:
 * [r1Lo, r1Hi) and [r2Lo, r2Hi] by `ts`. An empty range is ('', ''). `since` and `until` are in
 * the log's format (`YYYY-MM-DDTHH:MM:SS.ffffffZ`); anything else is read from the events alone.
 */
export interface WindowPlan {
  dayLo: string;
  dayHi: string;
  h1Lo: string;
  h1Hi: string;
  h2Lo: string;
  h2Hi: string;
  r1Lo: string;
  r1Hi: string;
  r2Lo: string;
  r2Hi: string;
}

const LOG_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const HOUR_MS = 3_600_000;
const nextHour = (hour: string): string => new Date(Date.parse(`${hour}:00:00Z`) + HOUR_MS).toISOString().slice(0, 13);
const nextDay = (day: string): string => new Date(Date.parse(`${day}T00:00:00Z`) + 24 * HOUR_MS).toISOString().slice(0, 10);

export function planWindow(since: string, until: string): WindowPlan {
  const none = { dayLo: '', dayHi: '', h1Lo: '', h1Hi: '', h2Lo: '', h2Hi: '', r1Lo: '', r1Hi: '' };
  if (!LOG_TIME.test(since) || !LOG_TIME.test(until)) return { ...none, r2Lo: since, r2Hi: until };
  // Whole hours: from the first hour starting at or after `since` up to (not including) the hour of `until`.
  const hourLo = since.slice(13) === ':00:00.000000Z' ? since.slice(0, 13) : nextHour(since.slice(0, 13));
  const hourHi = until.slice(0, 13);
  if (!(hourLo < hourHi)) return { ...none, r2Lo: since, r2Hi: until };
  const plan: WindowPlan = { ...none, h1Lo: hourLo, h1Hi: hourHi, r1Lo: since, r1Hi: hourLo, r2Lo: hourHi, r2Hi: until };
  const dayLo = hourLo.endsWith('T00') ? hourLo.slice(0, 10) : nextDay(hourLo.slice(0, 10));
  const dayHi = hourHi.slice(0, 10);
  if (dayLo < dayHi) {
    plan.dayLo = dayLo;
    plan.dayHi = dayHi;
    plan.h1Hi = `${dayLo}T00`;
    plan.h2Lo = `${dayHi}T00`;
    plan.h2Hi = hourHi;
  }
  return plan;
}
