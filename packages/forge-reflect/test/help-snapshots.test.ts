// Every command's --help, byte for byte as it was before the options moved out of one registry
// array (tests/fixtures/help/, captured from the built CLI then). A change of help text is a change
// for users: update the fixture on purpose, in the commit that changes the text.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const KIT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CLI = join(KIT, 'packages', 'forge-reflect', 'bin', 'forge-reflect.js');
const FIXTURES = join(KIT, 'tests', 'fixtures', 'help');
const COMMANDS = [
  'schema',
  'validate',
  'risk',
  'ingest',
  'events',
  'install',
  'uninstall',
  'self-report',
  'report',
  'show',
  'demo',
  'doctor',
  'bounce',
  'outcome',
  'learn',
  'metrics',
  'analyze',
  'corpus',
  'export',
];

describe('--help output', () => {
  it.each(['', ...COMMANDS])('forge-reflect %s --help is unchanged', (command) => {
    const args = command === '' ? ['--help'] : [command, '--help'];
    // Not a terminal: yargs wraps at 100 columns, as when the fixtures were taken.
    const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, COLUMNS: '' } });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(readFileSync(join(FIXTURES, `${command || '_root'}.txt`), 'utf8'));
  });
});
