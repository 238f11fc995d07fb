import type { EntitySnapshot, EntitySummary } from '../document.js';
import type { CheckpointableEntity } from '../run-entities.js';

/** A small crew-like entity for tests of the core: tasks whose outputs can be set. */
export class FakeCrew implements CheckpointableEntity {
  readonly entityKind = 'crew' as const;
  readonly entityId = 'crew-1';
  readonly entityName = 'research-crew';
  outputs: (string | null)[];

  constructor(taskCount = 2) {
    this.outputs = Array.from({ length: taskCount }, () => null);
  }

  snapshotEntity(): EntitySnapshot {
    return {
      kind: 'crew',
      id: this.entityId,
      name: this.entityName,
      data: { tasks: this.outputs.map((output, index) => ({ index, output })) },
    };
  }

  summarizeEntity(): EntitySummary {
    const completed = this.outputs.filter((output) => output !== null).length;
    return { kind: 'crew', id: this.entityId, name: this.entityName, completed, total: this.outputs.length };
  }
}
