// `show`: its options and examples; the run is show.ts, imported only when the command runs.
import { flag, text, texts, type CommandSpec } from './options.js';

export const showCommand: CommandSpec = {
  command: 'show <sidecar>',
  describe: 'Print one sidecar readably (a path, or the start of its file name)',
  builder: (y) =>
    y
      .positional('sidecar', text('a sidecar file, or the start of its name in the report folders'))
      .option('dir', texts('folders to look in (default as for report)'))
      .option('json', flag('print the raw JSON')),
  examples: [['$0 show 20261122T101500', 'the sidecar written at that time']],
  load: async () => (await import('./show.js')).run,
};
