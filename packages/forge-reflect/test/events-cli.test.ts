import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { filterFromArgs, jsonRow, tableRow } from '../src/commands/events.js';
import { describeDrain } from '../src/commands/ingest.js';
import { UserError } from '../src/errors.js';
import { parseSince } from '../src/since.js';
import { CLI, cleanupTempDirs, DIST, KIT_ROOT, referencePayloadFiles, tempDir, writeSpoolFile } from './helpers/spool.js';

afterEach(cleanupTempDirs);

function cli(args: string[], stateDir: string) {
  if (!existsSync(join(DIST, 'cli.js'))) throw new Error('dist/ is missing: run `npx tsc -b` before this suite');
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, FORGE_DIR: stateDir, NO_COLOR: '1' }, cwd: stateDir });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const NOW = Date.parse('2025-11-22T12:00:00Z');

describe('parseSince', () => {
  it.each([
    ['30m', '2025-11-22T11:30:00.000000Z'],
    ['2h', '2025-11-22T10:00:00.000000Z'],
    ['7d', '2025-11-15T12:00:00.000000Z'],
    ['90s', '2025-11-22T11:58:30.000000Z'],
    ['1w', '2025-11-15T12:00:00.000000Z'],
    ['2025-11-20', '2025-11-20T00:00:00.000000Z'],
    ['2025-11-20T08:30:00Z', '2025-11-20T08:30:00.000000Z'],
    ['2025-11-20T08:30:00.250+02:00', '2025-11-20T06:30:00.250000Z'],
  ])('%s → %s', (text, iso) => expect(parseSince(text, NOW)).toBe(iso));

  it.each(['yesterday', '30', 'm30', '2h ago', '-2h', '2025-13-01', '2025-02-30', '2025-11-22T25:00Z', '', '1.5h'])('rejects %j', (text) => {
    expect(parseSince(text, NOW)).toBeUndefined();
  });
});

describe('events options', () => {
  it('builds a filter, with the default limit of 50', () => {
    expect(filterFromArgs({}, NOW)).toEqual({ limit: 50 });
    expect(filterFromArgs({ session: '7f3c', type: 'tool.failed', tool: 'Bash', since: '2h', limit: '5' }, NOW)).toEqual({
      session: '7f3c',
      type: 'tool.failed',
      tool: 'Bash',
      since: '2025-11-22T10:00:00.000000Z',
      limit: 5,
    });
  });

  it.each([
    [{ since: 'yesterday' }, /--since "yesterday" is neither ISO-8601 nor an age; use e\.g\. --since 30m/],
    [{ type: 'tool.ran' }, /--type "tool.ran" is not an event type; use one of session.started, /],
    [{ limit: '0' }, /--limit "0" is not a whole number of at least 1/],
    [{ limit: 'ten' }, /--limit/],
    [{ tool: '' }, /--tool needs a value/],
    [{ session: ['a', 'b'] }, /--session was given more than once/],
  ])('rejects %j as a usage error (exit 2)', (args, message) => {
    let error: unknown;
    try {
      filterFromArgs(args as Record<string, unknown>, NOW);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).exitCode).toBe(2);
    expect((error as UserError).message).toMatch(message);
  });

  it('formats a table row and a JSON row', () => {
    const row = {
      id: '1763806500123456-1-abcd',
      session_id: '7f3c2a9e-4b1d-4e8a-9c6f-2d5e8b1a0c34',
      agent_id: null,
      ts: '2025-11-22T10:15:00.123456Z',
      runtime: 'claude-code' as const,
      type: 'tool.executed' as const,
      hook_event: 'PostToolUse',
      tool_name: 'Bash',
      tool_use_id: null,
      duration_ms: 4187,
      cwd: '/r',
      payload: '{"a":1}',
      truncated: 0 as const,
    };
    expect(tableRow(row)).toEqual(['2025-11-22 10:15:00', 'tool.executed', row.runtime, 'Bash', '7f3c2a9e', '4.2 s']);
    expect(tableRow({ ...row, duration_ms: 12, session_id: null, tool_name: null })).toEqual([
      '2025-11-22 10:15:00',
      'tool.executed',
      row.runtime,
      '',
      '',
      '12 ms',
    ]);
    expect(tableRow({ ...row, duration_ms: 125_000 })[5]).toBe('2m 05s');
    expect(jsonRow(row)).toMatchObject({ payload: { a: 1 }, truncated: false });
    expect(jsonRow({ ...row, payload: '"cut text', truncated: 1 })).toMatchObject({ payload: '"cut text', truncated: true });
  });

  it('describes a drain in one line', () => {
    expect(describeDrain({ drained: 3, rejected: 1, alreadyPresent: 2, removedTemp: 0, inFlight: 0, locked: false, busy: false })).toBe(
      'drained 3, rejected 1, already present 2',
    );
    expect(describeDrain({ drained: 0, rejected: 0, alreadyPresent: 0, removedTemp: 0, inFlight: 0, locked: true, busy: false })).toMatch(
      /another drain is running/,
    );
  });
});

describe('forge-reflect ingest and events (the built CLI)', () => {
  it('ingest drains and prints the counts; --json prints them as JSON', () => {
    const stateDir = tempDir();
    for (const file of referencePayloadFiles().slice(0, 4)) writeSpoolFile(stateDir, { payload: readFileSync(file) });
    writeSpoolFile(stateDir, { payload: 'garbage' });
    const first = cli(['ingest'], stateDir);
    expect(first).toMatchObject({ code: 0, stdout: 'drained 4, rejected 1, already present 0\n' });
    expect(first.stderr).toMatch(/1 spool file\(s\) could not be read and were moved to .*rejected/);
    writeSpoolFile(stateDir, { payload: '{"session_id":"s","hook_event_name":"Stop"}' });
    const second = cli(['ingest', '--json'], stateDir);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ drained: 1, rejected: 0, already_present: 0, locked: false, busy: false });
  });

  it('events drains first, then lists; filters and --json work', () => {
    const stateDir = tempDir();
    let us = 1_763_806_500_000_000;
    for (const file of referencePayloadFiles()) writeSpoolFile(stateDir, { payload: readFileSync(file), receivedUs: (us += 1_000_000) });
    const table = cli(['events', '--limit', '200'], stateDir);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TIME \(UTC\)\s+TYPE\s+RUNTIME\s+TOOL\s+SESSION\s+DURATION$/);
    expect(lines).toHaveLength(1 + referencePayloadFiles().length);
    expect(lines[1]).toMatch(/^2025-11-22 10:15:01\s+notification\s+claude-code\s+7f3c2a9e$/);

    const bash = cli(['events', '--tool', 'bash', '--json'], stateDir);
    expect(bash.code).toBe(0);
    const rows = JSON.parse(bash.stdout) as Array<Record<string, any>>;
    expect(rows.map((r) => `${r.runtime}/${r.type}/${r.tool_name}`)).toEqual([
      'claude-code/tool.executed/Bash',
      'claude-code/tool.failed/Bash',
      'claude-code/event.unknown/Bash',
      'codex/tool.executed/Bash',
      'copilot/tool.executed/bash',
    ]);
    expect(rows[0]?.payload.tool_input.command).toBe('npm test -- --runInBand');
    expect(rows[0]?.truncated).toBe(false);

    const failed = cli(['events', '--type', 'tool.failed', '--session', '7f3c'], stateDir);
    expect(failed.stdout.trimEnd().split('\n')).toHaveLength(2);
    expect(cli(['events', '--since', '2025-11-22T10:15:27Z', '--json'], stateDir).stdout).toContain('"runtime": "gemini"');
    expect(JSON.parse(cli(['events', '--since', '1d', '--json'], stateDir).stdout)).toEqual([]);
    expect(cli(['events', '--limit', '3'], stateDir).stdout).toMatch(/the latest 3; --limit N for more/);
    expect(cli(['events', '--session', 'nope'], stateDir).stdout).toBe('no events match\n');
  });

  it('a bad --since is a one-line usage error with an example (exit 2)', () => {
    const stateDir = tempDir();
    const result = cli(['events', '--since', 'yesterday'], stateDir);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')[0]).toBe(
      'forge-reflect: --since "yesterday" is neither ISO-8601 nor an age; use e.g. --since 30m, --since 2h, --since 7d or --since 2025-11-22T10:00:00Z',
    );
    expect(existsSync(join(stateDir, 'events.db'))).toBe(false); // checked before touching anything
  });

  it('an unusable events.db is a one-line error (exit 1), not a stack trace', () => {
    const stateDir = tempDir();
    writeSpoolFile(stateDir, { payload: '{}' });
    writeFileSync(join(stateDir, 'events.db'), 'x'.repeat(200));
    const result = cli(['events'], stateDir);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^forge-reflect: the event log .*events\.db is not usable \(SQLITE_NOTADB/);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it.each([
    ['ingest', /Examples:[\s\S]*forge-reflect ingest/],
    ['events', /Examples:[\s\S]*forge-reflect events --since 2h --tool Bash/],
  ])('%s --help shows an example', (command, example) => {
    const result = cli([command, '--help'], tempDir());
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(example);
  });

  it('loads better-sqlite3 for events but never for risk', () => {
    const probe = (argv: string[]) => {
      const script = `
        import { createRequire } from 'node:module';
        const { main } = await import(${JSON.stringify(pathToFileURL(join(DIST, 'cli.js')).href)});
        const out = process.stdout.write.bind(process.stdout);
        process.stdout.write = () => true;
        await main(${JSON.stringify(argv)});
        process.stdout.write = out;
        const cache = Object.keys(createRequire(import.meta.url).cache);
        out(String(cache.some((k) => k.includes('better-sqlite3'))));`;
      const stateDir = tempDir();
      return spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        encoding: 'utf8',
        cwd: KIT_ROOT,
        env: { ...process.env, FORGE_DIR: stateDir },
      }).stdout;
    };
    expect(probe(['risk', 'README.md'])).toBe('false');
    expect(probe(['events'])).toBe('true');
  });
});
