/**
 * The log a command that only reads opens. A command that only reads never creates state: when
 * the state folder holds no event log and nothing waits in the spool, it gets an empty log in
 * memory (no `.forge/`, no `events.db`) and simply finds nothing. Commands that write (ingest,
 * bounce, outcome, learn add, metrics snapshot, install) open the real log, which creates it.
 */
import { existsSync, readdirSync } from 'node:fs';
import { openDrainedLog, type DrainOptions } from './drain.js';
import { openEmptyEventLog, openEventLog, type EventLog } from './event-log.js';
import { isSpoolFileName } from './spool-event.js';
import { isSegmentName, LIVE_LOG_NAME } from './spool-log.js';
import { eventsDbPathOf, spoolDirOf } from '../state-dir.js';

/** Whether a state folder has anything to read: an event log, or events waiting in its spool. */
export function hasState(stateDir: string): boolean {
  if (existsSync(eventsDbPathOf(stateDir))) return true;
  try {
    return readdirSync(spoolDirOf(stateDir)).some((name) => isSpoolFileName(name) || name === LIVE_LOG_NAME || isSegmentName(name));
  } catch {
    return false;
  }
}

/**
 * The state's log as it is, or an empty one in memory when there is no state yet. With `cache`
 * (report, corpus: the sidecar index lives in the log), a state folder that already exists counts
 * as state, so the index is kept there; the folder itself is still never created.
 */
export function openLogForReading(stateDir: string, options: { cache?: boolean } = {}): EventLog {
  const keep = hasState(stateDir) || (options.cache === true && existsSync(stateDir));
  return keep ? openEventLog(stateDir) : openEmptyEventLog(stateDir);
}

/** The state's log brought up to date (see openDrainedLog), or an empty one in memory when there is no state yet. */
export function openDrainedLogForReading(stateDir: string, options: Omit<DrainOptions, 'log'> = {}): EventLog {
  return hasState(stateDir) ? openDrainedLog(stateDir, options) : openEmptyEventLog(stateDir);
}
