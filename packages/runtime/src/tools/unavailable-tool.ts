import { CrewlineError } from '@crewline/events';
import { z } from 'zod';
import { type CrewlineTool, defineTool } from './define-tool.js';

/**
 * Stands in for a custom tool that is not registered in this process, on an agent restored from a
 * checkpoint whose remaining work does not use it: the agent keeps the tool's name (so later
 * checkpoints still name it), and a call, should one happen, fails saying what to register.
 */
export function unavailableTool(name: string, role: string): CrewlineTool {
  return defineTool({
    name,
    description: `Unavailable: the tool "${name}" is not registered in this process.`,
    inputSchema: z.object({}).passthrough(),
    execute: () => {
      throw new CrewlineError(
        'tools',
        'not_rebuildable',
        `tool "${name}" of agent "${role}" is not registered in this process; register it in crewline.config.ts: export default defineConfig({ tools: { '${name}': yourTool } })`,
      );
    },
  });
}
