// `analyze`: its options and examples; the run is analyze.ts, imported only when the command runs.
import { text, texts, type CommandSpec } from './options.js';

export const analyzeCommand: CommandSpec = {
  command: 'analyze <kind>',
  describe: 'Phase-0 analyses: calibration (P1), git-history (P2), board-history (P3), with pre-registered kill conditions',
  builder: (y) =>
    y
      .positional('kind', { type: 'string', choices: ['calibration', 'git-history', 'board-history'], describe: 'which analysis' })
      .option('corpus', text('calibration: JSONL of {confidence, correct} (- for stdin)'))
      .option('high', text('calibration: the self-rated-high subset is confidence >= this (default 0.7)'))
      .option('chance', text('calibration: the AUC of chance (default 0.5)'))
      .option('margin', text('calibration: the band around chance (default 0.05)'))
      .option('min-per-class', text('calibration: fewer correct or wrong rows than this is inconclusive (default 10)'))
      .option('bootstrap', text('calibration: bootstrap replicates (default 2000; 0 skips)'))
      .option('seed', text('calibration: bootstrap seed; git-history: sample seed (default 0)'))
      .option('repo', text('git-history: the repository (default .)'))
      .option('since', text('git-history: signals from this date (2025-01-01, 90d, "6 months ago")'))
      .option('window', text('how long after a change a signal counts (default 14d for git-history, 30d for board-history)'))
      .option('sample', text('git-history: write a labelling sheet of N signals (stratified by bucket, seeded) to --out'))
      .option('labels', text('git-history: a filled labelling sheet; reports agreement and the labelled verdict'))
      .option('repo-name', text("git-history: the repository's name, removed from paths before the risk-floor match (default: origin's URL, else the folder)"))
      .option('board', texts('board-history: a task export (JSON/JSONL, GitHub Issues JSON); repeatable'))
      .option('data-dir', texts('board-history: a folder of task files kept in git; repeatable'))
      .option('format', { type: 'string', default: 'json', describe: 'json or markdown (calibration also html: the reliability diagram)' })
      .option('out', text('with --format html: the file to write (default forge-reflect-report.html; - for stdout); git-history --sample: the sheet')),
  examples: [
    ['$0 analyze calibration --corpus corpus.jsonl --high 0.7 --bootstrap 2000 --seed 1', 'P1: does confidence rank outcomes?'],
    ['$0 analyze calibration --corpus corpus.jsonl --format html --out p1.html', 'P1 as a reliability diagram'],
    ['$0 analyze git-history --repo . --since 2025-01-01 --window 14d --format markdown', 'P2: which gate would catch each failure'],
    ['$0 analyze git-history --repo . --sample 50 --seed 1 --out sheet.jsonl', 'P2: a labelling sheet; then --labels sheet.jsonl for agreement'],
    ['$0 analyze board-history --board issues.json --window 30d', 'P3: how often is an outcome detectable'],
  ],
  load: async () => (await import('./analyze.js')).run,
};
