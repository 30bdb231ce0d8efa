// `metrics`: its options and examples; the run is metrics.ts, imported only when the command runs.
import { flag, text, type CommandSpec } from './options.js';

export const metricsCommand: CommandSpec = {
  command: 'metrics [action]',
  describe: 'Feedback-loop metrics for the last 7, 30 or 90 days; `metrics snapshot` stores them, --trend compares',
  builder: (y) =>
    y
      .positional('action', { type: 'string', choices: ['snapshot'], describe: 'snapshot: store the current metrics' })
      .option('days', { type: 'number', choices: [7, 30, 90], default: 7, describe: 'the window' })
      .option('trend', flag('show the last snapshots side by side'))
      .option('now', text('the end of the window (ISO-8601; default $FORGE_NOW, else the clock)'))
      .option('json', flag('print the metrics as JSON (null where there is no data)')),
  examples: [
    ['$0 metrics --days 30', 'the last 30 days; formulas in docs/metrics.md'],
    ['$0 metrics snapshot && $0 metrics --trend', 'store today and compare with earlier snapshots'],
  ],
  load: async () => (await import('./metrics.js')).run,
};
