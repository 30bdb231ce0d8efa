// `corpus`: its options and examples; the run is corpus.ts, imported only when the command runs.
import { text, texts, type CommandSpec } from './options.js';

export const corpusCommand: CommandSpec = {
  command: 'corpus',
  describe: "Join sidecars' self-reported confidence with recorded outcomes into the P1 corpus (JSONL)",
  builder: (y) => y.option('dir', texts('sidecar folder; repeatable (default as for report)')).option('out', text('write the JSONL here (default stdout)')),
  examples: [['$0 corpus --out corpus.jsonl && $0 analyze calibration --corpus corpus.jsonl', 'from agent sessions to a calibration verdict']],
  load: async () => (await import('./corpus.js')).run,
};
