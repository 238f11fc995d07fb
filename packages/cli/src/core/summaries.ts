import type { EntitySummary } from '@crewline/runtime-state';
import { entityLabel } from './entity-label.js';

/** `crew Research 2/4 tasks`, `flow Pipeline`, `agent Writer`; several joined with `, `. */
export function formatEntities(entities: readonly EntitySummary[]): string {
  if (entities.length === 0) return '(no entities)';
  return entities.map(formatEntity).join(', ');
}

/** One entity of `list`: its label (`entityLabel`: an unnamed crew is `crew`) and its progress. */
export function formatEntity(entity: EntitySummary): string {
  const progress =
    entity.total !== undefined
      ? ` ${entity.completed ?? 0}/${entity.total}${entity.kind === 'crew' ? ' tasks' : ''}`
      : '';
  return `${entityLabel(entity.kind, entity.name)}${progress}`;
}
