import { providerRegistry } from '@crewline/runtime';
import {
  type CheckpointDocument,
  type LoadedCheckpoint,
  loadCheckpoint,
  readDocument,
  type StoredCheckpoint,
} from '@crewline/runtime-state';

/** The runtime's built-in providers: JSON at once, SQLite imported only when a SQLite checkpoint is read. */
export const tutorialProviders = providerRegistry();

/** Reads the checkpoint a reference names (file, `db#id`, a directory/database for its latest). */
export function loadTutorialCheckpoint(reference: string): Promise<LoadedCheckpoint> {
  return loadCheckpoint(reference, tutorialProviders, { allowPrefix: true });
}

/** The checkpoints of one branch of the location a loaded checkpoint came from, oldest first. */
export function branchCheckpoints(loaded: LoadedCheckpoint, branch: string): Promise<StoredCheckpoint[]> {
  return loaded.provider.list(loaded.location, { branch });
}

/** Reads another checkpoint of the same location. */
export function readSibling(loaded: LoadedCheckpoint, id: string): Promise<CheckpointDocument> {
  return readDocument(loaded.provider, loaded.location, id);
}

/** A saved task as the tutorial looks at it. */
export interface SavedTask {
  name: string | null;
  status: string;
  output: string | undefined;
}

/** The tasks of the first crew in a checkpoint, with their saved status and output. */
export function savedTasks(document: CheckpointDocument): SavedTask[] {
  const crew = document.entities.find((entity) => entity.kind === 'crew');
  const tasks = crew?.data.tasks;
  if (!Array.isArray(tasks)) return [];
  return tasks.map((task) => {
    const record = (task ?? {}) as { name?: unknown; status?: unknown; output?: { raw?: unknown } | null };
    return {
      name: typeof record.name === 'string' ? record.name : null,
      status: typeof record.status === 'string' ? record.status : 'pending',
      output: typeof record.output?.raw === 'string' ? record.output.raw : undefined,
    };
  });
}
