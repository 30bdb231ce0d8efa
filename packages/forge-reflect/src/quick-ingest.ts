/**
 * `forge-reflect ingest` and `forge-reflect ingest --json` without yargs: the Stop hook starts an
 * ingest after every turn, and parsing its one optional flag does not need the ~5,000 lines of
 * yargs that every other command loads (a third of an empty ingest's start). Any other argv, help
 * included, goes to the full CLI (cli.ts), which runs the same `ingest` module.
 */
import { EXIT_OK, reportFailure } from './errors.js';
import { endQuietlyOnClosedPipe } from './output.js';

/** The exit status, or undefined when `argv` is not a plain ingest (the full CLI takes it). */
export async function quickMain(argv: readonly string[]): Promise<number | undefined> {
  if (argv[0] !== 'ingest' || argv.length > 2 || (argv.length === 2 && argv[1] !== '--json')) return undefined;
  process.exitCode = EXIT_OK;
  endQuietlyOnClosedPipe();
  try {
    const { run } = await import('./commands/ingest.js');
    const status = await run({ json: argv[1] === '--json' });
    return Number(process.exitCode ?? status);
  } catch (error) {
    return reportFailure(error);
  }
}
