import type { CheckpointableEntity } from '@crewline/runtime-state';

/** The smallest entity a run can checkpoint: a flow with no data, for tests of the write path alone. */
export const emptyFlowEntity: CheckpointableEntity = {
  entityKind: 'flow',
  entityId: 'f-id',
  entityName: 'f',
  snapshotEntity: () => ({ kind: 'flow', id: 'f-id', name: 'f', data: {} }),
  summarizeEntity: () => ({ kind: 'flow', id: 'f-id', name: 'f' }),
};
