// `demo`: its options and examples; the run is demo.ts, imported only when the command runs.
import { flag, text, type CommandSpec } from './options.js';

export const demoCommand: CommandSpec = {
  command: 'demo',
  describe: 'See the whole kit work: a scripted agent session through the real hooks in a throwaway repo',
  builder: (y) =>
    y
      .option('dir', text('where to create the throwaway repo (default: the system temp folder)'))
      .option('json', flag('print a JSON summary (repo, steps, events by type, the sidecar)')),
  examples: [
    ['$0 demo', 'install into a scratch repo, play a session, print the report and the events'],
    ['$0 demo --json', 'the same, as JSON'],
  ],
  load: async () => (await import('./demo.js')).run,
};
