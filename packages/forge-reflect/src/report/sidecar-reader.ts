/**
 * The sidecars an index must read. Many of them (a cold index) are read by two threads: a worker
 * and the main thread, which also writes every row into SQLite. Reading and parsing a sidecar (open,
 * fstat, read, close, JSON.parse, the schema check) costs more than its insert, so both threads
 * read: the paths are cut into chunks that each thread claims from a shared counter, and the main
 * thread reads a chunk itself only when no batch from the worker is waiting. The main thread stays
 * synchronous (the index is one transaction): it takes the worker's batches with
 * receiveMessageOnPort and, when every chunk is claimed, sleeps on a shared counter until the next.
 * A chunk the worker claimed but did not deliver (it failed, or stalled for STALL_MS) is read
 * inline, so the worker can only make the index faster, never lose a file.
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { startWorker } from '../worker-start.js';
import { readSidecarRow, type SidecarRow } from './sidecar-read.js';

/** From how many files a worker helps (below that its start costs more than it saves). */
export const WORKER_FROM = 1_000;
/** Paths per chunk (and per message from the worker). */
export const CHUNK = 256;
/**
 * A worker that delivers nothing for this long is given up: what it claimed is read inline (a chunk
 * takes it a few ms; a worker that failed to start never delivers).
 */
const STALL_MS = 2_000;

/** What the worker posts: the rows of one chunk (null: gone or not a regular file), or its end. */
export type ReaderMessage = { chunk: number; rows: Array<SidecarRow | null> } | { done: true };

export interface ReaderData {
  /** The paths come as the first message on the port. */
  port: MessagePort;
  /** shared[0] counts the messages posted (the main thread sleeps on it); shared[1] is the next chunk to claim. */
  shared: Int32Array;
}

/** A path and its row (undefined: gone, or not a regular file); every path once, in no set order. */
export type ReadResult = { path: string; row: SidecarRow | undefined };

/** The rows of one chunk of `paths`, read on the calling thread (the worker's too). */
export function readChunkRows(paths: readonly string[], chunk: number): Array<SidecarRow | null> {
  const rows: Array<SidecarRow | null> = [];
  const end = Math.min(paths.length, (chunk + 1) * CHUNK);
  for (let i = chunk * CHUNK; i < end; i++) rows.push(readSidecarRow(paths[i] as string) ?? null);
  return rows;
}

/** Each path of a chunk with its row. */
function* withPaths(paths: readonly string[], chunk: number, rows: ReadonlyArray<SidecarRow | null>): Generator<ReadResult> {
  for (let i = 0; i < rows.length; i++) yield { path: paths[chunk * CHUNK + i] as string, row: rows[i] ?? undefined };
}

export interface ReadOptions {
  /** Read with a worker thread too (default: from WORKER_FROM paths on), or with this one, already started. */
  worker?: boolean | StartedReader;
  /** The main thread reads chunks too (default true; false: only what the worker leaves, for tests). */
  mainReads?: boolean;
  /** Counts, for tests: the chunks the worker delivered. */
  stats?: { workerChunks: number };
}

export function* readSidecarRows(paths: readonly string[], options: ReadOptions = {}): Generator<ReadResult> {
  const chunks = Math.ceil(paths.length / CHUNK);
  const given = options.worker;
  const worker = typeof given === 'object' ? given : (given ?? paths.length >= WORKER_FROM) ? startSidecarReader() : undefined;
  if (worker === undefined) {
    for (let c = 0; c < chunks; c++) yield* withPaths(paths, c, readChunkRows(paths, c));
    return;
  }
  const { shared } = worker;
  worker.begin(paths);
  const done = new Set<number>();
  try {
    let workerDone = false;
    while (done.size < chunks) {
      const posted = Atomics.load(shared, 0);
      const got = workerDone ? undefined : (receiveMessageOnPort(worker.port) as { message: ReaderMessage } | undefined);
      if (got !== undefined) {
        const message = got.message;
        if ('done' in message) {
          workerDone = true;
          continue;
        }
        done.add(message.chunk);
        if (options.stats) options.stats.workerChunks++;
        yield* withPaths(paths, message.chunk, message.rows);
        continue;
      }
      const mine = options.mainReads === false ? chunks : Atomics.add(shared, 1, 1);
      if (mine < chunks) {
        done.add(mine);
        yield* withPaths(paths, mine, readChunkRows(paths, mine));
        continue;
      }
      // Every chunk is claimed: wait for the worker's, unless it has ended or stalls.
      if (workerDone || Atomics.wait(shared, 0, posted, STALL_MS) === 'timed-out') {
        for (let c = 0; c < chunks; c++) {
          if (done.has(c)) continue;
          done.add(c);
          yield* withPaths(paths, c, readChunkRows(paths, c));
        }
      }
    }
  } finally {
    worker.stop();
  }
}

/** A worker started before its paths are known (it boots while the folder is listed). */
export interface StartedReader {
  port: MessagePort;
  shared: Int32Array;
  /** Gives the worker its paths (once). */
  begin: (paths: readonly string[]) => void;
  stop: () => void;
}

/**
 * Starts a reader worker ahead of its paths, or undefined when there is no worker file (run from the
 * TypeScript sources: the unit tests) or it cannot start. Pass it to readSidecarRows, or stop it.
 */
export function startSidecarReader(): StartedReader | undefined {
  const shared = new Int32Array(new SharedArrayBuffer(8));
  const started = startWorker(new URL('./sidecar-reader-worker.js', import.meta.url), (port): ReaderData => ({ port, shared }));
  if (started === undefined) return undefined;
  const { port: port1, worker } = started;
  return {
    port: port1,
    shared,
    begin(paths) {
      port1.postMessage([...paths]);
    },
    stop() {
      // No chunk is left to claim (a worker still running stops at its next claim), then it goes.
      Atomics.store(shared, 1, 0x3fffffff);
      port1.close();
      void worker.terminate();
    },
  };
}
