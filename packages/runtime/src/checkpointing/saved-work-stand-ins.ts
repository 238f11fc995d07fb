import type { EntitySnapshot } from '@crewline/runtime-state';
import { parseFlowData } from '@crewline/runtime-state/internal';

/**
 * The saved snapshots that stand in, in the entity list of a restored run, for work not taken up
 * again yet: those with `ids` (what the executions of a flow due to run again had started) and, for
 * a saved flow among them, what it holds of its own (the crews its completed methods ran, and those
 * its own executions due to run again had started), in saved order. Until its entity claims it,
 * every checkpoint of the run still holds that work; one nobody claims (the method no longer kicks
 * that crew off) stays as saved.
 */
export function savedWorkOf(unclaimed: readonly EntitySnapshot[], ids: Iterable<string>): EntitySnapshot[] {
  const wanted = new Set(ids);
  const flowsSeen = new Set<string>();
  let grown = true;
  while (grown) {
    grown = false;
    for (const snapshot of unclaimed) {
      if (snapshot.kind !== 'flow' || !wanted.has(snapshot.id) || flowsSeen.has(snapshot.id)) continue;
      flowsSeen.add(snapshot.id);
      const { execution } = parseFlowData(snapshot);
      const held = [...execution.nestedEntities, ...execution.pending.flatMap((due) => due.started ?? [])];
      for (const entity of held) {
        if (entity.id === undefined || wanted.has(entity.id)) continue;
        wanted.add(entity.id);
        grown = true;
      }
    }
  }
  return unclaimed.filter((snapshot) => wanted.has(snapshot.id));
}
