/** Seeded randomness for the test suites: every random case is reproducible from its seed. */
// The kit's own PRNG (the one the bootstrap uses), not a copy of it.
export { mulberry32 } from '../../packages/forge-reflect/src/analysis/prng.js';

export function pick<T>(items: readonly T[], rand: () => number): T {
  const item = items[Math.floor(rand() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}
