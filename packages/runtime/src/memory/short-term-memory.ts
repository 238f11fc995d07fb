import {
  type BaseEvent,
  CrewlineError,
  type EventContext,
  type EventSource,
  eventBus,
  MemoryQueryCompletedEvent,
  MemoryQueryFailedEvent,
  MemoryQueryStartedEvent,
  MemorySaveCompletedEvent,
  MemorySaveFailedEvent,
  MemorySaveStartedEvent,
} from '@crewline/events';
import { toJsonSafe } from '@crewline/runtime-state';
import {
  type MemoryItem,
  memoryItemId,
  parseMemoryData,
  type ShortTermMemoryData,
} from '@crewline/runtime-state/internal';
import MiniSearch from 'minisearch';

const component = 'memory';
const source: EventSource = { kind: 'memory', id: 'short-term-memory', name: 'short-term memory' };

export type { MemoryItem } from '@crewline/runtime-state/internal';

export interface MemorySearchResult extends MemoryItem {
  /** Relevance; higher is better. Only comparable within one search. */
  score: number;
}

/** The stored form of a memory, kept in checkpoints. */
export type ShortTermMemorySnapshot = ShortTermMemoryData;

/** Where memory events go and what context they carry. */
export interface MemoryEventOptions {
  /** Default: the process-wide `eventBus` (which records into the run in scope). */
  emit?: (source: unknown, event: BaseEvent) => void;
  /** Put on every memory event. Default `{}`. */
  context?: EventContext;
}

/**
 * Short-term memory of a run: earlier task results an agent can search by keywords (minisearch, no
 * embeddings, no network). Saving the same text with the same metadata twice keeps one item, so a
 * resumed run that saves again does not duplicate it. Serializable with `toJSON()` / `fromJSON()`.
 */
export class ShortTermMemory {
  readonly #items = new Map<string, MemoryItem>();
  readonly #index = new MiniSearch<MemoryItem>({
    fields: ['text'],
    storeFields: ['id'],
    searchOptions: { prefix: true, fuzzy: 0.2, combineWith: 'OR' },
  });
  #emit: (source: unknown, event: BaseEvent) => void;
  #context: EventContext;

  constructor(options: MemoryEventOptions = {}) {
    this.#emit = options.emit ?? ((eventSource, event) => eventBus.emit(eventSource, event));
    this.#context = options.context ?? {};
  }

  /** Points later events at another run or task (a restored memory is bound to the new run). */
  bind(options: MemoryEventOptions): this {
    if (options.emit) this.#emit = options.emit;
    if (options.context) this.#context = options.context;
    return this;
  }

  get size(): number {
    return this.#items.size;
  }

  /** Every item, oldest first. */
  items(): MemoryItem[] {
    return [...this.#items.values()].map((item) => ({ ...item, metadata: { ...item.metadata } }));
  }

  /** Remembers `text`. Emits `memory_save_started` then `memory_save_completed` (or `_failed`). */
  save(text: string, metadata: Record<string, unknown> = {}): MemoryItem {
    const context = this.#context;
    this.#emit(source, new MemorySaveStartedEvent({ value: text, source, context }));
    if (typeof text !== 'string' || text.trim().length === 0) {
      const message = 'cannot save an empty text to memory; pass the task result text';
      this.#emit(source, new MemorySaveFailedEvent({ error: message, source, context }));
      throw new CrewlineError(component, 'invalid_argument', message);
    }
    const safeMetadata = (toJsonSafe(metadata) ?? {}) as Record<string, unknown>;
    const id = memoryItemId(text, safeMetadata);
    let item = this.#items.get(id);
    if (item === undefined) {
      item = { id, text, metadata: safeMetadata, createdAt: new Date().toISOString() };
      this.#add(item);
    }
    this.#emit(source, new MemorySaveCompletedEvent({ value: text, source, context }));
    return { ...item, metadata: { ...item.metadata } };
  }

  /** The `limit` items most relevant to `query`, best first. Emits `memory_query_*` events. */
  search(query: string, limit = 3): MemorySearchResult[] {
    const context = this.#context;
    this.#emit(source, new MemoryQueryStartedEvent({ query, source, context }));
    try {
      const results: MemorySearchResult[] = [];
      if (query.trim().length > 0 && limit > 0) {
        for (const hit of this.#index.search(query)) {
          const item = this.#items.get(String(hit.id));
          if (item) results.push({ ...item, metadata: { ...item.metadata }, score: hit.score });
          if (results.length === limit) break;
        }
      }
      this.#emit(
        source,
        new MemoryQueryCompletedEvent({ query, results: results.map((item) => item.text), source, context }),
      );
      return results;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.#emit(source, new MemoryQueryFailedEvent({ query, error: message, source, context }));
      throw new CrewlineError(component, 'invalid_state', `memory search for "${query}" failed: ${message}`, {
        cause: error,
      });
    }
  }

  clear(): void {
    this.#items.clear();
    this.#index.removeAll();
  }

  toJSON(): ShortTermMemorySnapshot {
    return { kind: 'short-term-memory', version: 1, items: this.items() };
  }

  /** Rebuilds a memory from {@link toJSON} output (a checkpoint's), validating it. */
  static fromJSON(snapshot: unknown, options: MemoryEventOptions = {}): ShortTermMemory {
    const parsed = parseMemoryData(snapshot);
    const memory = new ShortTermMemory(options);
    for (const item of parsed.items) {
      if (!memory.#items.has(item.id)) memory.#add({ ...item, metadata: { ...item.metadata } });
    }
    return memory;
  }

  #add(item: MemoryItem): void {
    this.#items.set(item.id, item);
    this.#index.add(item);
  }
}
