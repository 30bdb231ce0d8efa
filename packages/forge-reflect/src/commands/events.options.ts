// `events`: its options and examples; the run is events.ts, imported only when the command runs.
import { flag, text, type CommandSpec } from './options.js';
import { RUNTIME_IDS } from '../runtimes/hook-map.js';

export const eventsCommand: CommandSpec = {
  command: 'events',
  describe: 'List logged agent events, newest last (drains the spool first)',
  builder: (y) =>
    y
      .option('session', text('a session id, or its first characters'))
      .option('type', text('an event type: tool.executed, tool.failed, turn.stopped, …'))
      .option('tool', text('a tool name (any case), e.g. Bash'))
      .option('runtime', text(`only events of this runtime: ${RUNTIME_IDS.join(', ')}, unknown`))
      .option('since', text('ISO-8601 time or an age: 30m, 2h, 7d'))
      .option('limit', text('show the latest N matching events (default 50)'))
      .option('json', flag('print full rows, payload parsed, as JSON')),
  examples: [
    ['$0 events --since 2h --tool Bash', 'the Bash calls of the last two hours'],
    ['$0 events --type tool.failed --session 7f3c2a9e --json', 'failed tool calls of one session, as JSON'],
    ['$0 events --runtime codex --type tool.failed', 'the failed tool calls of Codex sessions'],
  ],
  load: async () => (await import('./events.js')).run,
};
