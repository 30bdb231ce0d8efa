// `uninstall`: its options and examples; the run is uninstall.ts, imported only when the command runs.
import { flag, text, texts, type CommandSpec } from './options.js';
import { RUNTIME_IDS } from '../runtimes/hook-map.js';

export const uninstallCommand: CommandSpec = {
  command: 'uninstall',
  describe: 'Remove exactly what install added (hook groups, vendored files); keeps .forge/',
  builder: (y) =>
    y
      .option('runtime', texts(`${RUNTIME_IDS.join(', ')} or all (default claude-code); repeat for several`))
      .option('repo', text('the repository (default: the git top level of the cwd)'))
      .option('local', flag('remove the registration from .claude/settings.local.json'))
      .option('dry-run', flag('print the changes, write nothing'))
      .option('json', flag('print the changes as JSON')),
  examples: [
    ['$0 uninstall --dry-run', 'see what would be removed'],
    ['$0 uninstall --local', 'undo `install --local`'],
    ['$0 uninstall --runtime all', 'remove the registrations of every runtime, then the vendored hooks'],
  ],
  load: async () => (await import('./uninstall.js')).run,
};
