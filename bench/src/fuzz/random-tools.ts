// Small choices the fuzz generators make from a seeded random stream.

export type Random = () => number;

/** A whole number in [0, below). */
export function integerBelow(random: Random, below: number): number {
  return Math.floor(random() * below);
}

/** A whole number in [low, high]. */
export function integerBetween(random: Random, low: number, high: number): number {
  return low + integerBelow(random, high - low + 1);
}

/** One element of a non-empty list. */
export function pick<T>(random: Random, items: readonly T[]): T {
  return items[integerBelow(random, items.length)]!;
}

/** Random bytes (garbage for database pages). */
export function randomBytes(random: Random, length: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let index = 0; index < length; index += 1) bytes[index] = integerBelow(random, 256);
  return bytes;
}
