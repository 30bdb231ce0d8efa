/**
 * What install and uninstall plan before touching anything: the steps to report, the writes to
 * make once every check has passed (in order), and the notes. --dry-run makes none of the writes.
 */
import type { Step } from './report.js';

export type Write = () => void;

export interface Plan {
  steps: Step[];
  writes: Write[];
  notes: string[];
}

export function emptyPlan(): Plan {
  return { steps: [], writes: [], notes: [] };
}

export function applyPlan(plan: Plan, dryRun: boolean): void {
  if (!dryRun) for (const write of plan.writes) write();
}
