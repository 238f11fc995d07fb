import { CrewlineError, logger } from '@crewline/events';
import {
  type CheckpointDocument,
  encodeValue,
  type JsonObject,
  type JsonValue,
} from '@crewline/runtime-state';
import { z } from 'zod';
import { emptyUsage } from '../agent-loop/conversation.js';
import { parseStructuredOutput } from '../agent-loop/structured-output.js';
import { asObject, asString } from '../checkpointing/snapshot-values.js';
import {
  type MemoryItem,
  ShortTermMemory,
  type ShortTermMemorySnapshot,
} from '../memory/short-term-memory.js';
import { type Task, taskLabel } from '../task/task.js';
import { TaskOutput } from '../task/task-output.js';
import type { Crew } from './crew.js';
import { workerFor } from './crew-execution.js';

const component = 'runtime';

function parseEdited(raw: string, schema: z.ZodType | undefined, label: string): unknown {
  if (!schema) return undefined;
  const parsed = parseStructuredOutput(raw, schema);
  if (!parsed.success) {
    throw new CrewlineError(
      component,
      'invalid_argument',
      `the new output of task "${label}" must match its outputSchema: ${parsed.reason}; pass JSON that the schema accepts`,
    );
  }
  return parsed.value;
}

/** Memory items of this crew's tasks from `fromIndex` on are forgotten (they are being redone). */
function keepMemoryItem(item: MemoryItem, crewId: string, fromIndex: number): boolean {
  const { crewId: itemCrew, taskIndex } = item.metadata as { crewId?: unknown; taskIndex?: unknown };
  return !(itemCrew === crewId && typeof taskIndex === 'number' && taskIndex >= fromIndex);
}

function prunedMemory(memory: ShortTermMemory, crewId: string, fromIndex: number): ShortTermMemory {
  const snapshot = memory.toJSON();
  return ShortTermMemory.fromJSON({
    ...snapshot,
    items: snapshot.items.filter((item) => keepMemoryItem(item, crewId, fromIndex)),
  });
}

/**
 * Sets a task's output by hand and invalidates every later task (status, output, conversation), so
 * that a resume or fork runs them again against the edited context. Memory items of the edited and
 * later tasks are replaced.
 */
export function setTaskOutputOnCrew(crew: Crew, which: number | Task, raw: string): void {
  const index = typeof which === 'number' ? which : crew.tasks.indexOf(which);
  const task = crew.tasks[index];
  if (!Number.isInteger(index) || !task) {
    throw new CrewlineError(
      component,
      'invalid_argument',
      `crew "${crew.name}" has no task ${typeof which === 'number' ? which : `"${which.label}"`}; pass an index from 0 to ${crew.tasks.length - 1} or one of its Task objects`,
    );
  }
  if (typeof raw !== 'string') {
    throw new CrewlineError(
      component,
      'invalid_argument',
      `the new output of task "${task.label}" must be a string`,
    );
  }
  const structured = parseEdited(raw, task.outputSchema, task.label);
  const previous = task.output;
  const worker = workerFor(crew, task);
  task.output = new TaskOutput({
    taskId: task.id,
    name: task.name,
    description: previous?.description ?? task.description,
    expectedOutput: previous?.expectedOutput ?? task.expectedOutput,
    agentRole: previous?.agentRole ?? worker.role,
    raw,
    ...(task.outputSchema ? { structured } : {}),
    usage: previous?.usage ?? emptyUsage(),
    edited: true,
  });
  task.status = 'completed';
  task.startedEmitted = true;
  task.conversation = undefined;
  task.delegations = {};
  task.systemPrompt = undefined;
  for (const later of crew.tasks.slice(index + 1)) later.resetProgress();
  if (crew.status === 'completed' || crew.status === 'failed') crew.status = 'running';
  const metadata = { task: task.label, agent: worker.role, crewId: crew.id, taskIndex: index };
  if (crew.memory) crew.memory = withEdited(prunedMemory(crew.memory, crew.id, index), raw, metadata);
  for (const agent of [...crew.agents, ...(crew.manager ? [crew.manager] : [])]) {
    if (!agent.memory) continue;
    const pruned = prunedMemory(agent.memory, crew.id, index);
    agent.memory = agent === worker ? withEdited(pruned, raw, metadata) : pruned;
  }
}

function withEdited(
  memory: ShortTermMemory,
  raw: string,
  metadata: Record<string, unknown>,
): ShortTermMemory {
  if (raw.trim() === '') return memory;
  // Saved quietly: an edit happens outside any run, so its memory events belong to none.
  memory.bind({ emit: () => undefined });
  memory.save(raw, metadata);
  return memory;
}

/**
 * Applies edited outputs to the crews inside a checkpoint document (for a flow whose crews are
 * rebuilt by its methods). `outputs` maps a flat task index — counting the tasks of every crew in the
 * checkpoint, in order — to the new raw output; every later task, in this crew and in later crews, is
 * invalidated. Returns an edited copy; the input is not changed.
 */
export function editTaskOutputsInDocument(
  document: CheckpointDocument,
  outputs: Readonly<Record<number, string>>,
): CheckpointDocument {
  const indices = Object.keys(outputs)
    .map(Number)
    .sort((a, b) => a - b);
  if (indices.length === 0) return document;
  const edited = structuredClone(document);
  const crews = edited.entities.filter((entity) => entity.kind === 'crew');
  const total = crews.reduce(
    (count, crew) => count + (Array.isArray(crew.data.tasks) ? crew.data.tasks.length : 0),
    0,
  );
  for (const index of indices) {
    if (!Number.isInteger(index) || index < 0 || index >= total) {
      throw new CrewlineError(
        component,
        'invalid_argument',
        `task index ${index} is out of range: the checkpoint holds ${total} task(s) across its crews (0 to ${total - 1})`,
      );
    }
  }
  const first = indices[0]!;
  let flat = 0;
  for (const crew of crews) {
    const tasks = (Array.isArray(crew.data.tasks) ? crew.data.tasks : []) as JsonObject[];
    let firstLocal: number | undefined;
    tasks.forEach((task, local) => {
      const position = flat + local;
      const replacement = outputs[position];
      if (replacement !== undefined) {
        editStoredTask(task, replacement);
        firstLocal ??= local;
      } else if (position > first) {
        invalidateStoredTask(task);
        firstLocal ??= local;
      }
    });
    if (firstLocal !== undefined) {
      if (crew.data.status === 'completed' || crew.data.status === 'failed') crew.data.status = 'running';
      pruneStoredMemory(crew.data, crew.id, firstLocal, tasks);
    }
    flat += tasks.length;
  }
  return edited;
}

function editStoredTask(task: JsonObject, raw: string): void {
  const schemaJson = task.outputSchema;
  let structured: unknown;
  if (schemaJson !== null && schemaJson !== undefined) {
    let schema: z.ZodType | undefined;
    try {
      schema = z.fromJSONSchema(schemaJson as Parameters<typeof z.fromJSONSchema>[0]);
    } catch (error) {
      logger.warn(
        component,
        'an output schema in the checkpoint could not be rebuilt; the edited output is not validated',
        error,
      );
    }
    structured = parseEdited(
      raw,
      schema,
      taskLabel(typeof task.name === 'string' ? task.name : undefined, asString(task.description)),
    );
  }
  const previous = asObject(task.output);
  const output: JsonObject = {
    raw,
    description: asString(previous.description, asString(task.description)),
    expectedOutput: asString(previous.expectedOutput, asString(task.expectedOutput)),
    agentRole: asString(previous.agentRole),
    usage: (previous.usage as JsonValue | undefined) ?? { ...emptyUsage() },
    edited: true,
  };
  if (structured !== undefined) output.structured = encodeValue(structured) as unknown as JsonValue;
  task.output = output;
  task.status = 'completed';
  task.startedEmitted = true;
  task.conversation = null;
  task.delegations = {};
  task.systemPrompt = null;
}

function invalidateStoredTask(task: JsonObject): void {
  task.status = 'pending';
  task.output = null;
  task.conversation = null;
  task.delegations = {};
  task.startedEmitted = false;
  task.systemPrompt = null;
}

function pruneStoredMemory(
  crewData: JsonObject,
  crewId: string,
  fromIndex: number,
  tasks: JsonObject[],
): void {
  const prune = (stored: JsonValue | undefined): JsonValue | undefined => {
    if (stored === null || stored === undefined) return stored;
    const snapshot = stored as unknown as ShortTermMemorySnapshot;
    if (!Array.isArray(snapshot.items)) return stored;
    const items = snapshot.items.filter((item) => keepMemoryItem(item, crewId, fromIndex));
    const edited = tasks[fromIndex];
    const output = edited ? asObject(edited.output) : {};
    if (edited?.status === 'completed' && typeof output.raw === 'string' && output.raw.trim() !== '') {
      // The new text replaces the old in memory; the id is derived from text and metadata.
      const memory = ShortTermMemory.fromJSON({ ...snapshot, items });
      memory.bind({ emit: () => undefined });
      memory.save(output.raw, {
        task: taskLabel(
          typeof edited.name === 'string' ? edited.name : undefined,
          asString(edited.description),
        ),
        agent: asString(output.agentRole),
        crewId,
        taskIndex: fromIndex,
      });
      return memory.toJSON() as unknown as JsonValue;
    }
    return { ...snapshot, items } as unknown as JsonValue;
  };
  crewData.memoryState = prune(crewData.memoryState) ?? null;
  for (const agent of Array.isArray(crewData.agents) ? (crewData.agents as JsonObject[]) : []) {
    if (agent.memory !== null && agent.memory !== undefined) {
      const items = (agent.memory as unknown as ShortTermMemorySnapshot).items ?? [];
      agent.memory = {
        ...(agent.memory as JsonObject),
        items: items.filter((item) => keepMemoryItem(item, crewId, fromIndex)) as unknown as JsonValue,
      };
    }
  }
}
