import { CrewlineError, logger } from '@crewline/events';
import {
  decodeValue,
  type EncodedValue,
  type EntitySnapshot,
  encodeValue,
  type JsonValue,
  type ProviderRegistry,
  type SettledValues,
  type ValueCodec,
} from '@crewline/runtime-state';
import {
  type CrewData,
  parseCrewData,
  type TaskData,
  type TaskOutputData,
  toCrewData,
  type UsageData,
} from '@crewline/runtime-state/internal';
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import {
  agentDefinitionData,
  applyAgentMemory,
  MissingParts,
  rebuildAgent,
} from '../agent/agent-snapshot.js';
import type { Conversation, TokenUsage } from '../agent-loop/conversation.js';
import { jsonSchemaOf } from '../agent-loop/structured-output.js';
import { restoreCheckpointSetting, settledCheckpointSetting } from '../checkpointing/checkpoint-setting.js';
import { runValueCodec } from '../checkpointing/run-value-codec.js';
import {
  restoreConversation,
  type Settle,
  settlerOf,
  storeConversation,
} from '../checkpointing/snapshot-values.js';
import { KnowledgeBase } from '../knowledge/knowledge-base.js';
import { ShortTermMemory } from '../memory/short-term-memory.js';
import { type ProjectRegistry, projectRegistry } from '../project-config/project-config.js';
import { Task } from '../task/task.js';
import { TaskOutput } from '../task/task-output.js';
import type { CrewOptions } from './crew-options.js';
import type { CrewParts } from './crew-parts.js';
import { settledAgentList, settledUsage } from './settled-crew-parts.js';
import { settledTaskList } from './settled-task-list.js';

const component = 'runtime';

interface TaskCacheEntry {
  id: string;
  status: Task['status'];
  output: TaskOutput | undefined;
  startedEmitted: boolean;
  data: TaskData;
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

function storeUsage(usage: TokenUsage): UsageData {
  return { ...usage };
}

// Conversations are stored by the agent loop's writer, in the shape the crew data schema checks.
function storedConversation(
  conversation: Conversation | undefined,
  settle: Settle,
): TaskData['conversation'] {
  return storeConversation(conversation, settle) as TaskData['conversation'];
}

function storeOutput(output: TaskOutput, codec: ValueCodec): TaskOutputData {
  const stored: TaskOutputData = {
    raw: output.raw,
    description: output.description,
    expectedOutput: output.expectedOutput,
    agentRole: output.agentRole,
    usage: storeUsage(output.usage),
    edited: output.edited,
  };
  if (output.structured !== undefined) stored.structured = encodeValue(output.structured, codec);
  return stored;
}

function hasDelegations(task: Task): boolean {
  for (const _ in task.delegations) return true;
  return false;
}

/** A task whose stored form does not change until it does: completed, or not started. */
function isSettledTask(task: Task): boolean {
  if (task.status === 'completed') return task.output !== undefined;
  return task.status === 'pending' && !task.output && !task.conversation && !hasDelegations(task);
}

function taskData(crew: CrewParts, task: Task, settle: Settle): TaskData {
  const completed = task.status === 'completed' && task.output !== undefined;
  const settled = isSettledTask(task);
  if (settled) {
    const cached = settledTaskCache.get(task);
    if (
      cached &&
      cached.id === task.id &&
      cached.status === task.status &&
      cached.output === task.output &&
      cached.startedEmitted === task.startedEmitted
    ) {
      return settle(cached.data);
    }
  }
  const data: TaskData = {
    id: task.id,
    name: task.name ?? null,
    description: task.description,
    expectedOutput: task.expectedOutput,
    agent: task.agent ? crew.agents.indexOf(task.agent) : null,
    context: task.context ? task.context.map((earlier) => crew.tasks.indexOf(earlier)) : null,
    outputSchema: storeSchema(task.outputSchema),
    status: task.status,
    startedEmitted: task.startedEmitted,
    output: task.output ? storeOutput(task.output, runValueCodec(crew.valueRegistry)) : null,
    // Only unfinished work needs its conversation to resume; a completed task's output is enough.
    systemPrompt: completed ? null : (task.systemPrompt ?? null),
    conversation: completed ? null : storedConversation(task.conversation, settle),
    delegations:
      completed || !hasDelegations(task)
        ? {}
        : Object.fromEntries(
            Object.entries(task.delegations).map(([id, conversation]) => [
              id,
              storedConversation(conversation, settle)!,
            ]),
          ),
  };
  if (!settled) return data;
  // Built once here and settled in the run: redacted once, and stored once by providers that can.
  settledTaskCache.set(task, {
    id: task.id,
    status: task.status,
    output: task.output,
    startedEmitted: task.startedEmitted,
    data,
  });
  return settle(data);
}

// A kickoff's inputs are copied into a new object at each kickoff and not changed during it.
const inputsCache = new WeakMap<object, EncodedValue>();

function storedInputs(inputs: Record<string, unknown>, settle: Settle, codec: ValueCodec): EncodedValue {
  let stored = inputsCache.get(inputs);
  if (stored === undefined) {
    stored = encodeValue(inputs, codec);
    inputsCache.set(inputs, stored);
  }
  return settle(stored);
}

/** The crew as a checkpoint entity: definition (names and templates only) and progress. */
export function snapshotCrew(crew: CrewParts, settled?: SettledValues): EntitySnapshot {
  return { kind: 'crew', id: crew.id, name: crew.name, data: toCrewData(crewData(crew, settled)) };
}

/** The crew's data as a checkpoint holds it (typed; see `CrewData` in runtime-state). */
export function crewData(crew: CrewParts, settled?: SettledValues): Omit<CrewData, 'version'> {
  const settle = settlerOf(settled);
  const data: Omit<CrewData, 'version'> = {
    name: crew.name,
    process: crew.process,
    memory: crew.memoryEnabled,
    cachePreload: crew.cachePreload,
    cachePreloadStrategy: crew.cachePreloadStrategy,
    checkpoint: settledCheckpointSetting(crew.checkpoint, settle),
    status: crew.status,
    kickoffStarted: crew.kickoffStarted,
    inputs: storedInputs(crew.inputs, settle, runValueCodec(crew.valueRegistry)),
    agents: settledAgentList(crew.agents, settle, (agent) => agentDefinitionData(agent, settle)),
    manager: crew.manager
      ? { ...agentDefinitionData(crew.manager, settle), generated: crew.managerGenerated }
      : null,
    tasks:
      settled === undefined
        ? crew.tasks.map((task) => taskData(crew, task, settle))
        : settledTaskList(crew.tasks, settled, (task) => taskData(crew, task, settle), isSettledTask),
    memoryState: crew.memory ? crew.memory.toJSON() : null,
    knowledge: crew.knowledge ? knowledgeData(crew.knowledge, settle) : null,
    probeUsage: settledUsage(crew.probeUsage, settle),
  };
  if (crew.restoreKey !== undefined) data.restoreKey = crew.restoreKey;
  return data;
}

const knowledgeCache = new WeakMap<KnowledgeBase, JsonValue>();

function knowledgeData(knowledge: KnowledgeBase, settle: Settle): JsonValue {
  let data = knowledgeCache.get(knowledge);
  if (data === undefined) {
    data = knowledge.toJSON() as unknown as JsonValue;
    knowledgeCache.set(knowledge, data);
  }
  return settle(data);
}

function readOutput(task: Task, stored: TaskOutputData | null, codec: ValueCodec): TaskOutput | undefined {
  if (stored === null) return undefined;
  return new TaskOutput({
    taskId: task.id,
    name: task.name,
    description: stored.description,
    expectedOutput: stored.expectedOutput,
    agentRole: stored.agentRole,
    raw: stored.raw,
    ...(stored.structured !== undefined ? { structured: decodeValue(stored.structured, codec) } : {}),
    usage: { ...stored.usage },
    edited: stored.edited,
  });
}

/** Puts one task's saved progress onto a task: status, output, the in-progress conversation. */
export function applyTaskData(task: Task, stored: TaskData, codec: ValueCodec): void {
  task.id = stored.id;
  task.status = stored.status;
  task.startedEmitted = stored.startedEmitted;
  task.output = readOutput(task, stored.output, codec);
  task.systemPrompt = stored.systemPrompt ?? undefined;
  task.conversation = restoreConversation(stored.conversation as JsonValue);
  task.delegations = {};
  for (const [id, conversation] of Object.entries(stored.delegations)) {
    const restored = restoreConversation(conversation as JsonValue);
    if (restored) task.delegations[id] = restored;
  }
}

/**
 * Puts a saved crew's progress onto a crew with the same shape (same tasks in the same order):
 * ids, statuses, outputs, the in-progress conversation, memory and inputs.
 */
export function applyCrewSnapshot(crew: CrewParts, snapshot: EntitySnapshot): void {
  const data = parseCrewData(snapshot);
  if (data.tasks.length !== crew.tasks.length) {
    throw new CrewlineError(
      component,
      'invalid_state',
      `the checkpoint's crew "${snapshot.name}" has ${data.tasks.length} tasks but this crew has ${crew.tasks.length}; restore it with Crew.fromCheckpoint() to rebuild it as saved`,
    );
  }
  crew.id = snapshot.id;
  // A crew saved while failed continues like an interrupted one; the tasks say what is left.
  crew.status = data.status === 'failed' ? 'running' : data.status;
  crew.kickoffStarted = data.kickoffStarted;
  const codec = runValueCodec(crew.valueRegistry);
  crew.inputs = decodeValue<Record<string, unknown>>(data.inputs, codec);
  crew.probeUsage = { ...data.probeUsage };
  data.agents.forEach((stored, index) => {
    const agent = crew.agents[index];
    if (!agent) return;
    agent.id = stored.id;
    applyAgentMemory(agent, stored);
  });
  if (crew.manager && data.manager) crew.manager.id = data.manager.id;
  data.tasks.forEach((stored, index) => {
    applyTaskData(crew.tasks[index]!, stored, codec);
  });
  if (crew.memoryEnabled) {
    crew.memory = data.memoryState ? ShortTermMemory.fromJSON(data.memoryState) : new ShortTermMemory();
  }
}

function rebuildSchema(stored: JsonValue, taskLabel: string): z.ZodType | undefined {
  if (stored === null) return undefined;
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
export async function rebuildCrew<T extends CrewParts>(
  // The class is passed in (Crew.fromLoaded passes itself) so that crew.ts and this module do not
  // import each other.
  crewClass: new (options: CrewOptions) => T,
  snapshot: EntitySnapshot,
  registry: ProjectRegistry = projectRegistry(),
  providers?: ProviderRegistry,
): Promise<T> {
  const data = parseCrewData(snapshot);
  // Only what the remaining work uses must be registered: an agent whose tasks all completed keeps
  // its unregistered tools by name (they fail if called) and runs no more. A manager may hand any
  // task to any agent, and a task without an agent may go to any of them: then every agent counts.
  const remaining = data.tasks
    .map((task, index) => ({ task, number: index + 1 }))
    .filter(({ task }) => task.status !== 'completed');
  const everyAgentWorks =
    data.process === 'hierarchical' || remaining.some(({ task }) => task.agent === null);
  const missing = new MissingParts();
  const agents: Agent[] = [];
  for (const [index, stored] of data.agents.entries()) {
    const own = new MissingParts();
    agents.push(await rebuildAgent(Agent, stored, undefined, { registry, missing: own, providers }));
    const work = remaining.filter(({ task }) => task.agent === index);
    if (work.length > 0) {
      for (const { task, number } of work)
        missing.addNeeded(own, `task ${number} "${task.description}" (agent ${stored.role})`);
    } else if (everyAgentWorks) missing.addNeeded(own, `agent ${stored.role}`);
  }
  let manager: Agent | undefined;
  if (data.manager) {
    const own = new MissingParts();
    manager = await rebuildAgent(Agent, data.manager, undefined, { registry, missing: own, providers });
    if (remaining.length > 0) missing.addNeeded(own, `the manager ${data.manager.role}`);
  }
  missing.throwIfAny(`crew "${snapshot.name}"`);
  const tasks: Task[] = [];
  for (const stored of data.tasks) {
    const context = stored.context?.map((index) => tasks[index]).filter((task) => task !== undefined);
    const outputSchema = rebuildSchema(stored.outputSchema, stored.description.slice(0, 60));
    const agent = stored.agent === null ? undefined : agents[stored.agent];
    tasks.push(
      new Task({
        description: stored.description,
        expectedOutput: stored.expectedOutput,
        ...(agent ? { agent } : {}),
        ...(context ? { context } : {}),
        ...(outputSchema ? { outputSchema } : {}),
        ...(stored.name !== null ? { name: stored.name } : {}),
      }),
    );
  }
  const crew = new crewClass({
    name: snapshot.name,
    agents,
    tasks,
    process: data.process,
    ...(data.process === 'hierarchical' && manager
      ? data.manager?.generated === true
        ? { managerLlm: manager.llm }
        : { manager }
      : {}),
    memory: data.memory,
    checkpoint: await restoreCheckpointSetting(data.checkpoint, providers),
    cachePreload: data.cachePreload,
    cachePreloadStrategy: data.cachePreloadStrategy,
    ...(data.restoreKey !== undefined ? { restoreKey: data.restoreKey } : {}),
  });
  if (data.knowledge) crew.knowledge = KnowledgeBase.fromJSON(data.knowledge);
  if (crew.manager && manager) crew.manager.id = manager.id;
  return crew;
}
