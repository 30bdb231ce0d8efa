// yargs renders a command's whole help text right after starting it (in case the command asks for
// it later); the CLI switches that off (src/cli.ts, skipEarlyHelpRendering) and --help still works.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import yargs, { type Argv } from 'yargs';
import { describe, expect, it } from 'vitest';
import { skipEarlyHelpRendering } from '../src/cli.js';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'forge-reflect.js');

/** Runs `x` through a small yargs parser and counts how often its usage object renders help. */
async function helpRendersWhenRunning(skip: boolean): Promise<{ renders: number; ran: boolean }> {
  let ran = false;
  let parser: Argv = yargs(['x']).command('x', 'a command', (y) => y.option('n', { type: 'number' }), () => {
    ran = true;
  });
  if (skip) parser = skipEarlyHelpRendering(parser);
  const usage = (parser as unknown as { getInternalMethods(): { getUsageInstance(): { help(): string } } }).getInternalMethods().getUsageInstance();
  const help = usage.help.bind(usage);
  let renders = 0;
  usage.help = () => {
    renders += 1;
    return help();
  };
  await parser.parseAsync();
  return { renders, ran };
}

describe('help rendering', () => {
  it('yargs renders help on every command run; with the switch it does not', async () => {
    expect(await helpRendersWhenRunning(false)).toEqual({ renders: 1, ran: true });
    expect(await helpRendersWhenRunning(true)).toEqual({ renders: 0, ran: true });
  });

  it('leaves --help of the CLI and of a command whole', () => {
    const top = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' });
    expect(top.status).toBe(0);
    expect(top.stdout).toContain('forge-reflect <command> [options]');
    const command = spawnSync(process.execPath, [CLI, 'events', '--help'], { encoding: 'utf8' });
    expect(command.status).toBe(0);
    expect(command.stdout).toContain('--limit');
    expect(command.stdout).toContain('Examples:');
  });
});
