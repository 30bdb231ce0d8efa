// `bounce`: its options and examples; the run is bounce.ts, imported only when the command runs.
import { flag, required, text, type CommandSpec } from './options.js';

export const bounceCommand: CommandSpec = {
  command: 'bounce',
  describe: 'Record a review, test or feedback check for a task and decide: approve, bounce (fix-mode brief) or escalate',
  builder: (y) =>
    y
      .option('task', required('the task reference, e.g. acme#42'))
      .option('review', text('a review-result.v1 JSON file'))
      .option('tests', text('a test-result.v1 JSON file'))
      .option('feedback', text('a feedback.v1 JSON file'))
      .option('policy', text('a policy JSON file: {"max_bounces": {"review": 3, "testing": 2, "feedback": 3}}'))
      .option('now', text('the time to record (ISO-8601; default $FORGE_NOW, else the clock)'))
      .option('json', flag('print the decision, items and brief as JSON')),
  examples: [
    ['$0 bounce --task acme#42 --review review.json', 'decide on a review; prints the fix-mode brief on a bounce'],
    ['$0 bounce --task acme#42 --tests results.json --policy loop-policy.json --json', 'a test run, with a custom bounce limit'],
  ],
  load: async () => (await import('./bounce.js')).run,
};
