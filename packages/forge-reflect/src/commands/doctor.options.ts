// `doctor`: its options and examples; the run is doctor.ts, imported only when the command runs.
import { flag, text, type CommandSpec } from './options.js';

export const doctorCommand: CommandSpec = {
  command: 'doctor',
  describe: 'Check the installation: node, hooks, registrations, mode, state folder, spool, event log',
  builder: (y) =>
    y
      .option('repo', text('the repository to check (default: the git top level of the cwd)'))
      .option('repair', flag('move a corrupt event log aside and start a fresh one (sidecars and spool untouched)'))
      .option('json', flag('print the checks as JSON')),
  examples: [
    ['$0 doctor', 'check the kit in this repository'],
    ['$0 doctor --repair', 'also replace a corrupt event log'],
  ],
  load: async () => (await import('./doctor.js')).run,
};
