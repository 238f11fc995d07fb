import { z } from 'zod';
import type { EntitySnapshot } from '../document.js';
import type { JsonObject } from '../json.js';
import {
  checkpointSettingDataSchema,
  conversationDataSchema,
  jsonSchema,
  parseVersionedData,
  progressStatuses,
  withDataVersion,
} from './common.js';
import { memoryDataSchema } from './memory-data.js';

/** Version of a standalone agent's entity data (the envelope has its own). */
export const AGENT_DATA_VERSION = 1;

export const agentStatuses = progressStatuses;
export type AgentStatus = (typeof agentStatuses)[number];

/**
 * An agent's definition as stored, in a crew's `agents` or a standalone agent's entity: strings and
 * names only (model id, tool names), never objects or keys; `memory` is its progress.
 */
export const agentDefinitionDataSchema = z.object({
  id: z.string(),
  role: z.string(),
  goal: z.string(),
  backstory: z.string(),
  /** The model as a `provider:model` id or a registered name. */
  llm: z.string(),
  /**
   * Serializable, non-secret settings the model is rebuilt with (its base URL without credentials,
   * the OpenAI API, the OpenAI `organization` and `project` ids its requests name); read by the
   * runtime's `readStoredModelSettings`. Absent when there are none.
   */
  llmSettings: jsonSchema.optional(),
  tools: z.array(z.string()),
  maxIterations: z.number().int().nonnegative(),
  checkpoint: checkpointSettingDataSchema,
  /** Serializable, non-secret model call settings. */
  settings: jsonSchema.optional(),
  knowledge: jsonSchema.nullable(),
  memory: memoryDataSchema.nullable(),
});
export type AgentDefinitionData = z.infer<typeof agentDefinitionDataSchema>;

/** A standalone agent (its own kickoff, outside a crew): its definition and its kickoff's progress. */
export const agentDataSchema = agentDefinitionDataSchema.extend({
  version: z.literal(AGENT_DATA_VERSION),
  status: z.enum(agentStatuses),
  kickoffStarted: z.boolean(),
  /** The messages the kickoff was given (AI SDK messages). */
  kickoffMessages: z.array(jsonSchema).nullable(),
  conversation: conversationDataSchema.nullable(),
  recallAdded: z.boolean(),
});
export type AgentData = z.infer<typeof agentDataSchema>;

/** The stored form of a standalone agent's data (typed here; checked when read back). */
export function toAgentData(data: Omit<AgentData, 'version'>): JsonObject {
  return withDataVersion(data, AGENT_DATA_VERSION);
}

/** Reads a standalone agent's entity data; a damaged field is a `corrupt_checkpoint` error naming it. */
export function parseAgentData(snapshot: Pick<EntitySnapshot, 'kind' | 'name' | 'data'>): AgentData {
  return parseVersionedData(agentDataSchema, snapshot, AGENT_DATA_VERSION);
}
