import { createCheckpointWrite } from '../checkpoint-write.js';
import type { CheckpointDocument } from '../document.js';
import type { CheckpointWrite } from '../provider.js';

/**
 * The checkpoint a fork came from, written again right before the fork's first checkpoint in each
 * location the fork writes to, and once more right after it.
 *
 * Why: retention keeps a fork point only once a checkpoint of the fork names it (see planPrune).
 * Between the restore and the fork's first write (a whole task with the default `onEvents`, or the
 * time until `kickoff`), the origin's own run may prune it (its `maxCheckpoints`, or
 * `crewline checkpoint prune`), and the fork's first checkpoint would name a parent that is gone:
 * the tree would no longer be recoverable from storage alone. Written again first, the origin is
 * back where a prune removed it meanwhile. Not only after: a process killed between the two writes
 * (SIGKILL, a power loss) left the fork's first checkpoint naming a parent that was gone for good;
 * written before, such a kill leaves only the origin back in its run (a checkpoint that run may
 * resume or fork again, kept until deleted: nothing continues it, so no prune removes it). Once more
 * after: until the fork's checkpoint names it, the copy is an old checkpoint of its run that nothing
 * names, which a prune of that run landing between the two writes removes again; written after too,
 * it is back, now a fork point every later prune keeps. No provider has to store two checkpoints of
 * two runs in one step. Where it is still stored a write changes nothing: a provider accepts a
 * checkpoint written again as the one it holds. In a location that never held it (a fork writing
 * elsewhere), the copy gives the fork's first checkpoint its parent there too. It is the checkpoint
 * as stored, never a copy edited before the restore (task outputs replaced: see
 * RuntimeState.fromDocument's `origin`): stored under its id, an edit would read as what the
 * origin's run produced.
 */
export class ForkOrigin {
  readonly id: string;
  readonly write: CheckpointWrite;

  constructor(document: CheckpointDocument) {
    this.id = document.metadata.id;
    // Copied when the run forks, before it runs: restored entities may hold parts of the document
    // and change them as the fork goes on, and the origin must be stored as it was read.
    const copy = structuredClone({
      metadata: document.metadata,
      inputs: document.inputs,
      entities: document.entities,
    });
    this.write = createCheckpointWrite({
      ...copy,
      events: document.events.slice(),
      // Its parent is the origin run's business (and may be pruned): nothing shared is assumed.
      parentEventCount: 0,
    });
  }
}
