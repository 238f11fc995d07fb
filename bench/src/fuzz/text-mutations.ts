// Damage to the bytes of a checkpoint file: what a crash, a full disk or a bad copy leaves.
import type { JsonMutation } from './json-mutation.js';
import { integerBelow, integerBetween } from './random-tools.js';

/** The file cut at a random byte (possibly inside a multi-byte character). */
export const truncation: JsonMutation = {
  name: 'truncation',
  description: 'the file cut at a random byte offset',
  mutate(seed, random) {
    const bytes = Buffer.from(seed.text, 'utf8');
    const length = integerBelow(random, bytes.length);
    return { content: bytes.subarray(0, length), detail: `cut at byte ${length} of ${bytes.length}` };
  },
};

/**
 * Random bits flipped; half the time within the first 2 KB (envelope and metadata, which the
 * listing reads on its own), else anywhere.
 */
export const bitFlips: JsonMutation = {
  name: 'bit-flips',
  description: '1–8 random bits flipped (half the time within the first 2 KB)',
  mutate(seed, random) {
    const bytes = Buffer.from(seed.text, 'utf8');
    const span = random() < 0.5 ? Math.min(2048, bytes.length) : bytes.length;
    const flips = integerBetween(random, 1, 8);
    const offsets: number[] = [];
    for (let flip = 0; flip < flips; flip += 1) {
      const offset = integerBelow(random, span);
      bytes[offset] = bytes[offset]! ^ (1 << integerBelow(random, 8));
      offsets.push(offset);
    }
    return { content: bytes, detail: `bits flipped at bytes ${offsets.join(', ')}` };
  },
};
