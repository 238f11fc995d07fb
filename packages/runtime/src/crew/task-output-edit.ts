import { CrewlineError, logger } from '@crewline/events';
import { type CheckpointDocument, type EncodedValue, encodeValue } from '@crewline/runtime-state';
import {
  type CrewData,
  editTaskOutputsInDocument as editStoredTaskOutputs,
  editTaskOutputs,
  type TaskData,
} from '@crewline/runtime-state/internal';
import { z } from 'zod';
import { parseStructuredOutput } from '../agent-loop/structured-output.js';
import { runValueCodec } from '../checkpointing/run-value-codec.js';
import { ShortTermMemory } from '../memory/short-term-memory.js';
import type { Task } from '../task/task.js';
import type { CrewParts } from './crew-parts.js';
import { applyTaskData, crewData } from './crew-snapshot.js';

const component = 'runtime';

/** The structured value of an edited output, encoded; an error when the text does not fit `schema`. */
function structuredOf(raw: string, schema: z.ZodType | undefined, label: string): EncodedValue | undefined {
  if (!schema) return undefined;
  const parsed = parseStructuredOutput(raw, schema);
  if (!parsed.success) {
    throw new CrewlineError(
      component,
      'invalid_argument',
      `the new output of task "${label}" must match its outputSchema: ${parsed.reason}; pass JSON that the schema accepts`,
    );
  }
  return encodeValue(parsed.value);
}

/** An output schema as a checkpoint stores it (JSON schema), rebuilt to check an edit against. */
function storedSchema(task: TaskData, label: string): z.ZodType | undefined {
  if (task.outputSchema === null) return undefined;
  try {
    return z.fromJSONSchema(task.outputSchema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (error) {
    logger.warn(
      component,
      `the output schema of task "${label}" in the checkpoint could not be rebuilt; the edited output is not validated`,
      error,
    );
    return undefined;
  }
}

/**
 * Sets a task's output by hand and invalidates every later task (status, output, conversation), so
 * that a resume or fork runs them again against the edited context. The edit is the one a
 * checkpoint gets from `--set-output` and the TUI, made on the crew's data and put back onto it.
 */
export function setTaskOutputOnCrew(crew: CrewParts, which: number | Task, raw: string): void {
  const index = typeof which === 'number' ? which : crew.tasks.indexOf(which);
  const task = crew.tasks[index];
  if (!Number.isInteger(index) || !task) {
    throw new CrewlineError(
      component,
      'invalid_argument',
      `crew "${crew.name}" has no task ${typeof which === 'number' ? which : `"${which.label}"`}; pass an index from 0 to ${crew.tasks.length - 1} or one of its Task objects`,
    );
  }
  const before = { ...crewData(crew), version: 1 } as CrewData;
  const [after] = editTaskOutputs(
    [{ id: crew.id, data: before }],
    { [index]: raw },
    {
      // The live schema, not its JSON form: refinements and transforms apply as when the task ran.
      structuredOutput: (text, _stored, label) => structuredOf(text, crew.tasks[index]!.outputSchema, label),
    },
  );
  applyEdit(crew, before, after!);
}

/** Puts what an edit changed back onto the crew: the tasks it touched, status and memories. */
function applyEdit(crew: CrewParts, before: CrewData, after: CrewData): void {
  after.tasks.forEach((stored, index) => {
    if (stored !== before.tasks[index])
      applyTaskData(crew.tasks[index]!, stored, runValueCodec(crew.valueRegistry));
  });
  crew.status = after.status;
  // Restored quietly: an edit happens outside any run, so its memory events belong to none.
  const quiet = { emit: () => undefined };
  if (after.memoryState !== before.memoryState && after.memoryState !== null)
    crew.memory = ShortTermMemory.fromJSON(after.memoryState, quiet);
  const agents = [...crew.agents, ...(crew.manager ? [crew.manager] : [])];
  const storedAgents = [...after.agents, ...(after.manager ? [after.manager] : [])];
  const storedBefore = [...before.agents, ...(before.manager ? [before.manager] : [])];
  agents.forEach((agent, position) => {
    const memory = storedAgents[position]?.memory;
    if (memory && memory !== storedBefore[position]?.memory)
      agent.memory = ShortTermMemory.fromJSON(memory, quiet);
  });
}

/**
 * Applies edited outputs to the crews inside a checkpoint document (what `--set-output` and the TUI
 * do before continuing). `outputs` maps a flat task index — counting the tasks of every crew in the
 * checkpoint, in order — to the new raw output; every later task, in this crew and in later crews, is
 * invalidated. Returns an edited copy; the input is not changed.
 */
export function editTaskOutputsInDocument(
  document: CheckpointDocument,
  outputs: Readonly<Record<number, string>>,
): CheckpointDocument {
  return editStoredTaskOutputs(document, outputs, {
    structuredOutput: (raw, task, label) => structuredOf(raw, storedSchema(task, label), label),
  });
}
