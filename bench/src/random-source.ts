// Seeded randomness shared by the crash trials and the fuzz suite: the same seed gives the same kill
// moments and the same generated cases, so a failure can be replayed.

/** A small seeded generator (mulberry32) returning numbers in [0, 1). */
export function randomSource(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seed drawn at random, for runs not given one (it is printed, so the run can be repeated). */
export function randomSeed(): number {
  return Math.floor(Math.random() * 2 ** 31);
}

/**
 * The generator of case `index` of a run seeded with `seed`: each case has its own stream, so one
 * case can be replayed alone without generating the ones before it.
 */
export function caseRandom(seed: number, index: number): () => number {
  // Mixing with an odd constant spreads neighbouring indexes over distant starting states.
  return randomSource((Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b)) >>> 0);
}
