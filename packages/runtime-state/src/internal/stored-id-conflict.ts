import { CrewlineError } from '@crewline/events';
import type { CheckpointMetadata } from '../document.js';

/** What tells a checkpoint written again (a retried write) from another one under the same id. */
export type CheckpointIdentity = Pick<
  CheckpointMetadata,
  'lineageId' | 'branch' | 'parentId' | 'eventCount' | 'createdAt'
>;

/**
 * True when `stored` (what a location holds under an id) is the checkpoint `metadata` describes: a
 * retried write whose first attempt was stored, which a provider accepts without storing it twice.
 */
export function isSameCheckpoint(stored: CheckpointIdentity, metadata: CheckpointIdentity): boolean {
  return (
    stored.lineageId === metadata.lineageId &&
    stored.branch === metadata.branch &&
    stored.parentId === metadata.parentId &&
    stored.eventCount === metadata.eventCount &&
    stored.createdAt === metadata.createdAt
  );
}

/**
 * The `conflict` a provider (`component`) throws for a checkpoint whose id `location` already holds
 * with other content; `details.duplicateId` names the id, so that programs need not read the message.
 */
export function storedIdConflict(component: string, id: string, location: string): CrewlineError {
  return new CrewlineError(
    component,
    'conflict',
    `checkpoint id "${id}" already exists in ${location} with other content; checkpoint ids must be unique`,
    { details: { duplicateId: id } },
  );
}
