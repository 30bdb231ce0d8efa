// `self-report`: its options and examples; the run is self-report.ts, imported only when the command runs.
import { flag, required, text, type CommandSpec } from './options.js';

export const selfReportCommand: CommandSpec = {
  command: 'self-report',
  describe: "Write the agent's self-report for this turn's reflection (read by the Stop hook)",
  builder: (y) =>
    y
      .option('confidence', required('how likely the work is right as delivered: 0..1'))
      .option('surface', required('where the likely flaw lands: auth|data|infra|ui|build|test|docs|none'))
      .option('wrong', required('the single most likely way the work is wrong'))
      .option('not-in-diff', text('what you know that the diff does not show'))
      .option('session', text('the session id (the hook then ignores it in any other session)'))
      .option('file', text('where to write (default $REFLECTION_INPUT, else <state dir>/reflection-input.json)'))
      .option('json', flag('print the result as JSON')),
  examples: [
    [
      "$0 self-report --confidence 0.7 --surface auth --wrong 'token refresh is untested across an expiry' --not-in-diff 'staging uses a different issuer'",
      'leave a self-report for the Stop hook',
    ],
    ["$0 self-report --confidence 0.9 --surface none --wrong 'a typo in the new docs' --json", 'the file written, as JSON'],
  ],
  load: async () => (await import('./self-report.js')).run,
};
