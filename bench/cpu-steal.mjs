// The share of this machine's CPU time that the hypervisor gave to other guests (steal) between two
// readings of /proc/stat. On a shared VM a noisy neighbour slows some runs and not others; the bench
// prints this beside each suite so a reader can tell a disturbed run from a slow kit. Context only:
// no target depends on it. null where /proc/stat is absent (macOS) or has no steal column.

import { readFileSync } from 'node:fs';

/** The aggregate `cpu` line of /proc/stat as { steal, total } jiffies, or null. */
export function parseCpuLine(text) {
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  if (line === undefined) return null;
  // user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is already
  // counted in user and nice, so the total stops at steal.
  const fields = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (fields.length < 8 || fields.some((n) => !Number.isFinite(n))) return null;
  return { steal: fields[7], total: fields.reduce((a, b) => a + b, 0) };
}

export function readCpu() {
  try {
    return parseCpuLine(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return null;
  }
}

/** Steal as a share (0..1) of all CPU time between two readings, or null. */
export function stealShare(before, after) {
  if (before === null || after === null) return null;
  const total = after.total - before.total;
  return total > 0 ? (after.steal - before.steal) / total : null;
}

export function describeSteal(share) {
  return share === null ? 'not known here (no /proc/stat, or no steal column in it)' : `${(share * 100).toFixed(1)}% of CPU time`;
}
