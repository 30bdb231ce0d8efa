/**
 * The worker thread of sidecar-reader.ts: given its paths (the first message), claims chunks of them
 * from the shared counter, reads them and posts each chunk's rows, counting each post in the shared
 * signal so the main thread wakes for it. It ends with `{ done: true }`, after a failure too: a chunk it claimed and did not
 * post is read by the main thread.
 */
import { workerData } from 'node:worker_threads';
import { CHUNK, readChunkRows, type ReaderData, type ReaderMessage } from './sidecar-reader.js';

const { port, shared } = workerData as ReaderData;

function post(message: ReaderMessage): void {
  port.postMessage(message);
  Atomics.add(shared, 0, 1);
  Atomics.notify(shared, 0);
}

function read(paths: string[]): void {
  const chunks = Math.ceil(paths.length / CHUNK);
  for (let chunk = Atomics.add(shared, 1, 1); chunk < chunks; chunk = Atomics.add(shared, 1, 1)) post({ chunk, rows: readChunkRows(paths, chunk) });
}

// Started while the folder is listed; the paths come as the first message.
port.once('message', (paths: string[]) => {
  try {
    read(paths);
  } catch {
    // the chunk not posted is read by the main thread
  } finally {
    post({ done: true });
    port.close();
  }
});
