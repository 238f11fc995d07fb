import {
  type CheckpointDocument,
  decodeValue,
  type EncodedValue,
  type EntityKind,
  type EntitySnapshot,
  type JsonValue,
} from '@crewline/runtime-state';

export type TaskStatus = 'completed' | 'running' | 'pending' | 'failed';

/** One task of a crew as the CLI shows it. */
export interface TaskView {
  /** Position across all crews of the checkpoint, in order, from 0 (what `taskOutputs` is keyed by). */
  index: number;
  /** Position within its crew, from 0. */
  indexInCrew: number;
  crewName: string;
  name?: string;
  description: string;
  agentRole?: string;
  status: TaskStatus;
  /** The raw output of a completed task. */
  output?: string;
}

export interface EntityView {
  kind: EntityKind;
  id: string;
  name: string;
  status?: string;
  tasks: TaskView[];
  agents: { role: string; goal?: string; model?: string }[];
  /** Flows: methods completed, in order. */
  completedMethods: string[];
  /** Flows: the state object. */
  state?: Record<string, unknown>;
  /** Standalone agents and in-progress tasks: messages of the saved conversation. */
  messageCount?: number;
}

/** A checkpoint document turned into what the CLI and TUI display and edit. */
export interface DocumentView {
  document: CheckpointDocument;
  inputs: Record<string, unknown>;
  entities: EntityView[];
  /** Every crew task across the checkpoint, flat, in order. */
  tasks: TaskView[];
  /** `{name}` placeholders found in the entities' templates (task descriptions, agent goals…), sorted. */
  placeholders: string[];
}

type JsonRecord = Record<string, JsonValue>;

function isRecord(value: unknown): value is JsonRecord {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function stringField(record: JsonRecord, ...keys: string[]): string | undefined {
  for (const key of keys) {
    const value = record[key];
    if (typeof value === 'string') return value;
  }
  return undefined;
}

function isEncodedValue(value: unknown): value is EncodedValue {
  if (!isRecord(value) || !('json' in value)) return false;
  return Object.keys(value).every((key) => key === 'json' || key === 'meta');
}

/** Decodes an `EncodedValue` and leaves anything else as it is (the runtime may store either). */
function decodeMaybe(value: unknown): unknown {
  if (isEncodedValue(value)) {
    try {
      return decodeValue(value);
    } catch {
      return value.json;
    }
  }
  return value;
}

/** The text of a task output however the runtime stored it: a string, `{ raw }`, or an encoded value. */
export function outputText(value: unknown): string | undefined {
  const decoded = decodeMaybe(value);
  if (decoded === undefined || decoded === null) return undefined;
  if (typeof decoded === 'string') return decoded;
  if (isRecord(decoded) && typeof decoded.raw === 'string') return decoded.raw;
  return JSON.stringify(decoded);
}

function taskStatus(task: JsonRecord, output: string | undefined): TaskStatus {
  const status = task.status;
  if (status === 'completed' || status === 'done') return 'completed';
  if (status === 'running' || status === 'in_progress' || status === 'started') return 'running';
  if (status === 'failed') return 'failed';
  if (status === 'pending') return 'pending';
  return output !== undefined ? 'completed' : 'pending';
}

function agentRoleOf(task: JsonRecord, agents: EntityView['agents']): string | undefined {
  // The runtime stores the agent as its index in the crew's agents; the output names its role too.
  if (typeof task.agent === 'number') return agents[task.agent]?.role;
  if (typeof task.agentIndex === 'number') return agents[task.agentIndex]?.role;
  const direct = stringField(task, 'agentRole', 'agent');
  if (direct !== undefined) return direct;
  if (isRecord(task.agent)) return stringField(task.agent, 'role');
  if (isRecord(task.output)) return stringField(task.output, 'agentRole');
  return undefined;
}

function viewEntity(entity: EntitySnapshot, firstIndex: number): EntityView {
  const data = entity.data as JsonRecord;
  const agents: EntityView['agents'] = [];
  const agentList = Array.isArray(data.agents) ? data.agents : [];
  for (const agent of agentList) {
    if (!isRecord(agent)) continue;
    const model = stringField(agent, 'model', 'llm', 'modelId');
    agents.push({ role: stringField(agent, 'role') ?? '(agent)', goal: stringField(agent, 'goal'), model });
  }
  if (entity.kind === 'agent' && agents.length === 0) {
    const role = stringField(data, 'role');
    if (role !== undefined)
      agents.push({ role, goal: stringField(data, 'goal'), model: stringField(data, 'model', 'llm') });
  }
  const tasks: TaskView[] = [];
  const taskList = Array.isArray(data.tasks) ? data.tasks : [];
  taskList.forEach((task, indexInCrew) => {
    if (!isRecord(task)) return;
    const output = outputText(task.output);
    tasks.push({
      index: firstIndex + tasks.length,
      indexInCrew,
      crewName: entity.name,
      name: stringField(task, 'name'),
      description: stringField(task, 'description', 'descriptionTemplate') ?? '(no description)',
      agentRole: agentRoleOf(task, agents),
      status: taskStatus(task, output),
      output,
    });
  });
  // Flows keep their progress under `execution` (completed methods, status, last method).
  const execution = isRecord(data.execution) ? data.execution : undefined;
  const methods = Array.isArray(data.completedMethods)
    ? data.completedMethods
    : Array.isArray(execution?.completedMethods)
      ? execution.completedMethods
      : [];
  const completedMethods = methods.filter((method): method is string => typeof method === 'string');
  const state = decodeMaybe(data.state);
  const conversation = isRecord(data.conversation) ? data.conversation : undefined;
  const savedStatus =
    stringField(data, 'status') ?? (execution ? stringField(execution, 'status') : undefined);
  // A crew's last checkpoint is taken at its last task_completed, while the crew is still "running":
  // with every task done, what it holds is a finished crew.
  const finished = tasks.length > 0 && tasks.every((task) => task.status === 'completed');
  return {
    kind: entity.kind,
    id: entity.id,
    name: entity.name,
    status: savedStatus === 'running' && finished ? 'completed' : savedStatus,
    tasks,
    agents,
    completedMethods,
    state: isRecord(state) ? (state as Record<string, unknown>) : undefined,
    messageCount:
      conversation && Array.isArray(conversation.messages) ? conversation.messages.length : undefined,
  };
}

// Fields that hold values rather than templates: conversations (interpolated text and model
// output), outputs, flow state and execution. Braces in them are data, not placeholders.
const valueKeys = new Set([
  'conversation',
  'messages',
  'output',
  'delegations',
  'state',
  'execution',
  'memory',
]);

const placeholderPattern = /\{([A-Za-z_][A-Za-z0-9_-]*)\}/g;

function collectPlaceholders(value: unknown, found: Set<string>, depth = 0): void {
  if (depth > 12) return;
  if (typeof value === 'string') {
    for (const match of value.matchAll(placeholderPattern)) found.add(match[1]!);
  } else if (Array.isArray(value)) {
    for (const item of value) collectPlaceholders(item, found, depth + 1);
  } else if (isRecord(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (!valueKeys.has(key)) collectPlaceholders(item, found, depth + 1);
    }
  }
}

/** Builds the view of a checkpoint: decoded inputs, entities, flat tasks and template placeholders. */
export function viewDocument(document: CheckpointDocument): DocumentView {
  let inputs: Record<string, unknown>;
  try {
    const decoded = decodeValue<unknown>(document.inputs);
    inputs = isRecord(decoded) ? (decoded as Record<string, unknown>) : {};
  } catch {
    inputs = isRecord(document.inputs.json) ? (document.inputs.json as Record<string, unknown>) : {};
  }
  const entities: EntityView[] = [];
  let nextIndex = 0;
  for (const entity of document.entities) {
    const view = viewEntity(entity, nextIndex);
    nextIndex += view.tasks.length;
    entities.push(view);
  }
  const found = new Set<string>();
  for (const entity of document.entities) collectPlaceholders(entity.data, found);
  return {
    document,
    inputs,
    entities,
    tasks: entities.flatMap((entity) => entity.tasks),
    placeholders: [...found].sort(),
  };
}

/** The entity a checkpoint is about: its flow if it has one, else its first crew, else its first entity. */
export function primaryEntity<T extends { kind: EntityKind }>(entities: readonly T[]): T | undefined {
  return (
    entities.find((entity) => entity.kind === 'flow') ??
    entities.find((entity) => entity.kind === 'crew') ??
    entities[0]
  );
}

/** Names shown in an Inputs list: the kickoff inputs, then template placeholders that have no value. */
export function inputNames(view: DocumentView): string[] {
  const keys = Object.keys(view.inputs);
  return [...keys, ...view.placeholders.filter((name) => !keys.includes(name))];
}
