import { type CheckpointMetadata, type CheckpointProvider, readDocument } from '@crewline/runtime-state';
import { type DocumentView, viewDocument } from '../core/document-view.js';

type RunOf = Pick<CheckpointMetadata, 'id' | 'branch' | 'lineageId'>;

/**
 * The id of the latest checkpoint of the run (lineage and branch) of the checkpoint `metadata`
 * describes, when it is another one: its run went past it, and a resume of it moves to a new branch
 * (the runtime's rule). Undefined when the checkpoint is the latest, or when the store cannot say.
 */
export async function newerHeadIdOf(
  provider: CheckpointProvider,
  location: string,
  metadata: RunOf,
): Promise<string | undefined> {
  const head = await provider
    .latest(location, { branch: metadata.branch, lineageId: metadata.lineageId })
    .catch(() => undefined);
  return head === undefined || head.id === metadata.id ? undefined : head.id;
}

/** {@link newerHeadIdOf}, with the view of that latest checkpoint (what a plan compares with). */
export async function newerHeadOf(
  provider: CheckpointProvider,
  location: string,
  metadata: RunOf,
): Promise<{ id: string; view: DocumentView } | undefined> {
  const id = await newerHeadIdOf(provider, location, metadata);
  if (id === undefined) return undefined;
  return { id, view: viewDocument(await readDocument(provider, location, id)) };
}
