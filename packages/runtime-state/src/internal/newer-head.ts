import type { CheckpointMetadata } from '../document.js';
import type { CheckpointProvider } from '../provider.js';

/**
 * The id of the latest checkpoint of the run (lineage and branch) of the checkpoint `metadata`
 * describes, when it is another one: its run went past it. Undefined when it is the latest, and when
 * the store cannot say (a failed listing judges nothing). One question to the store, asked by the
 * runtime (a resume moves to a new branch, or is refused when the run was continued since it was
 * read) and by the CLI and the explorer (what their plans say of such a resume).
 */
export async function newerHeadId(
  provider: Pick<CheckpointProvider, 'latest'>,
  location: string,
  metadata: Pick<CheckpointMetadata, 'id' | 'branch' | 'lineageId'>,
): Promise<string | undefined> {
  try {
    const latest = await provider.latest(location, {
      branch: metadata.branch,
      lineageId: metadata.lineageId,
    });
    return latest === undefined || latest.id === metadata.id ? undefined : latest.id;
  } catch {
    return undefined;
  }
}
