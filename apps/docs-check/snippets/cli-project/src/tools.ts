// A custom tool of the example project that packages/cli/README.md configures.
import { defineTool } from '@crewline/runtime';
import { z } from 'zod';

export const searchTool = defineTool({
  name: 'search',
  description: 'Search the notes for a query',
  inputSchema: z.object({ query: z.string() }),
  execute: async ({ query }) => `no notes about ${query}`,
});
