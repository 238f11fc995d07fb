import { CrewlineError, keepNamesFromValueRedaction } from '@crewline/events';
import type { ModelMessage } from 'ai';
import { z } from 'zod';
import { isStandardSchema, type StandardOutput, type StandardSchema } from '../schema/standard-schema.js';

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
  /** Validates the model's input before `execute` runs: any Standard Schema. */
  readonly inputSchema: StandardSchema<unknown, Input>;
  /** What the model is shown of the input (JSON Schema, draft 7). */
  readonly jsonSchema: Record<string, unknown>;
  /** Runs the tool. A thrown error becomes a tool result the model sees, never a crashed run. */
  execute(input: Input, context: ToolExecutionContext): Output | Promise<Output>;
}

export interface ToolDefinition<Schema extends StandardSchema, Output> {
  /** Letters, digits, `_` and `-`, at most 64 characters. Also the name a checkpoint stores. */
  name: string;
  description: string;
  /**
   * Any Standard Schema: zod 4 (classic or mini), zod 3.24+, valibot, arktype... Usually
   * `z.object({...})`. The model is shown its JSON Schema.
   */
  inputSchema: Schema;
  /**
   * The JSON Schema the model is shown. Default: derived from `inputSchema` (zod 4, or any schema
   * with Standard JSON Schema); required for a schema that can describe itself in neither way.
   */
  jsonSchema?: Record<string, unknown>;
  execute(input: StandardOutput<Schema>, context: ToolExecutionContext): Output | Promise<Output>;
}

/** The JSON Schema of a tool's input: given, from zod 4 (classic or mini), or Standard JSON Schema. */
function inputJsonSchema(name: string, schema: StandardSchema, given: Record<string, unknown> | undefined) {
  if (given !== undefined) return given;
  if (typeof schema === 'object' && '_zod' in schema) {
    return z.toJSONSchema(schema as z.ZodType, {
      target: 'draft-7',
      io: 'input',
      unrepresentable: 'any',
    }) as Record<string, unknown>;
  }
  const standardJson = schema['~standard'].jsonSchema as
    | { input?: (options: { target: string }) => Record<string, unknown> }
    | undefined;
  if (typeof standardJson?.input === 'function') return standardJson.input({ target: 'draft-07' });
  throw new CrewlineError(
    'tools',
    'invalid_argument',
    `tool "${name}": its ${schema['~standard'].vendor} inputSchema cannot describe itself as JSON Schema; pass \`jsonSchema\` (what the model is shown) with it`,
  );
}

const toolNamePattern = /^[A-Za-z0-9_-]{1,64}$/;

/** Defines a tool with a typed input: `defineTool({ name, description, inputSchema: z.object(...), execute })`. */
export function defineTool<Schema extends StandardSchema, Output>(
  definition: ToolDefinition<Schema, Output>,
): CrewlineTool<StandardOutput<Schema>, Output> {
  if (!toolNamePattern.test(definition.name)) {
    throw new CrewlineError(
      'tools',
      'invalid_name',
      `tool name "${definition.name}" is not accepted by model providers; use 1-64 letters, digits, "_" or "-"`,
    );
  }
  if (!isStandardSchema(definition.inputSchema)) {
    throw new CrewlineError(
      'tools',
      'invalid_argument',
      `tool "${definition.name}" needs an inputSchema (a Standard Schema: zod, valibot, arktype...) such as z.object({ query: z.string() })`,
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
    inputSchema: definition.inputSchema as StandardSchema<unknown, StandardOutput<Schema>>,
    jsonSchema: inputJsonSchema(definition.name, definition.inputSchema, definition.jsonSchema),
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

/**
 * Tools keyed by name, from a list or a record (a record's keys must match the tools' names). Every
 * tool an agent is given or a run adds (a delegation) comes through here, so their names are kept from
 * redaction by value here: a checkpoint stores them and a resume finds the tools by them, and a
 * registered credential that is a word of one (`password` of `check_password_policy`, review RF-1)
 * must not rewrite it into a name no registry holds.
 */
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
  keepNamesFromValueRedaction(Object.keys(result));
  return result;
}
