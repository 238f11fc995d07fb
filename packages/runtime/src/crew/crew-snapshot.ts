import { CrewlineError, logger } from '@crewline/events';
import {
  decodeValue,
  type EncodedValue,
  type EntitySnapshot,
  encodeValue,
  type JsonValue,
  type ProviderRegistry,
  redactSecrets,
  type SettledValues,
  type ValueCodec,
} from '@crewline/runtime-state';
import {
  type CrewData,
  parseCrewData,
  type TaskData,
  type TaskOutputData,
  toCrewData,
} from '@crewline/runtime-state/internal';
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import {
  agentDefinitionData,
  applyAgentMemory,
  knowledgeData,
  MissingParts,
  rebuildAgent,
} from '../agent/agent-snapshot.js';
import { restoreCheckpointSetting, settledCheckpointSetting } from '../checkpointing/checkpoint-setting.js';
import { runValueCodec } from '../checkpointing/run-value-codec.js';
import { restoreConversation, settlerOf } from '../checkpointing/snapshot-values.js';
import { byContent, StoredForms } from '../checkpointing/stored-forms.js';
import { methodScope } from '../flow/method-scope.js';
import { KnowledgeBase } from '../knowledge/knowledge-base.js';
import { ShortTermMemory } from '../memory/short-term-memory.js';
import { type ProjectRegistry, projectRegistry } from '../project-config/project-config.js';
import { Task } from '../task/task.js';
import { TaskOutput } from '../task/task-output.js';
import type { CrewOptions } from './crew-options.js';
import type { CrewParts } from './crew-parts.js';
import { settledAgentList, settledUsage } from './settled-crew-parts.js';
import { settledTaskList } from './settled-task-list.js';
import { TaskPositions } from './task-positions.js';
import { taskData } from './task-stored-form.js';

const component = 'runtime';

// The kickoff inputs are the run's `state.inputs` too, which may be changed in place during the run
// (a handler setting `state.inputs.topic`): they are compared by content, so the crew's copy never
// falls behind the document's and a resume renders its tasks with the inputs the run went on with.
const inputsForms = new StoredForms({
  sources: (crew: CrewParts, _context: undefined) =>
    [byContent(crew.inputs), runValueCodec(crew.valueRegistry)] as const,
  build: ([inputs, codec]): EncodedValue => encodeValue(inputs, codec),
});

/** The crew as a checkpoint entity: definition (names and templates only) and progress. */
export function snapshotCrew(crew: CrewParts, settled?: SettledValues): EntitySnapshot {
  return { kind: 'crew', id: crew.id, name: crew.name, data: toCrewData(crewData(crew, settled)) };
}

/** The crew's data as a checkpoint holds it (typed; see `CrewData` in runtime-state). */
export function crewData(crew: CrewParts, settled?: SettledValues): Omit<CrewData, 'version'> {
  const settle = settlerOf(settled);
  const positions = new TaskPositions(crew.tasks);
  const data: Omit<CrewData, 'version'> = {
    name: crew.name,
    process: crew.process,
    memory: crew.memoryEnabled,
    cachePreload: crew.cachePreload,
    cachePreloadStrategy: crew.cachePreloadStrategy,
    checkpoint: settledCheckpointSetting(crew.checkpoint, settle),
    status: crew.status,
    kickoffStarted: crew.kickoffStarted,
    inputs: settle(inputsForms.stored(crew, undefined, settle)),
    agents: settledAgentList(crew.agents, settle, (agent) => agentDefinitionData(agent, settle)),
    manager: crew.manager
      ? { ...agentDefinitionData(crew.manager, settle), generated: crew.managerGenerated }
      : null,
    tasks:
      settled === undefined
        ? crew.tasks.map((task) => taskData({ crew, positions }, task, settle))
        : settledTaskList(crew, settled, settle),
    memoryState: crew.memory ? crew.memory.toJSON() : null,
    knowledge: crew.knowledge ? knowledgeData(crew.knowledge, settle) : null,
    probeUsage: settledUsage(crew.probeUsage, settle),
  };
  if (crew.restoreKey !== undefined) data.restoreKey = crew.restoreKey;
  return data;
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
    // Inside a flow method, the method's code made this crew: rebuilding the saved one would not
    // make the method's code match it.
    const method = methodScope.getStore()?.activation.method;
    throw new CrewlineError(
      component,
      'invalid_state',
      method === undefined
        ? `the checkpoint's crew "${snapshot.name}" has ${data.tasks.length} tasks but this crew has ${crew.tasks.length}; restore it with Crew.fromCheckpoint() to rebuild it as saved`
        : `flow method "${method}": the checkpoint's crew "${snapshot.name}" has ${data.tasks.length} tasks but the crew it kicks off now has ${crew.tasks.length} (the method's code changed since the checkpoint); continue from a checkpoint taken before "${method}" started (crewline checkpoint list shows each one's trigger), or kick the flow off anew, and the method runs from its start with the crew it makes now; or run the code the checkpoint was taken with`,
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
  warnOfChangedTasks(crew, snapshot.name, data.tasks);
  data.tasks.forEach((stored, index) => {
    applyTaskData(crew.tasks[index]!, stored, codec);
  });
  if (crew.memoryEnabled) {
    crew.memory = data.memoryState ? ShortTermMemory.fromJSON(data.memoryState) : new ShortTermMemory();
  }
}

/**
 * Says which tasks with saved work (an output, or a conversation under way) are described otherwise
 * than when it was saved: their saved work, made with the old description, is kept, and a later task
 * runs with the new one, a mix nobody asked for without a word (a prompt edited between a run and
 * its resume). Not refused: a wording fix is a common reason to resume, and the work is paid for.
 */
function warnOfChangedTasks(crew: CrewParts, crewName: string, stored: readonly TaskData[]): void {
  const changed = stored.flatMap((saved, index) => {
    const task = crew.tasks[index]!;
    const hasWork = saved.output !== null || saved.conversation !== null;
    if (!hasWork) return [];
    if (
      sameAsStored(task.description, saved.description) &&
      sameAsStored(task.expectedOutput, saved.expectedOutput)
    )
      return [];
    return [
      `task ${index + 1} (now "${oneLine(task.description)}", saved as "${oneLine(saved.description)}")`,
    ];
  });
  if (changed.length === 0) return;
  logger.warn(
    component,
    `crew "${crewName}": ${changed.join('; ')} changed since the checkpoint; the saved work of ${changed.length === 1 ? 'that task' : 'those tasks'} (made with the old text) is kept and later tasks run with the new one. To run ${changed.length === 1 ? 'it' : 'them'} again with the new text, continue from a checkpoint taken before ${changed.length === 1 ? 'it' : 'they'} started, or replace ${changed.length === 1 ? 'its' : 'their'} output (crewline checkpoint fork --set-output N=…)`,
  );
}

/** Whether `live` is what was stored as `stored`: checkpoints hold texts with their secrets redacted. */
function sameAsStored(live: string, stored: string): boolean {
  return live === stored || redactSecrets(live) === stored;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
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
