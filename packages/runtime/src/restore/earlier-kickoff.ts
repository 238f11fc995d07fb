import type { EventBus } from '@crewline/events';
import type { CheckpointableEntity } from '@crewline/runtime-state';
import { Run } from '../checkpointing/run.js';

/**
 * A crew or agent kicked off again in the run it already ran in (a loop in a flow method, a crew
 * kept on the flow and kicked off by two methods): its earlier kickoff stays in the run's
 * checkpoints as an entity of its own (see `RuntimeState.keepEarlierKickoff`). True when it did:
 * the object then needs a new id before this kickoff joins the run, so each kickoff's events and
 * saved work are told apart, and a restore hands the n-th kickoff the n-th one's work. Called before
 * anything is restored onto the object or reset, so the earlier kickoff is kept as it ended.
 */
export function keepEarlierKickoff(entity: CheckpointableEntity, bus: EventBus | undefined): boolean {
  return Run.current(bus)?.state.keepEarlierKickoff(entity) ?? false;
}
