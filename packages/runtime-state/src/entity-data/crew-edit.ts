import type { CheckpointDocument } from '../document.js';
import { stateError } from '../errors.js';
import type { EncodedValue } from '../value-codec.js';
import type { AgentDefinitionData } from './agent-data.js';
import { type CrewData, parseCrewData, type TaskData, taskLabel, toCrewData } from './crew-data.js';
import { parseFlowData } from './flow-data.js';
import {
  forgetTaskItems,
  rememberText,
  type ShortTermMemoryData,
  type TaskMemoryMetadata,
} from './memory-data.js';

/** A crew's id with its data: what an edit works on. */
export interface CrewEntry {
  id: string;
  data: CrewData;
}

export interface TaskOutputEditOptions {
  /**
   * Checks the new text of a task against its output schema and returns the structured value to
   * store (encoded), or `undefined` for a task without one; throws when the text does not fit. The
   * runtime owns output schemas, so it supplies this.
   */
  structuredOutput: (raw: string, task: TaskData, label: string) => EncodedValue | undefined;
  /** When memory items of the edit are created. Default: now. */
  now?: string;
}

const emptyUsage = () => ({ inputTokens: 0, outputTokens: 0, totalTokens: 0, cachedInputTokens: 0 });

/** The agent that works on a task: its agent, or the manager in a hierarchical crew. */
function workerOf(data: CrewData, task: TaskData): AgentDefinitionData | undefined {
  if (data.process === 'hierarchical') return data.manager ?? undefined;
  return task.agent === null ? undefined : data.agents[task.agent];
}

function editedTask(data: CrewData, task: TaskData, raw: string, options: TaskOutputEditOptions): TaskData {
  if (typeof raw !== 'string') {
    throw stateError(
      'invalid_argument',
      `the new output of task "${taskLabel(task.name, task.description)}" must be a string`,
    );
  }
  const structured = options.structuredOutput(raw, task, taskLabel(task.name, task.description));
  const previous = task.output;
  return {
    ...task,
    status: 'completed',
    startedEmitted: true,
    output: {
      raw,
      description: previous?.description ?? task.description,
      expectedOutput: previous?.expectedOutput ?? task.expectedOutput,
      agentRole: previous?.agentRole ?? workerOf(data, task)?.role ?? '',
      usage: previous?.usage ?? emptyUsage(),
      edited: true,
      ...(structured !== undefined ? { structured } : {}),
    },
    systemPrompt: null,
    conversation: null,
    delegations: {},
  };
}

/** A task that runs again: no progress, no output. */
export function invalidatedTask(task: TaskData): TaskData {
  return {
    ...task,
    status: 'pending',
    startedEmitted: false,
    output: null,
    systemPrompt: null,
    conversation: null,
    delegations: {},
  };
}

/**
 * Edits one crew: `edits` maps a task index to its new raw output; every task from `invalidateFrom`
 * on that is not edited runs again. Memory items of the crew's tasks from the first touched one on
 * are forgotten, and each edited output is remembered in the crew's memory and its worker's, as the
 * run would have (same text and metadata, so a later save of the same result is a no-op).
 */
function editCrew(
  crew: CrewEntry,
  edits: ReadonlyMap<number, string>,
  invalidateFrom: number,
  options: TaskOutputEditOptions,
): CrewData {
  const data = crew.data;
  const tasks = data.tasks.map((task, index) => {
    const raw = edits.get(index);
    if (raw !== undefined) return editedTask(data, task, raw, options);
    return index >= invalidateFrom ? invalidatedTask(task) : task;
  });
  const firstTouched = Math.min(invalidateFrom, ...edits.keys());
  if (firstTouched >= tasks.length) return data;
  const now = options.now ?? new Date().toISOString();
  const remembered = (memory: ShortTermMemoryData, worker: AgentDefinitionData | undefined) => {
    let result = forgetTaskItems(memory, crew.id, firstTouched);
    for (const [index, raw] of [...edits].sort(([a], [b]) => a - b)) {
      const task = tasks[index]!;
      const taskWorker = workerOf(data, task);
      if (worker !== undefined && taskWorker !== worker) continue;
      const metadata: TaskMemoryMetadata = {
        task: taskLabel(task.name, task.description),
        agent: taskWorker?.role ?? task.output?.agentRole ?? '',
        crewId: crew.id,
        taskIndex: index,
      };
      result = rememberText(result, raw, metadata, now);
    }
    return result;
  };
  const agentMemory = <Agent extends AgentDefinitionData>(agent: Agent): Agent =>
    agent.memory === null ? agent : { ...agent, memory: remembered(agent.memory, agent) };
  return {
    ...data,
    status: data.status === 'completed' || data.status === 'failed' ? 'running' : data.status,
    tasks,
    memoryState: data.memoryState === null ? null : remembered(data.memoryState, undefined),
    agents: data.agents.map(agentMemory),
    manager: data.manager === null ? null : agentMemory(data.manager),
  };
}

/**
 * Sets task outputs by hand and invalidates every later task, so that a resume or fork runs them
 * again against the edited context: the one edit behind `crew.setTaskOutput`, `--set-output` and
 * the TUI. `outputs` maps a flat task index — counting the tasks of every crew given, in order — to
 * the new raw output; later tasks of later crews are invalidated too. Returns the crews' new data
 * (unchanged crews as they were); nothing given is changed.
 */
export function editTaskOutputs(
  crews: readonly CrewEntry[],
  outputs: Readonly<Record<number, string>>,
  options: TaskOutputEditOptions,
): CrewData[] {
  return editCrews(crews, outputs, options, (index) =>
    crews.slice(index + 1).map((_, later) => index + 1 + later),
  );
}

/**
 * {@link editTaskOutputs}, where an edit in crew `index` invalidates all the tasks of the crews
 * `laterCrews(index)` gives (besides the later tasks of its own crew).
 */
function editCrews(
  crews: readonly CrewEntry[],
  outputs: Readonly<Record<number, string>>,
  options: TaskOutputEditOptions,
  laterCrews: (index: number) => readonly number[],
): CrewData[] {
  const indices = Object.keys(outputs)
    .map(Number)
    .sort((a, b) => a - b);
  if (indices.length === 0) return crews.map((crew) => crew.data);
  const total = crews.reduce((count, crew) => count + crew.data.tasks.length, 0);
  for (const index of indices) {
    if (!Number.isInteger(index) || index < 0 || index >= total) {
      throw stateError(
        'invalid_argument',
        `task index ${index} is out of range: the checkpoint holds ${total} task(s) across its crews (0 to ${total - 1})`,
      );
    }
  }
  const starts: number[] = [];
  let flat = 0;
  for (const crew of crews) {
    starts.push(flat);
    flat += crew.data.tasks.length;
  }
  const edits = crews.map(() => new Map<number, string>());
  // Per crew, its first task that runs again (its length: none).
  const invalidateFrom = crews.map((crew) => crew.data.tasks.length);
  for (const index of indices) {
    const crew = starts.findLastIndex((start) => start <= index);
    const task = index - starts[crew]!;
    edits[crew]!.set(task, outputs[index]!);
    invalidateFrom[crew] = Math.min(invalidateFrom[crew]!, task + 1);
    for (const later of laterCrews(crew)) invalidateFrom[later] = 0;
  }
  return crews.map((crew, index) => {
    if (edits[index]!.size === 0 && invalidateFrom[index]! >= crew.data.tasks.length) return crew.data;
    return editCrew(crew, edits[index]!, invalidateFrom[index]!, options);
  });
}

/**
 * For each crew of a checkpoint (`crews`, in document order), the crews an edit of one of its tasks
 * makes run again in full: those that ran after it on the same work, so on its output. In a flow,
 * the crews a running execution started after it (a method's later crews); never those of another
 * execution — a parallel method's crew — whose completed tasks an edit leaves alone. A crew no
 * running execution lists (a checkpoint written before executions saved what they started, or a
 * crew's own checkpoint, where later crews ran inside its tasks) reaches every later crew.
 */
function laterCrewsOfDocument(
  document: CheckpointDocument,
  crews: readonly { id: string }[],
): (index: number) => readonly number[] {
  const everyLater = (index: number) => crews.slice(index + 1).map((_, later) => index + 1 + later);
  const position = new Map(crews.map((crew, index) => [crew.id, index]));
  const lines = new Map<number, number[]>();
  for (const entity of document.entities) {
    if (entity.kind !== 'flow') continue;
    for (const execution of parseFlowData(entity).execution.pending) {
      const line = (execution.started ?? [])
        .map((started) => (started.id === undefined ? undefined : position.get(started.id)))
        .filter((index) => index !== undefined);
      line.forEach((crew, at) => {
        if (!lines.has(crew)) lines.set(crew, line.slice(at + 1));
      });
    }
  }
  return (index) => lines.get(index) ?? everyLater(index);
}

/**
 * {@link editTaskOutputs} on the crews of a checkpoint document (a flow's crews included): later
 * tasks of the edited task's crew run again, and the crews that ran after it on the same work (see
 * `laterCrewsOfDocument`), never a completed task of a crew a parallel method of a flow ran. Returns
 * an edited copy; the document given is not changed.
 */
export function editTaskOutputsInDocument(
  document: CheckpointDocument,
  outputs: Readonly<Record<number, string>>,
  options: TaskOutputEditOptions,
): CheckpointDocument {
  if (Object.keys(outputs).length === 0) return document;
  const crews = document.entities.filter((entity) => entity.kind === 'crew');
  const entries = crews.map((entity) => ({ id: entity.id, data: parseCrewData(entity) }));
  const edited = editCrews(entries, outputs, options, laterCrewsOfDocument(document, crews));
  // A crew the edit leaves alone is kept as stored.
  const byEntity = new Map(
    crews.flatMap((entity, index) =>
      edited[index] === entries[index]!.data ? [] : ([[entity, edited[index]!]] as const),
    ),
  );
  return {
    ...document,
    entities: document.entities.map((entity) => {
      const data = byEntity.get(entity);
      return data === undefined ? entity : { ...entity, data: toCrewData(data) };
    }),
  };
}
