import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { JsonValue } from '../json.js';
import { parseEntityPart } from './common.js';

/** One remembered text (an earlier task's result, usually). */
export interface MemoryItem {
  id: string;
  text: string;
  /** JSON-safe details, e.g. `{ task: 'Research', agent: 'Researcher' }`. */
  metadata: Record<string, unknown>;
  createdAt: string;
}

/** The stored form of a short-term memory, kept in checkpoints. */
export interface ShortTermMemoryData {
  kind: 'short-term-memory';
  version: 1;
  items: MemoryItem[];
}

export const memoryDataSchema: z.ZodType<ShortTermMemoryData> = z.object({
  kind: z.literal('short-term-memory'),
  version: z.literal(1),
  items: z.array(
    z.object({
      id: z.string(),
      text: z.string(),
      // Passed through as parsed (no key-by-key copy), so a `__proto__` key stays a plain own property.
      metadata: z.custom<Record<string, unknown>>(
        (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
        'expected an object',
      ),
      createdAt: z.string(),
    }),
  ),
});

/** Reads a stored memory; a damaged one is a `corrupt_checkpoint` error naming `what` and the field. */
export function parseMemoryData(value: unknown, what = 'saved short-term memory'): ShortTermMemoryData {
  return parseEntityPart(memoryDataSchema, value, what);
}

/** The id of an item: derived from text and metadata, so saving the same result twice keeps one item. */
export function memoryItemId(text: string, metadata: Record<string, unknown>): string {
  return createHash('sha256')
    .update(JSON.stringify([text, metadata]))
    .digest('hex')
    .slice(0, 16);
}

/** What a crew stores with a task's result in memory; the same for a run and for an edit. */
export interface TaskMemoryMetadata {
  [key: string]: JsonValue;
  task: string;
  agent: string;
  crewId: string;
  taskIndex: number;
}

/** True for an item a task of crew `crewId` at `fromIndex` or later saved (those are being redone). */
export function isTaskItemFrom(item: MemoryItem, crewId: string, fromIndex: number): boolean {
  const { crewId: itemCrew, taskIndex } = item.metadata as { crewId?: unknown; taskIndex?: unknown };
  return itemCrew === crewId && typeof taskIndex === 'number' && taskIndex >= fromIndex;
}

/** A copy of `memory` without the items of crew `crewId`'s tasks from `fromIndex` on. */
export function forgetTaskItems(
  memory: ShortTermMemoryData,
  crewId: string,
  fromIndex: number,
): ShortTermMemoryData {
  return { ...memory, items: memory.items.filter((item) => !isTaskItemFrom(item, crewId, fromIndex)) };
}

/** A copy of `memory` that also holds `text` (once: an item with the same id is kept as it is). */
export function rememberText(
  memory: ShortTermMemoryData,
  text: string,
  metadata: Record<string, unknown>,
  createdAt: string = new Date().toISOString(),
): ShortTermMemoryData {
  if (text.trim() === '') return memory;
  const id = memoryItemId(text, metadata);
  if (memory.items.some((item) => item.id === id)) return memory;
  return { ...memory, items: [...memory.items, { id, text, metadata: { ...metadata }, createdAt }] };
}
