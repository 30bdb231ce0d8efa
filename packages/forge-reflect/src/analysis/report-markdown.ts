/** The opening every Phase-0 report shares in markdown: its title, the kill condition, the verdict. */
import type { Verdict } from './verdict.js';

export interface VerdictedReport {
  kill_condition: string;
  verdict: Verdict;
  reason: string;
}

/** Lines to start a report with; the kill condition comes before any result, as pre-registered. */
export function markdownOpening(title: string, report: VerdictedReport): string[] {
  return [`# ${title}`, '', `**Kill condition (pre-registered):** ${report.kill_condition}`, '', `**Verdict: ${report.verdict}** — ${report.reason}`, ''];
}
