import type { Facts } from './facts.js';

/**
 * Starts the drain ($FORGE_H_DRAIN_CLI ingest, in $FORGE_H_DRAIN_CWD, FORGE_DIR=$FORGE_H_DRAIN_STATE)
 * in a session of its own, reading and writing nothing of ours, after the hook has exited: it costs
 * the hook nothing (a fork of the drain inside the hook was paid at every Stop). child_process is loaded
 * only now. A drain that cannot start is the next command's to do.
 */
export function startDrain(env: Facts): void {
  const cli = env.FORGE_H_DRAIN_CLI;
  const cwd = env.FORGE_H_DRAIN_CWD;
  const state = env.FORGE_H_DRAIN_STATE;
  if (!cli?.startsWith('/') || !cwd?.startsWith('/') || !state?.startsWith('/')) return;
  try {
    // The require the bundle runs with (helper-code-cache.ts passes its own): the helper runs in a
    // vm script, where a dynamic import() is refused. Not createRequire: importing node:module
    // loads its source-map and ESM parts, which every Stop would pay.
    const { spawn } = require('node:child_process') as typeof import('node:child_process');
    const child = spawn(cli, ['ingest'], { cwd, detached: true, stdio: 'ignore', env: { ...process.env, FORGE_DIR: state } });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // not started: the next forge-reflect command drains
  }
}
