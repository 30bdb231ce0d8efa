// `report`: its options and examples; the run is report.ts, imported only when the command runs.
import { flag, text, texts, type CommandSpec } from './options.js';
import { RUNTIME_IDS } from '../runtimes/hook-map.js';

export const reportCommand: CommandSpec = {
  command: 'report',
  describe: 'Summarise sidecars (review share, surfaces, confidence, degraded) and list them',
  builder: (y) =>
    y
      .option('dir', texts('sidecar folder; repeat for a team view (default $REFLECTION_DIR or <state dir>/reflections)'))
      .option('since', text('only sidecars at or after this time (ISO-8601, or 30m, 2h, 7d)'))
      .option('until', text('only sidecars at or before this time'))
      .option('surface', { type: 'string', choices: ['auth', 'data', 'infra', 'ui', 'build', 'test', 'docs', 'none'], describe: 'only this risk surface' })
      .option('needs-review', { type: 'boolean', describe: 'only those that need review (--no-needs-review: only those that do not)' })
      .option('agent', text('only this agent'))
      .option('runtime', text(`only sidecars written under this runtime (their agent): ${RUNTIME_IDS.join(', ')}`))
      .option('task', text('only this task_ref'))
      .option('session', text('only this session id (or a prefix of one)'))
      .option('degraded', { type: 'boolean', describe: 'only degraded sidecars (--no-degraded: only complete ones)' })
      .option('limit', { type: 'number', default: 50, describe: 'rows to list, newest first (the summary covers all)' })
      .option('format', {
        type: 'string',
        choices: ['table', 'markdown', 'csv', 'json', 'html'],
        default: 'table',
        describe: 'output format (html: a self-contained page with charts)',
      })
      .option('out', text('with --format html: the file to write (default forge-reflect-report.html; - for stdout)'))
      .option('json', flag('same as --format json')),
  examples: [
    ['$0 report --since 7d --needs-review', 'what needed review this week'],
    ['$0 report --format html --out report.html', 'the pictures: turns, surfaces, reliability diagram, tools; opens offline'],
    ['$0 report --format markdown --task acme#42 > review.md', 'a summary to paste into the pull request'],
    ['$0 report --dir alice/.forge/reflections --dir bob/.forge/reflections', 'a team view'],
  ],
  load: async () => (await import('./report.js')).run,
};
