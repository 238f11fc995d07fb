import {
  type BaseEvent,
  CrewlineError,
  type EventContext,
  type EventSource,
  eventBus,
  KnowledgeQueryCompletedEvent,
  KnowledgeQueryFailedEvent,
  KnowledgeQueryStartedEvent,
  KnowledgeSearchQueryCompletedEvent,
  KnowledgeSearchQueryFailedEvent,
  KnowledgeSearchQueryStartedEvent,
} from '@crewline/events';
import MiniSearch from 'minisearch';
import { z } from 'zod';
import { chunkText } from './chunk-text.js';
import {
  type KnowledgeSource,
  type KnowledgeSourceSnapshot,
  knowledgeSourceFromJSON,
  knowledgeSourceSnapshotSchema,
} from './knowledge-source.js';

const component = 'knowledge';
const source: EventSource = { kind: 'knowledge', id: 'knowledge-base', name: 'knowledge base' };

/** One chunk that matched a query. */
export interface KnowledgeResult {
  text: string;
  /** The source name or file path the chunk came from. */
  origin: string;
  /** Relevance; higher is better. Only comparable within one query. */
  score: number;
}

export interface KnowledgeBaseOptions {
  sources: KnowledgeSource[];
  /** Characters per chunk. Default `1000`. */
  chunkSize?: number;
  /** Characters shared by neighbouring chunks. Default `200`. */
  chunkOverlap?: number;
  /** Default: the process-wide `eventBus` (which records into the run in scope). */
  emit?: (source: unknown, event: BaseEvent) => void;
  /** Put on every knowledge event. Default `{}`. */
  context?: EventContext;
}

/** The stored form of a knowledge base: settings and every source with its content. */
export interface KnowledgeBaseSnapshot {
  kind: 'knowledge-base';
  version: 1;
  chunkSize: number;
  chunkOverlap: number;
  sources: KnowledgeSourceSnapshot[];
}

const snapshotSchema = z.object({
  kind: z.literal('knowledge-base'),
  version: z.literal(1),
  chunkSize: z.number().int().positive(),
  chunkOverlap: z.number().int().nonnegative(),
  sources: z.array(knowledgeSourceSnapshotSchema),
});

interface Chunk {
  id: number;
  text: string;
  origin: string;
}

/**
 * Knowledge an agent can query: sources split into overlapping chunks and indexed for keyword search
 * (minisearch; no embeddings, no network). The index is built on the first query.
 */
export class KnowledgeBase {
  readonly sources: readonly KnowledgeSource[];
  readonly chunkSize: number;
  readonly chunkOverlap: number;
  #emit: (source: unknown, event: BaseEvent) => void;
  #context: EventContext;
  #index: MiniSearch<Chunk> | undefined;
  #chunks: Chunk[] = [];

  constructor(options: KnowledgeBaseOptions) {
    const chunkSize = options.chunkSize ?? 1000;
    const chunkOverlap = options.chunkOverlap ?? 200;
    if (!Number.isInteger(chunkSize) || chunkSize < 1) {
      throw new CrewlineError(
        component,
        'invalid_argument',
        `chunkSize must be a positive whole number, got ${String(chunkSize)}`,
      );
    }
    if (!Number.isInteger(chunkOverlap) || chunkOverlap < 0 || chunkOverlap >= chunkSize) {
      throw new CrewlineError(
        component,
        'invalid_argument',
        `chunkOverlap must be a whole number from 0 to chunkSize - 1 (${chunkSize - 1}), got ${String(chunkOverlap)}`,
      );
    }
    this.sources = [...options.sources];
    this.chunkSize = chunkSize;
    this.chunkOverlap = chunkOverlap;
    this.#emit = options.emit ?? ((eventSource, event) => eventBus.emit(eventSource, event));
    this.#context = options.context ?? {};
  }

  /** Points later events at another run or task. */
  bind(options: Pick<KnowledgeBaseOptions, 'emit' | 'context'>): this {
    if (options.emit) this.#emit = options.emit;
    if (options.context) this.#context = options.context;
    return this;
  }

  /** Number of indexed chunks (builds the index). */
  get chunkCount(): number {
    return this.#build().documentCount;
  }

  /**
   * The `limit` chunks most relevant to `text`, best first. Emits `knowledge_query_started`, then
   * `knowledge_search_query_*` around the index search, then `knowledge_query_completed` (or the
   * `_failed` events, and throws).
   */
  async query(text: string, limit = 3): Promise<KnowledgeResult[]> {
    const context = this.#context;
    this.#emit(source, new KnowledgeQueryStartedEvent({ query: text, source, context }));
    this.#emit(source, new KnowledgeSearchQueryStartedEvent({ query: text, source, context }));
    let results: KnowledgeResult[];
    try {
      const index = this.#build();
      results = [];
      if (text.trim().length > 0 && limit > 0) {
        for (const hit of index.search(text)) {
          const chunk = this.#chunks[hit.id as number];
          if (chunk) results.push({ text: chunk.text, origin: chunk.origin, score: hit.score });
          if (results.length === limit) break;
        }
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.#emit(
        source,
        new KnowledgeSearchQueryFailedEvent({ query: text, error: message, source, context }),
      );
      this.#emit(source, new KnowledgeQueryFailedEvent({ query: text, error: message, source, context }));
      throw new CrewlineError(component, 'invalid_state', `knowledge query "${text}" failed: ${message}`, {
        cause: error,
      });
    }
    const texts = results.map((result) => result.text);
    this.#emit(
      source,
      new KnowledgeSearchQueryCompletedEvent({ query: text, results: texts, source, context }),
    );
    this.#emit(source, new KnowledgeQueryCompletedEvent({ query: text, results: texts, source, context }));
    return results;
  }

  toJSON(): KnowledgeBaseSnapshot {
    return {
      kind: 'knowledge-base',
      version: 1,
      chunkSize: this.chunkSize,
      chunkOverlap: this.chunkOverlap,
      sources: this.sources.map((item) => item.toJSON()),
    };
  }

  /** Rebuilds a knowledge base from {@link toJSON} output; file sources keep their saved content. */
  static fromJSON(
    snapshot: unknown,
    options: Pick<KnowledgeBaseOptions, 'emit' | 'context'> = {},
  ): KnowledgeBase {
    const parsed = snapshotSchema.safeParse(snapshot);
    if (!parsed.success) {
      const issues = parsed.error.issues
        .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
        .join('; ');
      throw new CrewlineError(
        component,
        'corrupt_checkpoint',
        `saved knowledge base is not valid (${issues}); the checkpoint may be damaged`,
      );
    }
    const data = parsed.data;
    return new KnowledgeBase({
      ...options,
      sources: data.sources.map(knowledgeSourceFromJSON),
      chunkSize: data.chunkSize,
      chunkOverlap: Math.min(data.chunkOverlap, data.chunkSize - 1),
    });
  }

  #build(): MiniSearch<Chunk> {
    if (this.#index) return this.#index;
    const index = new MiniSearch<Chunk>({
      fields: ['text'],
      storeFields: [],
      searchOptions: { prefix: true, fuzzy: 0.2, combineWith: 'OR' },
    });
    const chunks: Chunk[] = [];
    for (const knowledgeSource of this.sources) {
      for (const document of knowledgeSource.documents()) {
        for (const text of chunkText(document.text, this.chunkSize, this.chunkOverlap)) {
          chunks.push({ id: chunks.length, text, origin: document.origin });
        }
      }
    }
    index.addAll(chunks);
    this.#chunks = chunks;
    this.#index = index;
    return index;
  }
}
