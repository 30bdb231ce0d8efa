/**
 * The Stop hook's Node helper (bundled into hooks/lib/reflect-helper.cjs with its dependencies, so
 * the vendored hook needs no node_modules). The hook gathers the facts with git and bash, calls
 * this to evaluate the risk floor and check the self-report with the real schemas, and falls back
 * to its bash twin when node is missing, fails or is too slow.
 *
 * The hook starts it first and sends the facts once git has answered, so node's own start overlaps
 * the hook's work: everything is loaded before stdin is read.
 *
 * Input: the facts FORGE_H_* as NUL-separated `NAME=value` records on stdin, read up to the end
 * record FORGE_H_END, or to stdin's end when none comes (an empty stdin: the hook gave up, nothing
 * is written; see parseFacts). Output: the sidecar JSON
 * written to $FORGE_H_OUT (created exclusively, 0600) and, with $FORGE_H_FINAL, linked to that name
 * when it is free (then the temp name is removed), and one status line on stdout:
 * `<ok|absent|invalid> <answer|file|none> [reason]`: what became of the self-report, and where it
 * came from (the final answer's `reflection` block, the self-report file, or neither). A refused
 * answer block is written to $FORGE_H_REJECTED_BLOCK for the hook to keep. Once the sidecar stands,
 * a self-report file that went into it is moved to $FORGE_H_INPUT_KEEP and the reflection.written
 * event is spooled (turn-end.ts). Before all that, and even when no other fact comes (the hook
 * stopped early or was killed), the Stop event the hook wrote to $FORGE_H_STOP_TMP is moved to
 * $FORGE_H_STOP_FINAL (the hook sends those two first, the rest once git has answered). With
 * $FORGE_H_REMOVE_INPUTS=1, the temp files it was given (payload, git status, committed list, and
 * on bash 3.2 the FIFO it reads the facts from, $FORGE_H_FIFO) are removed once it has placed the sidecar under its final name, saving the hook an `rm`; then the
 * session's count is written and its lock let go (turn-end.ts). After the end record the hook holds
 * stdin open until it exits: once stdin ends, the helper starts the drain the hook names
 * ($FORGE_H_DRAIN_CLI; see start-drain.ts). Exit 0 only when the sidecar was written.
 */
import { closeSync, writeSync } from 'node:fs';
import { changedList } from './changed-files.js';
import { type Facts, readFacts, waitForEnd } from './facts.js';
import { chooseSelfReport } from './self-report.js';
import { startDrain } from './start-drain.js';
import { placeFile, settleTurn } from './turn-end.js';
import { buildTurnSidecar, keepRefusedBlock, statusLine, writeSidecar } from './turn-sidecar.js';

function main(env: Facts): number {
  const out = env.FORGE_H_OUT;
  if (!out) return 2;
  const chosen = chooseSelfReport(env);
  const listed = env.FORGE_H_GIT_OK === '1' ? changedList(env) : null;
  const built = buildTurnSidecar(env, chosen, listed);
  writeSidecar(out, built);
  keepRefusedBlock(env, chosen, built);
  // The status goes out before the sidecar is placed: a helper stopped in between leaves the hook
  // a status and a sidecar still to place, never a placed sidecar without its status.
  writeSync(1, statusLine(chosen, built));
  const final = env.FORGE_H_FINAL;
  if (final && placeFile(out, final)) settleTurn(env, final, chosen, built);
  // Done with every file: the end of stdout tells the hook so now, not after node's own teardown,
  // which the hook does not wait for.
  if (env.FORGE_H_CLOSE_STDOUT === '1') closeSync(1);
  // What is left is the helper's own: starting the drain, and node's teardown. The hook sent its
  // facts with an end record and holds its end of stdin until it exits, so this waits for that and
  // neither competes with the hook's last steps for the CPU.
  waitForEnd();
  startDrain(env);
  return 0;
}

const facts = readFacts();
// The Stop event first, whatever else comes: the hook sends its names as soon as the file is
// complete, so a hook killed after that still has it spooled once this helper has started.
if (facts.FORGE_H_STOP_TMP && facts.FORGE_H_STOP_FINAL) placeFile(facts.FORGE_H_STOP_TMP, facts.FORGE_H_STOP_FINAL);
try {
  process.exitCode = main({ REFLECTION_RISK_THRESHOLD: process.env.REFLECTION_RISK_THRESHOLD, ...facts });
} catch (error) {
  process.stderr.write(`reflect-helper: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
