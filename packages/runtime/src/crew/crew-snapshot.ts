import { CrewlineError, logger } from '@crewline/events';
import {
  decodeValue,
  type EncodedValue,
  type EntitySnapshot,
  encodeValue,
  type JsonObject,
  type JsonValue,
  type LoadedCheckpoint,
  markRedacted,
  type ProviderRegistry,
} from '@crewline/runtime-state';
import { z } from 'zod';
import type { Agent } from '../agent/agent.js';
import {
  agentDefinitionData,
  applyAgentMemory,
  MissingParts,
  rebuildAgent,
} from '../agent/agent-snapshot.js';
import { emptyUsage, type TokenUsage } from '../agent-loop/conversation.js';
import { jsonSchemaOf } from '../agent-loop/structured-output.js';
import type { CachePreloadStrategy } from '../cache-preload/preload-caches.js';
import { restoreCheckpointSetting, storeCheckpointSetting } from '../checkpointing/checkpoint-setting.js';
import {
  asObject,
  asString,
  restoreConversation,
  storeConversation,
} from '../checkpointing/snapshot-values.js';
import { KnowledgeBase } from '../knowledge/knowledge-base.js';
import { ShortTermMemory } from '../memory/short-term-memory.js';
import { type ProjectRegistry, projectRegistry } from '../registry/project-config.js';
import { Task, type TaskStatus } from '../task/task.js';
import { TaskOutput } from '../task/task-output.js';
import { Crew } from './crew.js';

const component = 'runtime';

/** Version of the crew entity data inside a checkpoint (the envelope has its own). */
export const CREW_DATA_VERSION = 1;

interface TaskCacheEntry {
  id: string;
  status: TaskStatus;
  output: TaskOutput | undefined;
  startedEmitted: boolean;
  data: JsonObject;
}

// A completed task does not change until it is edited or reset (which replaces its output), and a
// task that has not started does not change until it starts, so their stored forms are built (and
// redacted) once: a crew-50 run on '*' writes about 500 checkpoints of 50 tasks each.
const settledTaskCache = new WeakMap<Task, TaskCacheEntry>();
const schemaCache = new WeakMap<z.ZodType, JsonValue>();

function storeSchema(schema: z.ZodType | undefined): JsonValue {
  if (!schema) return null;
  let stored = schemaCache.get(schema);
  if (stored === undefined) {
    try {
      stored = jsonSchemaOf(schema) as JsonValue;
    } catch {
      stored = null;
    }
    schemaCache.set(schema, stored);
  }
  return stored;
}

function storeUsage(usage: TokenUsage): JsonObject {
  return { ...usage };
}

function storeOutput(output: TaskOutput): JsonObject {
  const stored: JsonObject = {
    raw: output.raw,
    description: output.description,
    expectedOutput: output.expectedOutput,
    agentRole: output.agentRole,
    usage: storeUsage(output.usage),
    edited: output.edited,
  };
  if (output.structured !== undefined)
    stored.structured = encodeValue(output.structured) as unknown as JsonValue;
  return stored;
}

function taskData(crew: Crew, task: Task): JsonObject {
  const completed = task.status === 'completed' && task.output !== undefined;
  const notStarted =
    task.status === 'pending' &&
    !task.output &&
    !task.conversation &&
    Object.keys(task.delegations).length === 0;
  const settled = completed || notStarted;
  if (settled) {
    const cached = settledTaskCache.get(task);
    if (
      cached &&
      cached.id === task.id &&
      cached.status === task.status &&
      cached.output === task.output &&
      cached.startedEmitted === task.startedEmitted
    ) {
      return cached.data;
    }
  }
  const data: JsonObject = {
    id: task.id,
    name: task.name ?? null,
    description: task.description,
    expectedOutput: task.expectedOutput,
    agent: task.agent ? crew.agents.indexOf(task.agent) : null,
    context: task.context ? task.context.map((earlier) => crew.tasks.indexOf(earlier)) : null,
    outputSchema: storeSchema(task.outputSchema),
    status: task.status,
    startedEmitted: task.startedEmitted,
    output: task.output ? storeOutput(task.output) : null,
    // Only unfinished work needs its conversation to resume; a completed task's output is enough.
    systemPrompt: completed ? null : (task.systemPrompt ?? null),
    conversation: completed ? null : storeConversation(task.conversation),
    delegations: completed
      ? {}
      : Object.fromEntries(
          Object.entries(task.delegations).map(([id, conversation]) => [id, storeConversation(conversation)]),
        ),
  };
  if (!settled) return data;
  // Redacted once here; checkpoint writes then pass the cached subtree through without scanning it.
  const redacted = markRedacted(data);
  settledTaskCache.set(task, {
    id: task.id,
    status: task.status,
    output: task.output,
    startedEmitted: task.startedEmitted,
    data: redacted,
  });
  return redacted;
}

// A kickoff's inputs are copied into a new object at each kickoff and not changed during it.
const inputsCache = new WeakMap<object, JsonValue>();

function storedInputs(inputs: Record<string, unknown>): JsonValue {
  let stored = inputsCache.get(inputs);
  if (stored === undefined) {
    stored = markRedacted(encodeValue(inputs) as unknown as JsonValue);
    inputsCache.set(inputs, stored);
  }
  return stored;
}

/** The crew as a checkpoint entity: definition (names and templates only) and progress. */
export function snapshotCrew(crew: Crew): EntitySnapshot {
  const data: JsonObject = {
    version: CREW_DATA_VERSION,
    name: crew.name,
    process: crew.process,
    memory: crew.memoryEnabled,
    cachePreload: crew.cachePreload,
    cachePreloadStrategy: crew.cachePreloadStrategy,
    checkpoint: storeCheckpointSetting(crew.checkpoint),
    status: crew.status,
    kickoffStarted: crew.kickoffStarted,
    inputs: storedInputs(crew.inputs),
    agents: crew.agents.map((agent) => agentDefinitionData(agent)),
    manager: crew.manager ? { ...agentDefinitionData(crew.manager), generated: crew.managerGenerated } : null,
    tasks: crew.tasks.map((task) => taskData(crew, task)),
    memoryState: crew.memory ? (crew.memory.toJSON() as unknown as JsonValue) : null,
    knowledge: crew.knowledge ? knowledgeData(crew.knowledge) : null,
    probeUsage: storeUsage(crew.probeUsage),
  };
  if (crew.restoreKey !== undefined) data.restoreKey = crew.restoreKey;
  return { kind: 'crew', id: crew.id, name: crew.name, data };
}

const knowledgeCache = new WeakMap<KnowledgeBase, JsonValue>();

function knowledgeData(knowledge: KnowledgeBase): JsonValue {
  let data = knowledgeCache.get(knowledge);
  if (data === undefined) {
    data = markRedacted(knowledge.toJSON() as unknown as JsonValue);
    knowledgeCache.set(knowledge, data);
  }
  return data;
}

/** The crew entity of a checkpoint: the one named `name`, else the first crew. */
export function findCrewSnapshot(loaded: LoadedCheckpoint, name?: string): EntitySnapshot {
  const crews = loaded.document.entities.filter((entity) => entity.kind === 'crew');
  const snapshot =
    (name !== undefined ? crews.find((entity) => entity.name === name) : undefined) ?? crews[0];
  if (!snapshot) {
    const present =
      loaded.document.entities.map((entity) => `${entity.kind} "${entity.name}"`).join(', ') || 'nothing';
    throw new CrewlineError(
      component,
      'not_found',
      `checkpoint ${loaded.document.metadata.id} holds no crew (it holds ${present}); restore it with the class that wrote it`,
    );
  }
  return snapshot;
}

function readUsage(value: JsonValue | undefined): TokenUsage {
  const stored = asObject(value);
  const usage = emptyUsage();
  for (const key of Object.keys(usage) as (keyof TokenUsage)[]) {
    if (typeof stored[key] === 'number') usage[key] = stored[key] as number;
  }
  return usage;
}

function readStatus(value: JsonValue | undefined): TaskStatus {
  return value === 'running' || value === 'completed' || value === 'failed' ? value : 'pending';
}

function readOutput(task: Task, value: JsonValue | undefined): TaskOutput | undefined {
  if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value))
    return undefined;
  return new TaskOutput({
    taskId: task.id,
    name: task.name,
    description: asString(value.description, task.description),
    expectedOutput: asString(value.expectedOutput, task.expectedOutput),
    agentRole: asString(value.agentRole),
    raw: asString(value.raw),
    ...(value.structured !== undefined
      ? { structured: decodeValue(value.structured as unknown as EncodedValue) }
      : {}),
    usage: readUsage(value.usage),
    edited: value.edited === true,
  });
}

/**
 * Puts a saved crew's progress onto a crew with the same shape (same tasks in the same order):
 * ids, statuses, outputs, the in-progress conversation, memory and inputs.
 */
export function applyCrewSnapshot(crew: Crew, snapshot: EntitySnapshot): void {
  const data = snapshot.data;
  const tasks = Array.isArray(data.tasks) ? data.tasks : [];
  const agents = Array.isArray(data.agents) ? data.agents : [];
  if (tasks.length !== crew.tasks.length) {
    throw new CrewlineError(
      component,
      'invalid_state',
      `the checkpoint's crew "${snapshot.name}" has ${tasks.length} tasks but this crew has ${crew.tasks.length}; restore it with Crew.fromCheckpoint() to rebuild it as saved`,
    );
  }
  crew.id = snapshot.id;
  crew.status = readCrewStatus(data.status);
  crew.kickoffStarted = data.kickoffStarted === true;
  crew.inputs = data.inputs
    ? decodeValue<Record<string, unknown>>(data.inputs as unknown as EncodedValue)
    : {};
  crew.probeUsage = readUsage(data.probeUsage);
  agents.forEach((stored, index) => {
    const agent = crew.agents[index];
    if (!agent) return;
    const storedAgent = asObject(stored);
    agent.id = asString(storedAgent.id, agent.id);
    applyAgentMemory(agent, storedAgent);
  });
  if (crew.manager && data.manager) crew.manager.id = asString(asObject(data.manager).id, crew.manager.id);
  tasks.forEach((stored, index) => {
    const task = crew.tasks[index]!;
    const storedTask = asObject(stored);
    task.id = asString(storedTask.id, task.id);
    task.status = readStatus(storedTask.status);
    task.startedEmitted = storedTask.startedEmitted === true;
    task.output = readOutput(task, storedTask.output);
    if (task.status === 'completed' && !task.output) task.status = 'pending';
    task.systemPrompt = typeof storedTask.systemPrompt === 'string' ? storedTask.systemPrompt : undefined;
    task.conversation = restoreConversation(storedTask.conversation);
    task.delegations = {};
    for (const [id, conversation] of Object.entries(asObject(storedTask.delegations))) {
      const restored = restoreConversation(conversation);
      if (restored) task.delegations[id] = restored;
    }
  });
  if (crew.memoryEnabled) {
    crew.memory = data.memoryState ? ShortTermMemory.fromJSON(data.memoryState) : new ShortTermMemory();
  }
}

function readCrewStatus(value: JsonValue | undefined): Crew['status'] {
  // A crew saved while running (or failed) continues; the tasks say what is left.
  return value === 'completed' ? 'completed' : value === 'pending' ? 'pending' : 'running';
}

function rebuildSchema(stored: JsonValue | undefined, taskLabel: string): z.ZodType | undefined {
  if (stored === null || stored === undefined) return undefined;
  try {
    return z.fromJSONSchema(stored as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (error) {
    logger.warn(
      component,
      `the output schema of task "${taskLabel}" could not be rebuilt; its output will not be validated`,
      error,
    );
    return undefined;
  }
}

/**
 * Builds a crew from a checkpoint alone: agents (model ids, registered tools), tasks (templates,
 * context, output schemas as JSON schema), memory and knowledge. Everything the registry lacks is
 * reported at once in a `not_rebuildable` error.
 */
export async function rebuildCrew(
  snapshot: EntitySnapshot,
  registry: ProjectRegistry = projectRegistry(),
  providers?: ProviderRegistry,
): Promise<Crew> {
  const data = snapshot.data;
  const missing = new MissingParts();
  const agents: Agent[] = [];
  for (const stored of Array.isArray(data.agents) ? data.agents : []) {
    agents.push(await rebuildAgent(asObject(stored), undefined, { registry, missing, providers }));
  }
  const storedManager = data.manager ? asObject(data.manager) : undefined;
  const manager = storedManager
    ? await rebuildAgent(storedManager, undefined, { registry, missing, providers })
    : undefined;
  missing.throwIfAny(`crew "${snapshot.name}"`);
  const tasks: Task[] = [];
  for (const stored of Array.isArray(data.tasks) ? data.tasks : []) {
    const storedTask = asObject(stored);
    const agentIndex = typeof storedTask.agent === 'number' ? storedTask.agent : -1;
    const context = Array.isArray(storedTask.context)
      ? storedTask.context
          .map((index) => (typeof index === 'number' ? tasks[index] : undefined))
          .filter((task) => task !== undefined)
      : undefined;
    const description = asString(storedTask.description);
    const outputSchema = rebuildSchema(storedTask.outputSchema, description.slice(0, 60));
    tasks.push(
      new Task({
        description,
        expectedOutput: asString(storedTask.expectedOutput),
        ...(agents[agentIndex] ? { agent: agents[agentIndex] } : {}),
        ...(context ? { context } : {}),
        ...(outputSchema ? { outputSchema } : {}),
        ...(typeof storedTask.name === 'string' ? { name: storedTask.name } : {}),
      }),
    );
  }
  const process = data.process === 'hierarchical' ? 'hierarchical' : 'sequential';
  const crew = new Crew({
    name: snapshot.name,
    agents,
    tasks,
    process,
    ...(process === 'hierarchical' && manager
      ? storedManager?.generated === true
        ? { managerLlm: manager.llm }
        : { manager }
      : {}),
    memory: data.memory === true,
    checkpoint: await restoreCheckpointSetting(data.checkpoint, providers),
    cachePreload: data.cachePreload === true,
    cachePreloadStrategy: readStrategy(data.cachePreloadStrategy),
    ...(typeof data.restoreKey === 'string' ? { restoreKey: data.restoreKey } : {}),
  });
  if (data.knowledge) crew.knowledge = KnowledgeBase.fromJSON(data.knowledge);
  if (crew.manager && manager) crew.manager.id = manager.id;
  return crew;
}

function readStrategy(value: JsonValue | undefined): CachePreloadStrategy {
  return value === 'sequential' || value === 'shared_prefix' ? value : 'parallel';
}
