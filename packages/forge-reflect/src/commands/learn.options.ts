// `learn`: its options and examples; the run is learn.ts, imported only when the command runs.
import { flag, text, texts, type CommandSpec } from './options.js';

export const learnCommand: CommandSpec = {
  command: 'learn <action> [target]',
  describe: 'Learned patterns: add, list, search, dismiss, confirm, applied, rewritten, decay, prune',
  builder: (y) =>
    y
      .positional('action', {
        type: 'string',
        choices: ['add', 'list', 'search', 'dismiss', 'confirm', 'applied', 'rewritten', 'decay', 'prune'],
        describe: 'what to do',
      })
      .positional('target', text('a learning id (dismiss, confirm, applied, rewritten) or search text'))
      .option('type', { type: 'string', choices: ['episodic', 'semantic', 'procedural'], describe: 'add: the kind of learning (default semantic)' })
      .option('content', text('add: the insight'))
      .option('context', text('add: when it is relevant'))
      .option('tags', texts('add: tags (comma-separated or repeated)'))
      .option('source', { type: 'string', choices: ['machine', 'human', 'production'], describe: 'add: where it came from; starts at 0.5, 0.7 or 0.9' })
      .option('tag', text('list/search: only learnings with this tag'))
      .option('all', flag('list/search: include archived learnings'))
      .option('reason', text('dismiss: why'))
      .option('human', text("rewritten: the human's version"))
      .option('now', text('the current time (ISO-8601; default $FORGE_NOW, else the clock)'))
      .option('json', flag('print the result as JSON')),
  examples: [
    ['$0 learn add --type procedural --content "add clearAllMocks() in beforeEach" --context "mock tests fail" --tags testing,mocks', 'keep a pattern (0.5)'],
    ['$0 learn search "null check" --tag auth', 'find patterns by text and tag'],
    ['$0 learn dismiss 3 --reason "not our convention"', 'lower #3 by 0.2 and keep the dismissal'],
    ['$0 learn decay && $0 learn prune', 'weekly upkeep: decay unused patterns, archive weak ones'],
  ],
  load: async () => (await import('./learn.js')).run,
};
