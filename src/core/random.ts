/**
 * mulberry32: a 32-bit seeded generator (Tommy Ettinger's, public domain).
 * Small, fast and reproducible across platforms, which is all the
 * permutation test needs: the same seed gives the same flips, so the same
 * scores always give the same p-value. Not for anything secret.
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

