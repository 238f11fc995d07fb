import type { EventRecord } from '@crewline/events';
import { type CheckpointMetadata, type CheckpointProvider, readDocument } from '@crewline/runtime-state';

/** The checkpoint a lineage was forked from, with the history it held. */
export interface ForkPoint {
  id: string;
  events: readonly EventRecord[];
}

/**
 * The checkpoint that `metadata`'s lineage was forked from, where an existing fork branched off (the
 * worker's `findForkPoint` does another thing: it chooses, for a fork about to be queued, the
 * checkpoint to branch off): the parent of the lineage's first checkpoint, when that parent belongs
 * to another lineage (a fork starts a new lineage; a resume continues its own). `undefined` for a lineage that is not a fork, or whose fork point cannot be read
 * any more (pruned, damaged): the caller then counts the whole history as the lineage's own.
 */
export async function findCheckpointForkedFrom(
  provider: CheckpointProvider,
  location: string,
  metadata: CheckpointMetadata,
): Promise<ForkPoint | undefined> {
  try {
    const lineage = new Map(
      (await provider.list(location, { lineageId: metadata.lineageId })).map((checkpoint) => [
        checkpoint.id,
        checkpoint,
      ]),
    );
    let parentId = metadata.parentId;
    const seen = new Set<string>();
    while (parentId !== null && lineage.has(parentId) && !seen.has(parentId)) {
      seen.add(parentId);
      parentId = lineage.get(parentId)!.parentId;
    }
    if (parentId === null) return undefined;
    const parent = await readDocument(provider, location, parentId);
    // A pruned checkpoint of the same lineage is no fork point: its parent is simply gone.
    if (parent.metadata.lineageId === metadata.lineageId) return undefined;
    return { id: parentId, events: parent.events };
  } catch {
    // Pruned or unreadable: the cost then includes the inherited calls rather than failing `info`.
    return undefined;
  }
}
