// The two checks yargs takes from node:assert (its ESM platform shim), without loading node:assert:
// that module and what it pulls in would be loaded at every CLI start. bundle-cli.mjs puts this
// file in place of yargs' `assert` import. The contract yargs relies on: throw when the check
// fails (compared with ===, where node:assert uses Object.is: yargs compares strings and numbers).
export function strictEqual(actual, expected, message) {
  if (actual !== expected) throw new Error(message ?? `expected ${String(expected)}, got ${String(actual)}`);
}

export function notStrictEqual(actual, expected, message) {
  if (actual === expected) throw new Error(message ?? `expected anything but ${String(expected)}`);
}
