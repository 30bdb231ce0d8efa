/**
 * The worker thread of spool-mover.ts: renames each batch of committed spool files it is sent into
 * the trash folder, then reports the names it could not move and counts the batch in the shared
 * counter the main thread waits on.
 */
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { workerData } from 'node:worker_threads';
import type { MoverData, MoverReport } from './spool-mover.js';

const { spool, trash, port, shared } = workerData as MoverData;

port.on('message', (names: string[]) => {
  const failed: string[] = [];
  for (const name of names) {
    try {
      renameSync(join(spool, name), join(trash, name));
    } catch {
      failed.push(name);
    }
  }
  const report: MoverReport = { failed };
  port.postMessage(report);
  Atomics.add(shared, 0, 1);
  Atomics.notify(shared, 0);
});
