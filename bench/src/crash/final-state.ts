// The end state of a run as its last checkpoint holds it: what the resumed run is compared on.
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { type CheckpointDocument, type CheckpointProvider, loadCheckpoint } from '@crewline/runtime-state';
import type { ProviderName } from './storage-check.js';

export interface FinalState {
  /** Each task's raw output, in task order (undefined for a task without one). */
  taskOutputs: (string | undefined)[];
  /** The trigger of the last checkpoint (`crew_kickoff_completed` after a whole run). */
  trigger: string;
  /** `crew_kickoff_started` events in the whole history: one, however often the run was resumed. */
  kickoffs: number;
}

/** The raw output of every task of the crew a checkpoint holds. */
export function taskOutputsOf(document: CheckpointDocument): (string | undefined)[] {
  const crew = document.entities.find((entity) => entity.kind === 'crew');
  const tasks = (crew?.data as { tasks?: { output?: { raw?: string } | null }[] } | undefined)?.tasks ?? [];
  return tasks.map((task) => task.output?.raw);
}

/** Reads the latest checkpoint at a location (once no process writes there any more). */
export async function readFinalState(provider: ProviderName, location: string): Promise<FinalState> {
  const instance: CheckpointProvider = provider === 'sqlite' ? new SqliteProvider() : new JsonProvider();
  try {
    const { document } = await loadCheckpoint(location, { [provider]: () => instance });
    return {
      taskOutputs: taskOutputsOf(document),
      trigger: document.metadata.trigger,
      kickoffs: document.events.filter((event) => event.type === 'crew_kickoff_started').length,
    };
  } finally {
    await instance.close?.();
  }
}
