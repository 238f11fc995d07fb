import type { CheckpointableEntity } from '@crewline/runtime-state';
import { Run } from '../run.js';

const quiet: CheckpointableEntity = {
  entityKind: 'agent',
  entityId: 'setup',
  entityName: 'setup',
  snapshotEntity: () => ({ kind: 'agent', id: 'setup', name: 'setup', data: {} }),
  summarizeEntity: () => ({ kind: 'agent', id: 'setup', name: 'setup' }),
};

/**
 * Starts (and ends) an empty run, which installs the automatic-checkpoint listener on the default
 * bus: a handler a child script adds afterwards sees each event after its checkpoint was taken.
 */
export async function installCheckpointListenerFirst(): Promise<void> {
  await Run.execute({ root: quiet, config: undefined, inputs: {} }, async () => undefined);
}
