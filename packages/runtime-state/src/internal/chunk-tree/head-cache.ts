import type { EncodedNode } from './tree-node.js';

/**
 * The head trees a provider wrote last, by checkpoint id: the next write of a run diffs against its
 * parent's tree from here instead of rebuilding it from storage. Keeps the newest `capacity`.
 */
export class HeadCache {
  /** Oldest first, for eviction. */
  readonly #heads = new Map<string, EncodedNode>();

  constructor(readonly capacity = 16) {}

  /** The head tree written for `id`, while it is still remembered. */
  get(id: string): EncodedNode | undefined {
    return this.#heads.get(id);
  }

  remember(id: string, head: EncodedNode): void {
    this.#heads.delete(id);
    this.#heads.set(id, head);
    if (this.#heads.size > this.capacity) this.#heads.delete(this.#heads.keys().next().value!);
  }

  /** Drops the tree of a checkpoint that was removed (its chunks may be collected). */
  forget(id: string): void {
    this.#heads.delete(id);
  }

  clear(): void {
    this.#heads.clear();
  }
}
