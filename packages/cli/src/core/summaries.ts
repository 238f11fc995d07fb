import type { EntitySummary } from '@crewline/runtime-state';

/** `crew Research 2/4 tasks`, `flow Pipeline`, `agent Writer`; several joined with `, `. */
export function formatEntities(entities: readonly EntitySummary[]): string {
  if (entities.length === 0) return '(no entities)';
  return entities.map(formatEntity).join(', ');
}

export function formatEntity(entity: EntitySummary): string {
  const progress =
    entity.total !== undefined
      ? ` ${entity.completed ?? 0}/${entity.total}${entity.kind === 'crew' ? ' tasks' : ''}`
      : '';
  return `${entity.kind} ${entity.name}${progress}`;
}

/** Completed and total tasks over every entity of a checkpoint, from its summaries. */
export function taskProgress(entities: readonly EntitySummary[]): { completed: number; total: number } {
  let completed = 0;
  let total = 0;
  for (const entity of entities) {
    if (entity.kind !== 'crew' || entity.total === undefined) continue;
    completed += entity.completed ?? 0;
    total += entity.total;
  }
  return { completed, total };
}
