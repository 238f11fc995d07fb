import { redactionGeneration } from '@crewline/events';
import type { SettledParts } from './provider.js';
import { type RedactionMarks, redactAndSettle, redactSecrets } from './redaction.js';

/**
 * The parts of one run's checkpoints that will not change again: a completed task's stored form,
 * an agent definition, a finished conversation message, a completed flow method's output. The run
 * owns one (`RuntimeState.settled`) and hands it to each entity's `snapshotEntity`; an entity passes
 * such a part through {@link settle} and gives the same object back in every later snapshot.
 *
 * What that buys: the part is redacted once (again only when a secret registered since asks for
 * it), and a provider that stores what changed is told, with each write
 * (`CheckpointWrite.settled`), that meeting the very same object again it may reuse what it stored
 * for it without comparing it. Nothing is marked on the objects themselves or process-wide: another
 * run, and a provider written without this in mind, simply see plain values.
 */
export class SettledValues implements SettledParts, RedactionMarks {
  /** Each settled object handed out, with the redaction generation it was last scanned under. */
  readonly #scanned = new WeakMap<object, number>();
  /** A value given to {@link settle} whose redacted form is another object (it held a secret). */
  readonly #redactedForms = new WeakMap<object, object>();
  /**
   * The settled items of the last long arrays redaction walked, by their first item (see
   * `RedactionMarks.settledItemsLike`): the newest 64, so that a flow whose checkpoints hold the
   * task lists of many crews, walked in turn, finds each of them again.
   */
  readonly #settledItems = new Map<unknown, { generation: number; items: readonly unknown[] }>();
  /** The first item of the list remembered last (the newest entry of `#settledItems`). */
  #newestFirstItem: unknown;

  /**
   * `value` redacted and settled: the caller promises never to change it (nor what it holds) again.
   * Give the same object each time; the first call scans it, later ones return at once the object
   * to store (`value` itself unless redaction had to change it).
   */
  settle<T>(value: T): T {
    if (value === null || typeof value !== 'object') return redactSecrets(value);
    const generation = redactionGeneration();
    // The common case first: `value` is itself the settled form (it held no secret).
    if (this.#scanned.get(value) === generation) return value;
    const known = this.#redactedForms.get(value) ?? value;
    if (this.#scanned.get(known) === generation) return known as T;
    // Every object of the redacted tree is settled with it (see redactAndSettle).
    const redacted = redactAndSettle(known, generation, this) as object;
    if (redacted !== value) this.#redactedForms.set(value, redacted);
    return redacted as T;
  }

  /** True for an object {@link settle} returned, or one inside it: its content is what it was then. */
  has(value: object): boolean {
    return this.#scanned.has(value);
  }

  scannedUnder(value: object): number | undefined {
    return this.#scanned.get(value);
  }

  rescanned(value: object, generation: number): void {
    this.#scanned.set(value, generation);
  }

  settledItemsLike(array: readonly unknown[], generation: number): readonly unknown[] | undefined {
    const known = this.#settledItems.get(array[0]);
    return known?.generation === generation ? known.items : undefined;
  }

  rememberSettledItems(items: readonly unknown[], generation: number): void {
    // Only an array that starts with a settled object is worth finding again by it.
    const first = items[0];
    if (first === undefined) return;
    // The list just found again, already the newest: a running crew's, snapshot after snapshot.
    const entry = this.#settledItems.get(first);
    if (this.#newestFirstItem === first && entry?.items === items && entry.generation === generation) return;
    this.#newestFirstItem = first;
    this.#settledItems.delete(first);
    this.#settledItems.set(first, { generation, items });
    if (this.#settledItems.size > 64) this.#settledItems.delete(this.#settledItems.keys().next().value);
  }
}
