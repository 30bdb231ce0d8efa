/** How install and uninstall tell what they did (or would do, with --dry-run). */
import { painter, useColour, writeJson } from '../output.js';

export type StepAction = 'create' | 'update' | 'remove' | 'keep';

export interface Step {
  action: StepAction;
  /** Repo-relative, with `/`. */
  path: string;
  detail: string;
}

export function changeCount(steps: readonly Step[]): number {
  return steps.filter((s) => s.action !== 'keep').length;
}

/** `1 change`, `2 changes`. */
export function changesText(changes: number): string {
  return `${changes} change${changes === 1 ? '' : 's'}`;
}

export function dryRunSummary(changes: number): string {
  return `Dry run: ${changesText(changes)} would be made; nothing was written.`;
}

export interface Report {
  command: 'install' | 'uninstall';
  repo: string;
  settings_file: string;
  /** The runtimes this run installed or uninstalled, and their registration files. */
  runtimes?: string[];
  registration_files?: string[];
  dry_run: boolean;
  changed: boolean;
  steps: Step[];
  notes: string[];
  next_steps: string[];
  claude_md_snippet?: string;
}

export function printReport(report: Report, json: boolean, summary: string): void {
  if (json) {
    writeJson(report);
    return;
  }
  const paint = painter(useColour());
  const out: string[] = [];
  out.push(`forge-reflect ${report.command}${report.dry_run ? ' (dry run: nothing is written)' : ''}: ${report.repo}`);
  const verb = (a: StepAction) => (report.dry_run && a !== 'keep' ? `would ${a}` : a);
  const width = Math.max(0, ...report.steps.map((s) => verb(s.action).length));
  for (const step of report.steps) {
    const word = verb(step.action).padEnd(width);
    const coloured = step.action === 'remove' ? paint.bad(word) : step.action === 'keep' ? paint.dim(word) : paint.ok(word);
    out.push(`  ${coloured}  ${step.path}${step.detail ? `  ${paint.dim(step.detail)}` : ''}`);
  }
  out.push(paint.bold(summary));
  for (const note of report.notes) out.push(`note: ${note}`);
  if (report.next_steps.length > 0) {
    out.push('', report.command === 'install' ? 'To switch it on:' : 'Next:');
    report.next_steps.forEach((s, i) => out.push(`  ${i + 1}. ${s}`));
  }
  if (report.claude_md_snippet !== undefined) {
    out.push('', 'Add this to your CLAUDE.md (install does not edit it):', '', report.claude_md_snippet.trimEnd());
  }
  process.stdout.write(`${out.join('\n')}\n`);
}
