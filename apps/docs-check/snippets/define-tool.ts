// The tool of packages/runtime/docs/models-and-tools.md, run by apps/docs-check with a stand-in search.
// #region tool
import { defineTool } from '@crewline/runtime';
import { z } from 'zod';

export const search = defineTool({
  name: 'search', // 1-64 letters, digits, '_' or '-'
  description: 'Search the web for a query',
  inputSchema: z.object({ query: z.string(), limit: z.number().int().max(10).default(5) }),
  // The second argument also has `toolCallId`.
  execute: async ({ query, limit }, { abortSignal }) => fetchResults(query, limit, abortSignal),
});
// #endregion tool

/** Stands in for a web search: no network here. */
async function fetchResults(query: string, limit: number, abortSignal?: AbortSignal): Promise<string[]> {
  abortSignal?.throwIfAborted();
  return Array.from({ length: limit }, (_, index) => `result ${index + 1} for ${query}`);
}

console.log(`tool ${search.name}`);
