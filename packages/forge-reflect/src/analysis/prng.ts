/**
 * A small seeded PRNG (mulberry32): the same seed gives the same stream on every platform, so a
 * bootstrap interval is reproducible. Not for anything that needs unpredictability.
 */
export type Random = () => number;

/** Uniform floats in [0, 1) from a 32-bit seed. */
export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A uniform index in [0, n). */
export function randomIndex(random: Random, n: number): number {
  return Math.min(n - 1, Math.floor(random() * n));
}
