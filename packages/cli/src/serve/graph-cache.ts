import { createHash } from 'node:crypto';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { type LayoutOptions, layoutLineage } from './lineage-graph.js';

/**
 * What the graph is drawn from, as one hash: every listed field the layout reads. Two listings with
 * the same fingerprint give the same graph, whichever request listed them.
 */
export function listingFingerprint(checkpoints: readonly StoredCheckpoint[]): string {
  const hash = createHash('sha256');
  for (const checkpoint of checkpoints) {
    hash.update(
      JSON.stringify([
        checkpoint.id,
        checkpoint.parentId,
        checkpoint.lineageId,
        checkpoint.branch,
        checkpoint.createdAt,
        checkpoint.trigger,
        checkpoint.entities,
      ]),
    );
    hash.update('\n');
  }
  return hash.digest('base64url');
}

export interface GraphCacheOptions {
  /** Graphs kept (one per listing and set of expanded nodes), the least recently used dropped first. Default 16. */
  entries?: number;
  /** What lays a listing out. Default {@link layoutLineage}. */
  layout?: typeof layoutLineage;
}

/**
 * The `/api/graph` answer laid out and serialized once per listing fingerprint and set of expanded
 * nodes: over 10,000 checkpoints that is most of the request's time (bench/results/explorer.md),
 * and every page load, every tab and every expand-and-back asks for a graph already made.
 */
export class GraphCache {
  readonly #entries: number;
  readonly #layout: typeof layoutLineage;
  readonly #bodies = new Map<string, string>();
  /** A listing is hashed once, however many requests it answers. */
  readonly #fingerprints = new WeakMap<readonly StoredCheckpoint[], string>();

  constructor(options: GraphCacheOptions = {}) {
    this.#entries = Math.max(1, options.entries ?? 16);
    this.#layout = options.layout ?? layoutLineage;
  }

  /** The graph of `checkpoints` as JSON text, from the cache when this listing was laid out before. */
  body(checkpoints: readonly StoredCheckpoint[], options: Required<Pick<LayoutOptions, 'expand'>>): string {
    let fingerprint = this.#fingerprints.get(checkpoints);
    if (fingerprint === undefined) {
      fingerprint = listingFingerprint(checkpoints);
      this.#fingerprints.set(checkpoints, fingerprint);
    }
    const key = `${fingerprint} ${JSON.stringify([...options.expand].sort())}`;
    const cached = this.#bodies.get(key);
    if (cached !== undefined) {
      // Most recently used last: Map keeps insertion order.
      this.#bodies.delete(key);
      this.#bodies.set(key, cached);
      return cached;
    }
    const body = JSON.stringify(this.#layout(checkpoints, options));
    this.#bodies.set(key, body);
    if (this.#bodies.size > this.#entries) this.#bodies.delete(this.#bodies.keys().next().value!);
    return body;
  }
}
