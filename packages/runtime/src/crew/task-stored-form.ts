import { encodeValue, type JsonValue, type ValueCodec } from '@crewline/runtime-state';
import type { TaskData, TaskOutputData, UsageData } from '@crewline/runtime-state/internal';
import type { z } from 'zod';
import type { Conversation, TokenUsage } from '../agent-loop/conversation.js';
import { jsonSchemaOf } from '../agent-loop/structured-output.js';
import { runValueCodec } from '../checkpointing/run-value-codec.js';
import { type Settle, storeConversation } from '../checkpointing/snapshot-values.js';
import { byContent, StoredForms } from '../checkpointing/stored-forms.js';
import type { Task } from '../task/task.js';
import type { TaskOutput } from '../task/task-output.js';
import type { CrewParts } from './crew-parts.js';
import type { TaskPositions } from './task-positions.js';

/** What a task's stored form reads besides the task: its crew, and where the crew's tasks stand. */
export interface TaskFormContext {
  readonly crew: CrewParts;
  readonly positions: TaskPositions;
}

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

function storeOutput(output: TaskOutput, codec: ValueCodec | undefined): TaskOutputData {
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

/** Whether a task's manager delegated to a coworker (its delegations have an entry). */
export function hasDelegations(delegations: Task['delegations']): boolean {
  for (const _ in delegations) return true;
  return false;
}

/** A task whose stored form does not change until it does: completed, or not started. */
function isSettledTask(task: Task): boolean {
  if (task.status === 'completed') return task.output !== undefined;
  return task.status === 'pending' && !task.output && !task.conversation && !hasDelegations(task.delegations);
}

// A completed task does not change until it is edited or reset (which replaces its output), and a
// task that has not started does not change until it starts, so their stored forms are built (and
// redacted) once: a crew-50 run on '*' writes about 500 checkpoints of 50 tasks each. Whatever else
// changes (the agent it is given to, the crew's agents reordered) is read again and compared.
const taskForms = new StoredForms({
  sources: (task: Task, { crew, positions }: TaskFormContext) =>
    [
      task.id,
      task.name ?? null,
      task.description,
      task.expectedOutput,
      task.agent ? crew.agents.indexOf(task.agent) : null,
      task.context ? byContent(task.context.map((earlier) => positions.of(earlier))) : null,
      task.outputSchema,
      task.status,
      task.startedEmitted,
      task.output,
      // Only a structured output is encoded; the codec grows when a class is registered.
      task.output?.structured === undefined ? undefined : runValueCodec(crew.valueRegistry),
      task.systemPrompt ?? null,
      task.conversation,
      task.delegations,
    ] as const,
  build: (
    [
      id,
      name,
      description,
      expectedOutput,
      agent,
      context,
      outputSchema,
      status,
      startedEmitted,
      output,
      codec,
      systemPrompt,
      conversation,
      delegations,
    ],
    settle,
  ): TaskData => {
    const completed = status === 'completed' && output !== undefined;
    return {
      id,
      name,
      description,
      expectedOutput,
      agent,
      context,
      outputSchema: storeSchema(outputSchema),
      status,
      startedEmitted,
      output: output ? storeOutput(output, codec) : null,
      // Only unfinished work needs its conversation to resume; a completed task's output is enough.
      systemPrompt: completed ? null : systemPrompt,
      conversation: completed ? null : storedConversation(conversation, settle),
      delegations:
        completed || !hasDelegations(delegations)
          ? {}
          : Object.fromEntries(
              Object.entries(delegations).map(([id, conversation]) => [
                id,
                storedConversation(conversation, settle)!,
              ]),
            ),
    };
  },
  // A task under way changes in place (its conversation grows): built afresh each time.
  keepable: isSettledTask,
});

/** A task's stored form as kept (see {@link keptTaskData}). */
export type KeptTaskData = NonNullable<ReturnType<typeof taskForms.kept>>;

/** One task's stored form: a settled task's kept one (settled in the run), else built now. */
export function taskData(context: TaskFormContext, task: Task, settle: Settle): TaskData {
  const kept = taskForms.kept(task, context, settle);
  // Built once and settled in the run: redacted once, and stored once by providers that can.
  return kept === undefined ? taskForms.built(task, context, settle) : settle(kept.stored);
}

/** A settled task's kept stored form (unsettled), or `undefined` for a task under way. */
export function keptTaskData(context: TaskFormContext, task: Task, settle: Settle): KeptTaskData | undefined {
  return taskForms.kept(task, context, settle);
}

/** True while `kept` is still the task's stored form: same task, still settled, nothing it is built from changed. */
export function taskDataHolds(kept: KeptTaskData | undefined, task: Task, context: TaskFormContext): boolean {
  return taskForms.holds(kept, task, context);
}
