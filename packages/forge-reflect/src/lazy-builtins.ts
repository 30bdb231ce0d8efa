/**
 * Node built-ins taken when first used instead of at import. An ESM `import … from 'node:crypto'`
 * builds the whole module namespace when the importing module loads (its lazy `webcrypto` too),
 * and node:child_process brings net, dgram and the streams, at the start of every command whose
 * modules name them, whether or not it ever hashes or spawns. Not for the Stop hook's helper: its
 * CommonJS bundle has no import.meta (scripts/build/bundle-hook-helper.mjs refuses it).
 */
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

export function nodeCrypto(): typeof import('node:crypto') {
  return load('node:crypto') as typeof import('node:crypto');
}

export function nodeChildProcess(): typeof import('node:child_process') {
  return load('node:child_process') as typeof import('node:child_process');
}
