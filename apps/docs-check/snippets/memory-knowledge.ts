// Memory and knowledge from packages/runtime/docs/models-and-tools.md, run by apps/docs-check.
import { writeFileSync } from 'node:fs';
// #region memory
import {
  KnowledgeBase,
  ShortTermMemory,
  StringKnowledgeSource,
  TextFileKnowledgeSource,
} from '@crewline/runtime';

// #endregion memory

writeFileSync('policy.md', 'Refund policy: a refund is possible within 30 days of purchase.\n');

// #region memory

const memory = new ShortTermMemory();
memory.save('Competitors sell mostly in cities', { task: 'research' }); // memory_save_* events
memory.search('competitors', 3); // memory_query_* events

const knowledge = new KnowledgeBase({
  sources: [
    new StringKnowledgeSource({ content: 'Founded in 1998.' }),
    new TextFileKnowledgeSource({ paths: ['policy.md'] }),
  ],
  chunkSize: 1000, // default
  chunkOverlap: 200, // default
});
await knowledge.query('refund policy', 3); // knowledge_query_* and knowledge_search_query_* events
// #endregion memory

console.log(`memory: ${memory.search('competitors', 3).length} item(s)`);
console.log(`knowledge: ${JSON.stringify((await knowledge.query('refund policy', 3))[0])}`);
