// `validate`: its options and examples; the run is validate.ts, imported only when the command runs.
import { flag, texts, type CommandSpec } from './options.js';

export const validateCommand: CommandSpec = {
  command: 'validate <paths..>',
  describe: 'Validate sidecars (files, or folders searched for *.reflection.json) against the schema',
  builder: (y) => y.positional('paths', texts('sidecar files or folders')).option('json', flag('print a JSON result')),
  examples: [
    ['$0 validate .forge/reflections', 'check every sidecar in the state folder'],
    ['$0 validate a.reflection.json --json', 'a machine-readable result'],
  ],
  load: async () => (await import('./validate.js')).run,
};
