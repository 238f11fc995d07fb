import type { BaseEvent, EventContext } from '@crewline/events';
import type { KnowledgeBase } from '../knowledge/knowledge-base.js';
import type { ShortTermMemory } from '../memory/short-term-memory.js';

export interface RecallSources {
  memories: readonly ShortTermMemory[];
  knowledgeBases: readonly KnowledgeBase[];
  emit: (source: unknown, event: BaseEvent) => void;
  context: EventContext;
}

/** How many remembered results and knowledge chunks a prompt gets at most. */
const recallLimit = 3;

/**
 * The prompt sections that come from memory (earlier results) and knowledge, searched with the
 * task's text. Their events are emitted inside the run, so they can trigger checkpoints too.
 */
export async function recallSections(query: string, sources: RecallSources): Promise<string[]> {
  const sections: string[] = [];
  const remembered: string[] = [];
  for (const memory of sources.memories) {
    memory.bind({ emit: sources.emit, context: sources.context });
    for (const item of memory.search(query, recallLimit)) {
      const label = typeof item.metadata.task === 'string' ? item.metadata.task : 'earlier result';
      remembered.push(`- ${label}: ${item.text}`);
    }
  }
  if (remembered.length > 0) sections.push(`Earlier results you may use:\n${remembered.join('\n')}`);
  const known: string[] = [];
  for (const knowledge of sources.knowledgeBases) {
    knowledge.bind({ emit: sources.emit, context: sources.context });
    for (const result of await knowledge.query(query, recallLimit))
      known.push(`- (${result.origin}) ${result.text}`);
  }
  if (known.length > 0) sections.push(`Relevant knowledge:\n${known.join('\n')}`);
  return sections;
}
