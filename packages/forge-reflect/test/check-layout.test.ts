// The layout checker (scripts/check-layout.mjs) against planted faults in a throwaway src/: a
// circle, an import that runs back up, too many files at the root. And the real tree passes.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupTempDirs, tempDir } from './helpers/spool.js';

const KIT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CHECKER = join(KIT, 'scripts', 'check-layout.mjs');

afterAll(cleanupTempDirs);

function plant(files: Record<string, string>): string {
  const src = join(tempDir(), 'src');
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(src, rel)), { recursive: true });
    writeFileSync(join(src, rel), text);
  }
  return src;
}

function check(src?: string) {
  const r = spawnSync(process.execPath, src === undefined ? [CHECKER] : [CHECKER, src], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const CLEAN = {
  'events.ts': 'export type EventType = string;\n',
  'errors.ts': "import type { EventType } from './events.js';\nexport type E = EventType;\n",
  'log/event-log.ts': "import type { EventType } from '../events.js';\nexport const open = (t: EventType) => t;\n",
  'log/drain.ts': "import { open } from './event-log.js';\nexport const drain = () => open('x');\n",
  'commands/ingest.ts': "import { drain } from '../log/drain.js';\nexport const run = async () => (drain(), 0);\n",
  'cli.ts': "export const main = () => import('./commands/ingest.js');\n",
};

describe('check-layout', () => {
  it('passes a clean tree and says so in one line', () => {
    const r = check(plant(CLEAN));
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('6 files, no circle, 3 at the root\n');
  });

  it('fails on a planted circle', () => {
    const r = check(
      plant({
        ...CLEAN,
        'log/event-log.ts': "import type { Rollup } from './rollups.js';\nexport type Db = Rollup;\nexport const open = (t: string) => t;\n",
        'log/rollups.ts': "import type { Db } from './event-log.js';\nexport type Rollup = { db?: Db };\n",
      }),
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('a circle of 2 files: log/event-log.ts ⇄ log/rollups.ts');
  });

  it('fails on a planted import that runs back up', () => {
    const r = check(
      plant({
        ...CLEAN,
        // a runtime (floor 1) reaching up into doctor/ (floor 5) for a type
        'runtimes/codex.ts': "import type { Check } from '../doctor/checks.js';\nexport const checks: Check[] = [];\n",
        'doctor/checks.ts': 'export interface Check { name: string }\n',
        // a leaf reaching into a part
        'since.ts': "export { drain } from './log/drain.js';\n",
      }),
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('runtimes/codex.ts (floor 1) imports doctor/checks.ts (floor 5): an import that runs back up');
    expect(r.stderr).toContain('since.ts (floor 0) imports log/drain.ts (floor 2): an import that runs back up');
    expect(r.stderr).not.toContain('circle');
  });

  it('fails on more than 15 files at the root', () => {
    const many = Object.fromEntries(Array.from({ length: 14 }, (_, i) => [`leaf-${i}.ts`, 'export {};\n']));
    const r = check(plant({ ...CLEAN, ...many }));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("17 files at src/'s root (at most 15)");
  });

  it('passes the real src/', () => {
    const r = check();
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^\d+ files, no circle, \d+ at the root\n$/);
  });
});
