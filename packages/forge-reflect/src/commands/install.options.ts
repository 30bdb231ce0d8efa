// `install`: its options and examples; the run is install.ts, imported only when the command runs.
import { flag, text, texts, type CommandSpec } from './options.js';
import { RUNTIME_IDS } from '../runtimes/hook-map.js';

export const installCommand: CommandSpec = {
  command: 'install',
  describe:
    "Vendor the hooks into a repo and register them in each runtime's own file (Claude Code, Codex, Gemini CLI, Qwen Code, Cline, opencode, Copilot CLI)",
  builder: (y) =>
    y
      .option('runtime', texts(`${RUNTIME_IDS.join(', ')} or all (default claude-code); repeat for several`))
      .option('repo', text('the repository (default: the git top level of the cwd)'))
      .option('local', flag('register in .claude/settings.local.json (personal, not committed)'))
      .option('dry-run', flag('print the changes, write nothing'))
      .option('with-instructions', flag('also add the /reflect slash command and print the CLAUDE.md snippet'))
      .option('json', flag('print the changes as JSON')),
  examples: [
    ['$0 install --dry-run', 'see what would change in this repo, write nothing'],
    ['$0 install --local --with-instructions', 'personal registration, plus the /reflect command'],
    ['$0 install --repo ../app --json', 'install into another repo, machine-readable'],
    ['$0 install --runtime codex --runtime gemini', 'register for Codex (.codex/hooks.json) and Gemini CLI (.gemini/settings.json)'],
  ],
  load: async () => (await import('./install.js')).run,
};
