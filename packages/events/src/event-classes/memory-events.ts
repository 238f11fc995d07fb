// Memory and knowledge: what an agent saves and looks up.
import { defineEvent } from '../base-event.js';

export class MemorySaveStartedEvent extends defineEvent<'memory_save_started', { value: string }>(
  'memory_save_started',
) {}
export class MemorySaveCompletedEvent extends defineEvent<'memory_save_completed', { value: string }>(
  'memory_save_completed',
) {}
export class MemorySaveFailedEvent extends defineEvent<'memory_save_failed', { error: string }>(
  'memory_save_failed',
) {}
export class MemoryQueryStartedEvent extends defineEvent<'memory_query_started', { query: string }>(
  'memory_query_started',
) {}
export class MemoryQueryCompletedEvent extends defineEvent<
  'memory_query_completed',
  { query: string; results: string[] }
>('memory_query_completed') {}
export class MemoryQueryFailedEvent extends defineEvent<
  'memory_query_failed',
  { query: string; error: string }
>('memory_query_failed') {}
export class MemoryRetrievalStartedEvent extends defineEvent<'memory_retrieval_started', { query: string }>(
  'memory_retrieval_started',
) {}
export class MemoryRetrievalCompletedEvent extends defineEvent<
  'memory_retrieval_completed',
  { query: string; results: string[] }
>('memory_retrieval_completed') {}
export class MemoryRetrievalFailedEvent extends defineEvent<
  'memory_retrieval_failed',
  { query: string; error: string }
>('memory_retrieval_failed') {}
export class KnowledgeSearchQueryStartedEvent extends defineEvent<
  'knowledge_search_query_started',
  { query: string }
>('knowledge_search_query_started') {}
export class KnowledgeSearchQueryCompletedEvent extends defineEvent<
  'knowledge_search_query_completed',
  { query: string; results: string[] }
>('knowledge_search_query_completed') {}
export class KnowledgeQueryStartedEvent extends defineEvent<'knowledge_query_started', { query: string }>(
  'knowledge_query_started',
) {}
export class KnowledgeQueryCompletedEvent extends defineEvent<
  'knowledge_query_completed',
  { query: string; results: string[] }
>('knowledge_query_completed') {}
export class KnowledgeQueryFailedEvent extends defineEvent<
  'knowledge_query_failed',
  { query: string; error: string }
>('knowledge_query_failed') {}
export class KnowledgeSearchQueryFailedEvent extends defineEvent<
  'knowledge_search_query_failed',
  { query: string; error: string }
>('knowledge_search_query_failed') {}
