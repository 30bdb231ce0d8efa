// `ingest`: its options and examples; the run is ingest.ts, imported only when the command runs.
import { flag, type CommandSpec } from './options.js';

export const ingestCommand: CommandSpec = {
  command: 'ingest',
  describe: 'Drain the hook spool into the event log (.forge/events.db): redact, type, insert once',
  builder: (y) => y.option('json', flag('print the counts as JSON')),
  examples: [
    ['$0 ingest', 'move pending hook events into the log; prints drained / rejected / already present'],
    ['FORGE_DIR=/tmp/state $0 ingest --json', 'drain another state folder, counts as JSON'],
  ],
  load: async () => (await import('./ingest.js')).run,
};
