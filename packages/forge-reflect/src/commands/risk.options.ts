// `risk`: its options and examples; the run is risk.ts, imported only when the command runs.
import { flag, text, texts, type CommandSpec } from './options.js';

export const riskCommand: CommandSpec = {
  command: 'risk [files..]',
  describe: 'Evaluate the review risk floor for paths, or for the current git change with --git',
  builder: (y) =>
    y
      .positional('files', texts('repo-relative paths'))
      .option('git', flag('use the files the working tree changed (tracked and untracked)'))
      .option('base', text('with --git: compare against this revision instead of HEAD'))
      .option('threshold', text('needs_review when score >= this (0..1; default $REFLECTION_RISK_THRESHOLD or 0.5)'))
      .option('fail-on-review', flag('exit 3 when the change needs review (for CI gates)'))
      .option('json', flag('print the verdict as JSON')),
  examples: [
    ['$0 risk src/auth/token.ts README.md', 'the floor for two paths'],
    ['$0 risk --git --base origin/main --fail-on-review', 'gate a pull request in CI'],
  ],
  load: async () => (await import('./risk.js')).run,
};
