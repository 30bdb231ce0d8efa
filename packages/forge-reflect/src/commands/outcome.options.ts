// `outcome`: its options and examples; the run is outcome.ts, imported only when the command runs.
import { flag, required, text, type CommandSpec } from './options.js';

export const outcomeCommand: CommandSpec = {
  command: 'outcome',
  describe: 'Record what turned out true for a task (correct or wrong, and who says so)',
  builder: (y) =>
    y
      .option('task', required('the task reference, e.g. acme#42'))
      .option('correct', { type: 'boolean', describe: 'the work was right' })
      .option('wrong', { type: 'boolean', describe: 'the work was wrong' })
      .option('source', { type: 'string', choices: ['ci', 'human', 'revert', 'production'], default: 'human', describe: 'who says so' })
      .option('at', text('when it became known (ISO-8601 or an age like 2h; default now)'))
      .option('note', text('a short note'))
      .option('now', text('the current time (ISO-8601; default $FORGE_NOW, else the clock)'))
      .option('json', flag('print the recorded outcome as JSON')),
  examples: [
    ['$0 outcome --task acme#42 --wrong --source revert --note "reverted in #57"', 'the change was reverted'],
    ['$0 outcome --task acme#42 --correct --source ci --json', 'CI passed on main'],
  ],
  load: async () => (await import('./outcome.js')).run,
};
