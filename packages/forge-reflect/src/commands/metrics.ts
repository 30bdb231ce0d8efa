/** `forge-reflect metrics`: the feedback-loop health of the last 7, 30 or 90 days; snapshots and trends. */
import { openDrainedLog } from '../log/drain.js';
import { openDrainedLogForReading } from '../log/reading-log.js';
import { usageError } from '../errors.js';
import { formatTable, writeJson } from '../output.js';
import { indexSidecars } from '../report/sidecar-index.js';
import { resolveStateDir } from '../state-dir.js';
import { resolveNow } from '../loops/clock.js';
import { formatMetric, METRIC_WINDOWS, metricRows } from '../loops/metrics-core.js';
import { latestSnapshots, metricsFor, storeSnapshot } from '../loops/metrics-store.js';
import { reportDirs } from './report.js';

export const TREND_SNAPSHOTS = 5;

export async function run(args: Record<string, unknown>): Promise<number> {
  const action = args.action === undefined ? 'show' : String(args.action);
  if (action !== 'show' && action !== 'snapshot') throw usageError(`unknown metrics action ${JSON.stringify(action)}; use \`metrics\` or \`metrics snapshot\``);
  const days = Number(args.days ?? 7);
  if (!(METRIC_WINDOWS as readonly number[]).includes(days)) throw usageError(`--days must be one of ${METRIC_WINDOWS.join(', ')}`);
  const now = resolveNow(args);
  const stateDir = resolveStateDir();
  const log = action === 'snapshot' && !args.trend ? openDrainedLog(stateDir) : openDrainedLogForReading(stateDir);
  try {
    indexSidecars(log.db, reportDirs(undefined, stateDir));
    if (args.trend) {
      const snapshots = latestSnapshots(log.db, TREND_SNAPSHOTS);
      if (args.json) writeJson(snapshots);
      else if (snapshots.length === 0) process.stdout.write('no snapshots yet; take one with `forge-reflect metrics snapshot`\n');
      else {
        const labels = metricRows(snapshots[snapshots.length - 1]!.metrics).map(([label]) => label);
        const columns = snapshots.map((s) => new Map(metricRows(s.metrics).map(([label, value, kind]) => [label, formatMetric(value, kind)])));
        const header = ['METRIC', ...snapshots.map((s) => `${s.at.slice(0, 10)} (${s.days}d)`)];
        process.stdout.write(
          `${formatTable(
            header,
            labels.map((label) => [label, ...columns.map((c) => c.get(label) ?? 'n/a')]),
          )}\n`,
        );
      }
      return 0;
    }
    const metrics = metricsFor(log.db, now, days);
    if (action === 'snapshot') {
      const snapshot = storeSnapshot(log.db, metrics, now);
      if (args.json) writeJson(snapshot);
      else process.stdout.write(`stored snapshot #${snapshot.id} of the last ${days} days at ${snapshot.at}\n`);
      return 0;
    }
    if (args.json) writeJson(metrics);
    else {
      process.stdout.write(`feedback-loop metrics, last ${days} days (${metrics.since.slice(0, 19)}Z to ${metrics.until.slice(0, 19)}Z)\n\n`);
      process.stdout.write(
        `${formatTable(
          ['METRIC', 'VALUE'],
          metricRows(metrics).map(([label, value, kind]) => [label, formatMetric(value, kind)]),
        )}\n`,
      );
      process.stdout.write('\nformulas: docs/metrics.md\n');
    }
  } finally {
    log.close();
  }
  return 0;
}
