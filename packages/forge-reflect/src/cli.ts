/**
 * The forge-reflect command line: yargs, with every command's work in its own module that is
 * imported only when that command runs (ajv, better-sqlite3 and friends cost real time to load).
 */
import { readFileSync } from 'node:fs';
import yargs, { type Argv } from 'yargs';
import { EXIT_OK, reportFailure, usageError } from './errors.js';
import { COMMANDS } from './commands/registry.js';
import { endQuietlyOnClosedPipe } from './output.js';
import { fillPositionals, positionalsOf, splitAtDoubleDash, withOptionalPositionals } from './operands.js';

/**
 * yargs' own usage messages as one line that names the problem: "Did you mean corpus?" becomes
 * "unknown command "bogus"; did you mean corpus?", and multi-line choice errors are joined.
 */
export function oneLine(message: string, argv: readonly string[]): string {
  const first = argv.find((a) => !a.startsWith('-'));
  const suggestion = /^Did you mean (\S+)\?$/.exec(message.trim());
  if (suggestion) return `unknown command ${JSON.stringify(first ?? '')}; did you mean ${suggestion[1]}?`;
  if (first !== undefined && message.trim() === `Unknown argument: ${first}`) return `unknown command ${JSON.stringify(first)}`;
  return message
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join(' ')
    .replace(/^Invalid values: /, 'invalid value: ');
}

/** Options whose value may be `-` (stdin or stdout). yargs reads a lone `-` as a positional, so `--out -` is passed on as `--out=-`. */
const DASH_VALUED = new Set(['--out', '--corpus', '--board', '--review', '--tests', '--feedback', '--labels']);

export function joinDashValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') return [...out, ...argv.slice(i)];
    if (DASH_VALUED.has(arg) && argv[i + 1] === '-') {
      out.push(`${arg}=-`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/**
 * yargs renders a command's whole help text right after starting the command, in case the command
 * later asks for it, a cost every run pays. None of ours does: a usage error names its fix and
 * points at `--help`, which yargs renders on its own. So that early rendering is switched off.
 * Reaches into yargs' internal usage object; if yargs ever changes its shape, nothing is switched
 * off and nothing breaks.
 */
export function skipEarlyHelpRendering(parser: Argv): Argv {
  const internal = (parser as unknown as { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: unknown } } }).getInternalMethods?.();
  const usage = internal?.getUsageInstance?.();
  if (usage !== undefined && typeof usage.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => {};
  return parser;
}

/**
 * This package's version, from its package.json (dist/ and dist-bundle/ sit one level below it).
 * yargs would look for a package.json above the working directory: in a user's repo, theirs.
 */
export function packageVersion(): string {
  try {
    const version = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown }).version;
    return typeof version === 'string' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}

function buildParser(argv: string[]): Argv {
  const { options, operands } = splitAtDoubleDash(joinDashValues(argv));
  let parser = yargs(options)
    .scriptName('forge-reflect')
    .usage('$0 <command> [options]\n\nReflection sidecars, the agent event log and their analyses.')
    .strict()
    .demandCommand(1, 'name a command')
    .recommendCommands()
    .help()
    .alias('h', 'help')
    .version(packageVersion())
    .wrap(Math.min(100, process.stdout.columns || 100))
    .fail((message, error) => {
      throw error ?? usageError(oneLine(message, argv));
    });
  skipEarlyHelpRendering(parser);
  for (const spec of COMMANDS) {
    parser = parser.command(
      operands === undefined ? spec.command : withOptionalPositionals(spec.command),
      spec.describe,
      (y) => {
        const built = spec.builder(y);
        for (const [example, what] of spec.examples) built.example(example, what);
        return built;
      },
      async (args) => {
        const given = args as Record<string, unknown>;
        const run = await spec.load();
        process.exitCode = await run(operands === undefined ? given : fillPositionals(given, positionalsOf(spec.command), operands, spec.command));
      },
    );
  }
  return parser;
}

/** Runs the CLI and returns its exit status; never throws. */
export async function main(argv: string[]): Promise<number> {
  process.exitCode = EXIT_OK;
  endQuietlyOnClosedPipe();
  try {
    await buildParser(argv).parseAsync();
    return Number(process.exitCode ?? EXIT_OK);
  } catch (error) {
    return reportFailure(error);
  }
}
