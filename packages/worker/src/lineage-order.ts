import type { StoredCheckpoint } from '@crewline/runtime-state';

/**
 * A run's lineage oldest first: by the events each checkpoint holds (they only grow along a lineage),
 * then by time. Times alone tie when checkpoints are written within a millisecond. The one order of
 * the worker's readers: the newest checkpoint of `queue.progress`, the re-run point of `queue.fork`.
 */
export function lineageOrder(checkpoints: readonly StoredCheckpoint[]): StoredCheckpoint[] {
  return [...checkpoints].sort(
    (a, b) =>
      a.eventCount - b.eventCount || (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0),
  );
}
