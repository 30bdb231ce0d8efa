/**
 * Moves committed spool files into the drain's trash folder (spool-trash.ts) on a worker thread,
 * while the main thread reads, parses and logs the next batch: ~8 µs of rename a file here, ~15% of
 * a 10,000-file drain, off its critical path. The drain hands over each committed batch (move) and,
 * before it lets its lock go, waits until every batch is moved (finish): a file the worker could not
 * move, or did not get to (it reported nothing for FINISH_WAIT_MS), is moved or unlinked by the main
 * thread then. So the
 * spool is in the same state when the drain returns as with the renames done inline; a drain killed
 * before that leaves committed files in the spool, which the next drain finds already logged (as it
 * always could). Without the worker file (run from the TypeScript sources) or a worker, moves are
 * done inline.
 */
import { renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { startWorker } from './worker-start.js';

/**
 * How long finish() waits for the worker's next batch before it moves what is left itself (a batch
 * takes it a few ms; a worker that failed to start never reports).
 */
const FINISH_WAIT_MS = 1_000;

export interface MoverData {
  spool: string;
  trash: string;
  port: MessagePort;
  /** shared[0]: batches moved. */
  shared: Int32Array;
}

/** What the worker posts after each batch: the names it could not move. */
export type MoverReport = { failed: string[] };

export interface Mover {
  /** Who moves the files: this thread, or a worker thread. */
  kind: 'inline' | 'worker';
  /** Moves these committed files (now, or on the worker). */
  move(names: readonly string[]): void;
  /** Returns once every file handed over is out of the spool. */
  finish(): void;
}

/** Moves one file into the trash, else unlinks it (gone already: nothing to do). */
export function moveOne(spool: string, trash: string, name: string): void {
  try {
    renameSync(join(spool, name), join(trash, name));
  } catch {
    try {
      unlinkSync(join(spool, name));
    } catch {
      // gone
    }
  }
}

/** For a drain of few files: each committed file unlinked at once, no trash folder. */
export function unlinkingMover(spool: string): Mover {
  return {
    kind: 'inline',
    move(names) {
      for (const name of names) {
        try {
          unlinkSync(join(spool, name));
        } catch {
          // gone
        }
      }
    },
    finish() {},
  };
}

function inlineMover(spool: string, trash: string): Mover {
  return {
    kind: 'inline',
    move(names) {
      for (const name of names) moveOne(spool, trash, name);
    },
    finish() {},
  };
}

export function startMover(spool: string, trash: string, useWorker = true): Mover {
  const shared = new Int32Array(new SharedArrayBuffer(4));
  const started = useWorker ? startWorker(new URL('./spool-mover-worker.js', import.meta.url), (port): MoverData => ({ spool, trash, port, shared })) : undefined;
  if (started === undefined) return inlineMover(spool, trash);
  const { port: port1, worker } = started;
  const batches: string[][] = [];
  return {
    kind: 'worker',
    move(names) {
      if (names.length === 0) return;
      const batch = [...names];
      batches.push(batch);
      port1.postMessage(batch);
    },
    finish() {
      let moved = Atomics.load(shared, 0);
      while (moved < batches.length) {
        if (Atomics.wait(shared, 0, moved, FINISH_WAIT_MS) === 'timed-out') break;
        moved = Atomics.load(shared, 0);
      }
      // What the worker could not move, and every batch it has not reported: done here.
      for (let report = receiveMessageOnPort(port1); report !== undefined; report = receiveMessageOnPort(port1)) {
        for (const name of (report.message as MoverReport).failed) moveOne(spool, trash, name);
      }
      for (const batch of batches.slice(Atomics.load(shared, 0))) for (const name of batch) moveOne(spool, trash, name);
      port1.close();
      void worker.terminate();
    },
  };
}
