// How long a whole run takes right now: the kill delays are drawn from [0, this]. A fixed figure
// measured once at the start is wrong as soon as the machine's load changes (a shared 2-core VM:
// start-up stretches first, so kills pile up before the first checkpoint, or land after the run
// ended). So the estimate follows the whole runs the trials make anyway.

/** Recent samples the estimate is the median of. */
const window = 9;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** A running estimate of a whole run's wall time (spawn to exit): the median of the latest runs. */
export class RunLength {
  readonly #samples: number[] = [];
  /** Every estimate handed out, for the report. */
  readonly used: number[] = [];

  constructor(initial: readonly number[]) {
    if (initial.length === 0) throw new Error('RunLength needs at least one measured run');
    this.#samples.push(...initial);
  }

  /** A whole, uninterrupted run took `wallMs`. */
  add(wallMs: number): void {
    this.#samples.push(wallMs);
  }

  /** The current estimate (also recorded in `used`). */
  current(): number {
    const estimate = median(this.#samples.slice(-window));
    this.used.push(estimate);
    return estimate;
  }
}
