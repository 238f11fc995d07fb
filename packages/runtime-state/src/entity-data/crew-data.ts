import { z } from 'zod';
import type { EntitySnapshot } from '../document.js';
import { stateError } from '../errors.js';
import type { JsonObject } from '../json.js';
import { agentDefinitionDataSchema } from './agent-data.js';
import {
  checkpointSettingDataSchema,
  conversationDataSchema,
  encodedValueSchema,
  jsonSchema,
  parseVersionedData,
  progressStatuses,
  usageDataSchema,
} from './common.js';
import { memoryDataSchema } from './memory-data.js';

/** Version of the crew entity data inside a checkpoint (the envelope has its own). */
export const CREW_DATA_VERSION = 1;

/** Every status a task is stored with. */
export const taskStatuses = progressStatuses;
export type TaskStatus = (typeof taskStatuses)[number];

/** Every status a crew is stored with. */
export const crewStatuses = progressStatuses;
export type CrewStatus = (typeof crewStatuses)[number];

export const crewProcesses = ['sequential', 'hierarchical'] as const;
export const cachePreloadStrategies = ['parallel', 'sequential', 'shared_prefix'] as const;

/** What a completed task produced. */
export const taskOutputDataSchema = z.object({
  raw: z.string(),
  /** The description as sent (placeholders filled). */
  description: z.string(),
  expectedOutput: z.string(),
  agentRole: z.string(),
  usage: usageDataSchema,
  /** Set by hand (`setTaskOutput`, `--set-output`, the TUI) rather than produced by the agent. */
  edited: z.boolean(),
  /** The output parsed against the task's output schema, encoded; absent without one. */
  structured: encodedValueSchema.optional(),
});
export type TaskOutputData = z.infer<typeof taskOutputDataSchema>;

/** One task of a crew: its definition (templates, agent and context as indices) and its progress. */
export const taskDataSchema = z.object({
  id: z.string(),
  name: z.string().nullable(),
  /** The description template (with its `{placeholders}`). */
  description: z.string(),
  expectedOutput: z.string(),
  /** Index in the crew's `agents`. */
  agent: z.number().int().nonnegative().nullable(),
  /** Indices of earlier tasks in the crew's `tasks`. */
  context: z.array(z.number().int().nonnegative()).nullable(),
  /** The output schema as JSON schema. */
  outputSchema: jsonSchema.nullable(),
  status: z.enum(taskStatuses),
  startedEmitted: z.boolean(),
  output: taskOutputDataSchema.nullable(),
  /** Unfinished work only: the system prompt and conversation to continue from. */
  systemPrompt: z.string().nullable(),
  conversation: conversationDataSchema.nullable(),
  /** Conversations of delegations (hierarchical crews), by id. */
  delegations: z.record(z.string(), conversationDataSchema),
});
export type TaskData = z.infer<typeof taskDataSchema>;

export const crewDataSchema = z.object({
  version: z.literal(CREW_DATA_VERSION),
  name: z.string(),
  process: z.enum(crewProcesses),
  memory: z.boolean(),
  cachePreload: z.boolean(),
  cachePreloadStrategy: z.enum(cachePreloadStrategies),
  checkpoint: checkpointSettingDataSchema,
  status: z.enum(crewStatuses),
  kickoffStarted: z.boolean(),
  /** The kickoff inputs, encoded. */
  inputs: encodedValueSchema,
  agents: z.array(agentDefinitionDataSchema),
  /** The manager of a hierarchical crew; `generated` when the crew made it from `managerLlm`. */
  manager: agentDefinitionDataSchema.extend({ generated: z.boolean() }).nullable(),
  tasks: z.array(taskDataSchema),
  /** The crew's short-term memory (with `memory: true`). */
  memoryState: memoryDataSchema.nullable(),
  knowledge: jsonSchema.nullable(),
  /** Tokens the cache-preload probes used. */
  probeUsage: usageDataSchema,
  restoreKey: z.string().optional(),
});
export type CrewData = z.infer<typeof crewDataSchema>;

/**
 * The stored form of a crew's data. Typed here, not checked: the write path is hot. Written out
 * field by field (the order is the stored one) rather than copied with a spread: a crew
 * checkpointing on every event made two copies of its data per checkpoint, before V8 optimized them.
 */
export function toCrewData(data: Omit<CrewData, 'version'>): JsonObject {
  const stored: CrewData = {
    version: CREW_DATA_VERSION,
    name: data.name,
    process: data.process,
    memory: data.memory,
    cachePreload: data.cachePreload,
    cachePreloadStrategy: data.cachePreloadStrategy,
    checkpoint: data.checkpoint,
    status: data.status,
    kickoffStarted: data.kickoffStarted,
    inputs: data.inputs,
    agents: data.agents,
    manager: data.manager,
    tasks: data.tasks,
    memoryState: data.memoryState,
    knowledge: data.knowledge,
    probeUsage: data.probeUsage,
  };
  if (data.restoreKey !== undefined) stored.restoreKey = data.restoreKey;
  return stored as unknown as JsonObject;
}

/** Reads a crew's entity data; a damaged field is a `corrupt_checkpoint` error naming the crew and field. */
export function parseCrewData(snapshot: Pick<EntitySnapshot, 'kind' | 'name' | 'data'>): CrewData {
  const data = parseVersionedData(crewDataSchema, snapshot, CREW_DATA_VERSION);
  data.tasks.forEach((task, index) => {
    if (task.status === 'completed' && task.output === null) {
      throw stateError(
        'corrupt_checkpoint',
        `the data of crew "${snapshot.name}" in the checkpoint is not valid (tasks.${index}.output: a completed task needs its output); the checkpoint may be damaged`,
      );
    }
  });
  return data;
}

/** A task's name, or its description shortened: how messages and memory refer to it. */
export function taskLabel(name: string | undefined | null, description: string): string {
  return name ?? (description.length > 60 ? `${description.slice(0, 57)}...` : description);
}

/**
 * The status a crew is shown with. The checkpoint of its last `task_completed` is written while the
 * crew is still "running" with every task done: what it holds is a finished crew.
 */
export function shownCrewStatus(status: CrewStatus, completed: number, total: number): CrewStatus {
  return status === 'running' && total > 0 && completed === total ? 'completed' : status;
}
