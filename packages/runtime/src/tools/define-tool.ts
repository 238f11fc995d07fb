import { CrewlineError } from '@crewline/events';
import type { ModelMessage } from 'ai';
import { z } from 'zod';

const toolBrand = Symbol.for('crewline.tool');

/** What a tool's `execute` receives besides its input. */
export interface ToolExecutionContext {
  /** The id the model gave this call; stable across a resume. */
  toolCallId: string;
  /** The conversation so far (read-only). */
  messages: readonly ModelMessage[];
  /** Aborted when the run is cancelled; long tools should stop early. */
  abortSignal: AbortSignal | undefined;
}

/** A typed tool the model can call through native tool calling. */
export interface CrewlineTool<Input = any, Output = unknown> {
  /** Letters, digits, `_` and `-`, at most 64 characters (what every provider accepts). */
  readonly name: string;
  /** Told to the model: what the tool does and when to use it. */
  readonly description: string;
  /** Validates the model's input before `execute` runs. */
  readonly inputSchema: z.ZodType<Input>;
  /** Runs the tool. A thrown error becomes a tool result the model sees, never a crashed run. */
  execute(input: Input, context: ToolExecutionContext): Output | Promise<Output>;
}

export interface ToolDefinition<Schema extends z.ZodType, Output> {
  /** Letters, digits, `_` and `-`, at most 64 characters. Also the name a checkpoint stores. */
  name: string;
  description: string;
  /** Usually `z.object({...})`; the model is shown its JSON schema. */
  inputSchema: Schema;
  execute(input: z.output<Schema>, context: ToolExecutionContext): Output | Promise<Output>;
}

const toolNamePattern = /^[A-Za-z0-9_-]{1,64}$/;

/** Defines a tool with a typed input: `defineTool({ name, description, inputSchema: z.object(...), execute })`. */
export function defineTool<Schema extends z.ZodType, Output>(
  definition: ToolDefinition<Schema, Output>,
): CrewlineTool<z.output<Schema>, Output> {
  if (!toolNamePattern.test(definition.name)) {
    throw new CrewlineError(
      'tools',
      'invalid_name',
      `tool name "${definition.name}" is not accepted by model providers; use 1-64 letters, digits, "_" or "-"`,
    );
  }
  if (!(definition.inputSchema instanceof z.ZodType)) {
    throw new CrewlineError(
      'tools',
      'invalid_argument',
      `tool "${definition.name}" needs a zod inputSchema such as z.object({ query: z.string() })`,
    );
  }
  if (typeof definition.execute !== 'function') {
    throw new CrewlineError(
      'tools',
      'invalid_argument',
      `tool "${definition.name}" needs an execute function`,
    );
  }
  const tool = {
    name: definition.name,
    description: definition.description,
    inputSchema: definition.inputSchema as z.ZodType<z.output<Schema>>,
    execute: definition.execute,
  };
  Object.defineProperty(tool, toolBrand, { value: true });
  return Object.freeze(tool);
}

/** True when `value` was made by {@link defineTool}. */
export function isCrewlineTool(value: unknown): value is CrewlineTool {
  return (
    typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[toolBrand] === true
  );
}

/** Tools keyed by name, from a list or a record (a record's keys must match the tools' names). */
export function toolsByName(
  tools: readonly CrewlineTool[] | Record<string, CrewlineTool> | undefined,
): Record<string, CrewlineTool> {
  const result: Record<string, CrewlineTool> = Object.create(null);
  const list = tools === undefined ? [] : Array.isArray(tools) ? tools : Object.values(tools);
  for (const tool of list as CrewlineTool[]) {
    if (result[tool.name] !== undefined && result[tool.name] !== tool) {
      throw new CrewlineError(
        'tools',
        'invalid_argument',
        `two different tools are named "${tool.name}"; give each tool a unique name`,
      );
    }
    result[tool.name] = tool;
  }
  return result;
}
