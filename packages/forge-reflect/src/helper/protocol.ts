/**
 * What the Stop hook tells its Node helper: the facts, as NUL-separated `NAME=value` records on
 * the helper's stdin (a value may hold any byte but NUL, newlines too), then the end record.
 * hooks/reflect-stop-hook.sh sends exactly these names (test/helper-protocol.test.ts greps it);
 * the helper reads no other.
 */

export const FACTS = [
  // Sent first, as soon as the helper starts (before git has answered).
  /** The code cache's folder; read by the start (code-cache.ts) before this protocol is parsed. */
  'FORGE_H_CODE_CACHE',
  /** The Stop event the hook wrote, and the spool name the helper moves it to, whatever else comes. */
  'FORGE_H_STOP_TMP',
  'FORGE_H_STOP_FINAL',

  // The sidecar: where it goes, and what it is built from.
  /** The temp name the sidecar is written to (exclusively, 0600), and its final name. */
  'FORGE_H_OUT',
  'FORGE_H_FINAL',
  /** The files the hook left: `git status` output (against HEAD or a `snapshot`: STATUS_BASE), the committed list, the payload. */
  'FORGE_H_STATUS',
  'FORGE_H_STATUS_BASE',
  'FORGE_H_COMMITTED',
  'FORGE_H_PAYLOAD',
  /** Whether git answered, a note on the file listing, why the hook could not see the change. */
  'FORGE_H_GIT_OK',
  'FORGE_H_LISTING_NOTE',
  'FORGE_H_BLIND',
  /** For the files of a new folder (`? dir/`): the work tree, the index the status read, the git budget left. */
  'FORGE_H_GIT_ROOT',
  'FORGE_H_GIT_INDEX',
  'FORGE_H_GIT_SECONDS',
  /** The self-report file taken for this turn, where it is kept once used, where a refused answer block goes. */
  'FORGE_H_INPUT',
  'FORGE_H_INPUT_KEEP',
  'FORGE_H_REJECTED_BLOCK',
  /** The turn: session, its start, task, agent, repo, time, mode and attempt. */
  'FORGE_H_SESSION_ID',
  'FORGE_H_SESSION_START_US',
  'FORGE_H_TASK_REF',
  'FORGE_H_AGENT',
  'FORGE_H_REPO',
  'FORGE_H_TIMESTAMP',
  'FORGE_H_MODE',
  'FORGE_H_ATTEMPT',

  // After the sidecar stands.
  /** The reflection.written event: its temp file, spool name and envelope. */
  'FORGE_H_WRITTEN_TMP',
  'FORGE_H_WRITTEN_FINAL',
  'FORGE_H_WRITTEN_ENVELOPE',
  /** `1`: remove the temp files given (and the FIFO the facts came through, on bash 3.2). */
  'FORGE_H_REMOVE_INPUTS',
  'FORGE_H_FIFO',
  /** The session's turn count and where it is kept; the session lock and its owner, let go at the end. */
  'FORGE_H_COUNT_FILE',
  'FORGE_H_COUNT',
  'FORGE_H_LOCK',
  'FORGE_H_LOCK_OWNER',
  /** The drain started once stdin ends: the CLI, its working folder and state folder. */
  'FORGE_H_DRAIN_CLI',
  'FORGE_H_DRAIN_CWD',
  'FORGE_H_DRAIN_STATE',
  /** `1`: close stdout once done with every file: the end of the hook's wait. */
  'FORGE_H_CLOSE_STDOUT',
] as const;

export type FactName = (typeof FACTS)[number];

/** The facts of one turn; a fact the hook did not send is absent. */
export type Facts = Partial<Record<FactName, string>>;

/** The hook's last record: the facts are complete, and stdin stays open until the hook exits. */
export const END_RECORD = 'FORGE_H_END=1\0';

const NAMES: ReadonlySet<string> = new Set(FACTS);

/** The facts in `text`; a record without `=`, or with a name not in FACTS (the end record too), is skipped. */
export function parseFacts(text: string): Facts {
  const facts: Facts = {};
  for (const record of text.split('\0')) {
    const eq = record.indexOf('=');
    if (eq > 0 && NAMES.has(record.slice(0, eq))) facts[record.slice(0, eq) as FactName] = record.slice(eq + 1);
  }
  return facts;
}
