import { type CheckpointMetadata, type CheckpointProvider, readDocument } from '@crewline/runtime-state';
import { newerHeadId } from '@crewline/runtime-state/internal';
import { type DocumentView, viewDocument } from './document-view.js';

type RunOf = Pick<CheckpointMetadata, 'id' | 'branch' | 'lineageId'>;

/**
 * {@link newerHeadId}, with the view of that latest checkpoint (what a plan compares with): how the
 * explorer and the checkpoint browser find that a resume continues on a new branch, as the runtime does.
 */
export async function newerHeadOf(
  provider: CheckpointProvider,
  location: string,
  metadata: RunOf,
): Promise<{ id: string; view: DocumentView } | undefined> {
  const id = await newerHeadId(provider, location, metadata);
  if (id === undefined) return undefined;
  return { id, view: viewDocument(await readDocument(provider, location, id)) };
}
