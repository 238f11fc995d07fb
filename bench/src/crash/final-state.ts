// The end state of a run as its last checkpoint holds it: what the resumed run is compared on.
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import {
  type CheckpointDocument,
  type CheckpointProvider,
  createProviderRegistry,
  loadCheckpoint,
  providerEntryOf,
} from '@crewline/runtime-state';
import { type ScenarioName, scenarios } from './scenario.js';
import type { ProviderName } from './storage-check.js';

/** Each task's raw output by `<crew name>/<task index>`, over every crew of the run (undefined: none yet). */
export type TaskOutputs = Record<string, string | undefined>;

export interface FinalState {
  taskOutputs: TaskOutputs;
  /** The trigger of the last checkpoint (the scenario's final trigger after a whole run). */
  trigger: string;
  /** The scenario's start events in the whole history: one, however often the run was resumed. */
  starts: number;
}

/** The raw output of every task of every crew a checkpoint holds (a flow's crews included). */
export function taskOutputsOf(document: CheckpointDocument): TaskOutputs {
  const outputs: TaskOutputs = {};
  for (const entity of document.entities) {
    if (entity.kind !== 'crew') continue;
    const tasks = (entity.data as { tasks?: { output?: { raw?: string } | null }[] }).tasks ?? [];
    for (const [index, task] of tasks.entries()) outputs[`${entity.name}/${index}`] = task.output?.raw;
  }
  return outputs;
}

/** The tasks whose outputs differ between two runs (or that only one of them has). */
export function differingTasks(actual: TaskOutputs, expected: TaskOutputs): string[] {
  const names = new Set([...Object.keys(actual), ...Object.keys(expected)]);
  return [...names].filter((name) => actual[name] !== expected[name]);
}

/** Reads the latest checkpoint at a location (once no process writes there any more). */
export async function readFinalState(
  scenario: ScenarioName,
  provider: ProviderName,
  location: string,
): Promise<FinalState> {
  const instance: CheckpointProvider = provider === 'sqlite' ? new SqliteProvider() : new JsonProvider();
  try {
    const { document } = await loadCheckpoint(location, createProviderRegistry([providerEntryOf(instance)]));
    return {
      taskOutputs: taskOutputsOf(document),
      trigger: document.metadata.trigger,
      starts: document.events.filter((event) => event.type === scenarios[scenario].startEvent).length,
    };
  } finally {
    await instance.close?.();
  }
}
