// `schema`: its options and examples; the run is schema.ts, imported only when the command runs.
import type { CommandSpec } from './options.js';

export const schemaCommand: CommandSpec = {
  command: 'schema',
  describe: 'Print a committed JSON Schema (reflection.v1 by default)',
  builder: (y) =>
    y.option('name', {
      type: 'string',
      choices: ['reflection.v1', 'reflection-input.v1', 'review-result.v1', 'test-result.v1', 'feedback.v1'],
      default: 'reflection.v1',
      describe: 'which schema to print',
    }),
  examples: [['$0 schema > reflection.v1.schema.json', 'save the sidecar schema']],
  load: async () => (await import('./schema.js')).run,
};
