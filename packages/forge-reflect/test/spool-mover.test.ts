/**
 * A drain of many spool files moves the committed ones into its trash folder on a worker thread
 * (src/spool-mover.ts). Run from the built module (dist/: the worker file is JavaScript there; from
 * the TypeScript sources the moves are done inline): every file handed over is out of the spool once
 * finish() returns, in the trash, and a file the worker cannot move is removed by the main thread.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupTempDirs, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

type MoverModule = typeof import('../src/spool-mover.js');
const built = (await import(new URL('../dist/spool-mover.js', import.meta.url).href)) as MoverModule;

function spoolWith(n: number): { spool: string; trash: string; names: string[] } {
  const spool = join(tempDir(), 'spool');
  const trash = join(spool, '.drained-test');
  mkdirSync(trash, { recursive: true });
  const names = Array.from({ length: n }, (_, i) => `${String(i).padStart(5, '0')}.event`);
  for (const name of names) writeFileSync(join(spool, name), 'x');
  return { spool, trash, names };
}

describe('the spool mover', () => {
  it('moves every batch it is given into the trash on a worker thread, all done once finish returns', () => {
    const { spool, trash, names } = spoolWith(1_200);
    const mover = built.startMover(spool, trash);
    expect(mover.kind).toBe('worker');
    for (let i = 0; i < names.length; i += 500) mover.move(names.slice(i, i + 500));
    mover.finish();
    expect(readdirSync(spool).filter((n) => n.endsWith('.event'))).toEqual([]);
    expect(readdirSync(trash).sort()).toEqual(names);
  });

  it('removes, on the main thread, what the worker could not move (the trash folder gone)', () => {
    const { spool, trash, names } = spoolWith(300);
    const mover = built.startMover(spool, trash);
    rmSync(trash, { recursive: true });
    mover.move(names);
    mover.finish();
    expect(readdirSync(spool)).toEqual([]);
    expect(existsSync(trash)).toBe(false);
  });

  it('moves inline when asked to, and from the TypeScript sources (no worker file there)', async () => {
    const { spool, trash, names } = spoolWith(10);
    const inline = built.startMover(spool, trash, false);
    expect(inline.kind).toBe('inline');
    inline.move(names.slice(0, 5));
    expect(readdirSync(trash).sort()).toEqual(names.slice(0, 5)); // at once, not at finish
    const fromSources = (await import('../src/spool-mover.js')).startMover(spool, trash);
    expect(fromSources.kind).toBe('inline');
    fromSources.move(names.slice(5));
    fromSources.finish();
    expect(readdirSync(trash).sort()).toEqual(names);
  });
});
