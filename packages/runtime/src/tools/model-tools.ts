import type { JSONSchema7 } from 'ai';
import { jsonSchema, type ToolSet, tool } from 'ai';
import type { CrewlineTool } from './define-tool.js';

/**
 * The tool set handed to the AI SDK: descriptions and JSON schemas only. No `execute` (the agent loop
 * runs tools itself, one step at a time) and no validator (the loop validates with the tool's schema so that a bad
 * input becomes a `tool_validate_input_error` event and a result the model can read).
 */
export function toModelTools(tools: Record<string, CrewlineTool>): ToolSet {
  const result: ToolSet = {};
  for (const [name, definition] of Object.entries(tools)) {
    result[name] = tool({
      description: definition.description,
      inputSchema: jsonSchema<unknown>(definition.jsonSchema as JSONSchema7),
    });
  }
  return result;
}
