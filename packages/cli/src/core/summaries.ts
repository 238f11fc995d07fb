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
