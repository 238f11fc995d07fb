import { CrewlineError } from '@crewline/events';
import { CHECKPOINT_FORMAT } from '../document.js';
import { isValidBranchName, isValidCheckpointId } from '../ids.js';
import type { CheckpointWrite } from '../provider.js';

/**
 * The id and branch of the last checkpoint a provider checked and found valid: a run's next write has
 * the same branch, and that id as its parent, so most writes need not check them again.
 */
export interface CheckedNames {
  readonly id?: string;
  readonly branch?: string;
}

const nothingChecked: CheckedNames = {};

/**
 * Refuses a checkpoint whose names could escape the meaning they have in storage, or whose shape is
 * off, with errors of `component` (the provider). Names equal to `checked` are taken as valid. The
 * lease the write carries is the provider's to check.
 */
export function checkCheckpointWrite(
  component: string,
  checkpoint: CheckpointWrite,
  checked: CheckedNames = nothingChecked,
): void {
  const { metadata, document } = checkpoint;
  if (typeof metadata.id !== 'string' || !isValidCheckpointId(metadata.id)) {
    throw new CrewlineError(
      component,
      'invalid_name',
      `checkpoint id ${JSON.stringify(metadata.id)} is not allowed; ids are letters, digits, "_", "." and "-"`,
    );
  }
  if (
    typeof metadata.branch !== 'string' ||
    (metadata.branch !== checked.branch && !isValidBranchName(metadata.branch))
  ) {
    throw new CrewlineError(
      component,
      'invalid_name',
      `branch name ${JSON.stringify(metadata.branch)} is not allowed; use segments of letters, digits, "_", "." and "-" separated by "/"`,
    );
  }
  if (
    metadata.parentId !== null &&
    metadata.parentId !== checked.id &&
    (typeof metadata.parentId !== 'string' || !isValidCheckpointId(metadata.parentId))
  ) {
    throw new CrewlineError(
      component,
      'invalid_name',
      `parent id ${JSON.stringify(metadata.parentId)} is not a checkpoint id`,
    );
  }
  if (
    typeof metadata.lineageId !== 'string' ||
    metadata.lineageId.length === 0 ||
    metadata.lineageId.length > 200
  ) {
    throw new CrewlineError(
      component,
      'invalid_argument',
      'checkpoint lineageId must be a string of 1 to 200 characters',
    );
  }
  if (
    document.format !== CHECKPOINT_FORMAT ||
    !Array.isArray(document.entities) ||
    !Array.isArray(document.events)
  ) {
    throw new CrewlineError(
      component,
      'invalid_argument',
      'the checkpoint document is not a crewline checkpoint (format, entities, events)',
    );
  }
  if (document.inputs === null || typeof document.inputs !== 'object') {
    throw new CrewlineError(
      component,
      'invalid_argument',
      'the checkpoint document has no encoded inputs object',
    );
  }
  if (metadata.eventCount !== document.events.length) {
    throw new CrewlineError(
      component,
      'invalid_argument',
      `checkpoint metadata says ${metadata.eventCount} events but the document holds ${document.events.length}`,
    );
  }
}
