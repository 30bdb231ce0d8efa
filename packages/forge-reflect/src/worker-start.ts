/**
 * Starts one of the CLI's helper threads (report/sidecar-reader-worker.ts) with a MessagePort of
 * its own, or gives undefined, so the caller does the work on its own thread: when there is no
 * worker file beside the caller (run from the TypeScript sources, as the unit tests do) or the
 * thread cannot be started. The thread gets none of this process's execArgv (an
 * `--input-type` or a `--require` is not meant for it), never keeps the process alive, and an
 * error in it never ends the process: the caller notices what it did not deliver.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';

export interface StartedWorker {
  /** This side of the channel; the worker's side is `port` in its workerData. */
  port: MessagePort;
  worker: Worker;
}

export function startWorker(url: URL, data: (port: MessagePort) => object): StartedWorker | undefined {
  if (url.protocol !== 'file:' || !existsSync(fileURLToPath(url))) return undefined;
  const { port1, port2 } = new MessageChannel();
  let worker: Worker;
  try {
    worker = new Worker(url, { workerData: data(port2), transferList: [port2], execArgv: [] });
  } catch {
    port1.close();
    return undefined;
  }
  worker.on('error', () => {});
  worker.unref();
  return { port: port1, worker };
}
