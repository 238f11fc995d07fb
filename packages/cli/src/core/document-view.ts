import {
  type CheckpointDocument,
  decodeValue,
  type EntityKind,
  type EntitySnapshot,
} from '@crewline/runtime-state';
import {
  type AgentDefinitionData,
  findPlaceholders,
  parseAgentData,
  parseCrewData,
  parseFlowData,
  shownCrewStatus,
  type TaskStatus,
} from '@crewline/runtime-state/internal';
import { filledTemplate } from './filled-template.js';

export type { TaskStatus };

/** One task of a crew as the CLI shows it. */
export interface TaskView {
  /** Position across all crews of the checkpoint, in order, from 0 (what `taskOutputs` is keyed by). */
  index: number;
  /** Position within its crew, from 0. */
  indexInCrew: number;
  /** Its crew's entity id (the `crewId` of its events). */
  crewId: string;
  crewName: string;
  name?: string;
  /**
   * The description as the run used it: its `{placeholders}` filled from the inputs its crew was
   * given (a placeholder nothing gave a value stays as written).
   */
  description: string;
  /** The description as written, with its `{placeholders}`: only where it differs from `description`. */
  descriptionTemplate?: string;
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
  /** Flows paused by `ask()`: the method that waits and the question it asked. */
  pause?: { method: string; message: string; kind: 'feedback' | 'input' };
  /** Standalone agents and in-progress tasks: messages of the saved conversation. */
  messageCount?: number;
  /** Standalone agents: the answer of a finished conversation. */
  answer?: string;
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
  /**
   * The placeholders that nothing gave a value, sorted: not a kickoff input, not in the inputs the
   * crew using it received (a flow's crews get theirs from the flow's methods, stored with the crew),
   * and, for a crew of a flow, not a key of the flow's state. What `info`, the TUI and the explorer
   * list as "without a value".
   */
  missingPlaceholders: string[];
}

type AgentView = EntityView['agents'][number];

function agentView(agent: AgentDefinitionData): AgentView {
  return { role: agent.role, goal: agent.goal, model: agent.llm };
}

function crewView(
  entity: EntitySnapshot,
  firstIndex: number,
  found: Set<string>,
  unfilled: Map<string, Set<string>>,
  inputsOver: Readonly<Record<string, unknown>> | undefined,
): EntityView {
  const data = parseCrewData(entity);
  const given = decodeValue<unknown>(data.inputs);
  const saved = isRecord(given) ? given : {};
  const crewInputs = inputsOver ? { ...saved, ...inputsOver } : saved;
  const agents = data.agents.map(agentView);
  const templates = [...data.agents, ...(data.manager ? [data.manager] : [])].flatMap((agent) => [
    agent.role,
    agent.goal,
    agent.backstory,
  ]);
  const tasks = data.tasks.map((task, indexInCrew): TaskView => {
    templates.push(task.description, task.expectedOutput);
    const agentRole = task.agent === null ? task.output?.agentRole : data.agents[task.agent]?.role;
    const description = filledTemplate(task.description, crewInputs);
    return {
      index: firstIndex + indexInCrew,
      indexInCrew,
      crewId: entity.id,
      crewName: entity.name,
      ...(task.name !== null ? { name: task.name } : {}),
      description,
      ...(description !== task.description ? { descriptionTemplate: task.description } : {}),
      ...(agentRole !== undefined ? { agentRole } : {}),
      status: task.status,
      ...(task.output ? { output: task.output.raw } : {}),
    };
  });
  const names = new Set(templates.flatMap(findPlaceholders));
  for (const name of names) found.add(name);
  unfilled.set(entity.id, new Set([...names].filter((name) => !Object.hasOwn(crewInputs, name))));
  const completed = tasks.filter((task) => task.status === 'completed').length;
  return {
    kind: 'crew',
    id: entity.id,
    name: entity.name,
    status: shownCrewStatus(data.status, completed, tasks.length),
    tasks,
    agents,
    completedMethods: [],
  };
}

function agentEntityView(
  entity: EntitySnapshot,
  found: Set<string>,
  unfilled: Map<string, Set<string>>,
): EntityView {
  const data = parseAgentData(entity);
  // A standalone agent stores no inputs of its own: its placeholders are filled by the kickoff inputs.
  const names = new Set([data.role, data.goal, data.backstory].flatMap(findPlaceholders));
  for (const name of names) found.add(name);
  unfilled.set(entity.id, names);
  return {
    kind: 'agent',
    id: entity.id,
    name: entity.name,
    status: data.status,
    tasks: [],
    agents: [agentView(data)],
    completedMethods: [],
    ...(data.conversation ? { messageCount: data.conversation.messages.length } : {}),
    ...(data.conversation?.output !== undefined ? { answer: data.conversation.output } : {}),
  };
}

function flowView(entity: EntitySnapshot): EntityView {
  const data = parseFlowData(entity);
  const state = decodeValue<unknown>(data.state);
  // The runtime answers the first paused execution (firstPaused), so that is the question shown.
  const paused = data.execution.pending.find((activation) => activation.pause !== null);
  return {
    kind: 'flow',
    id: entity.id,
    name: entity.name,
    status: data.execution.status,
    tasks: [],
    agents: [],
    completedMethods: data.execution.completedMethods,
    ...(isRecord(state) ? { state } : {}),
    ...(paused?.pause ? { pause: { method: paused.method, ...paused.pause } } : {}),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export interface ViewOptions {
  /**
   * Inputs a continuation gives the crews over the ones they saved (as a crew's kickoff merges
   * them): the task descriptions are filled with them. Default: none, as the checkpoint's run had them.
   */
  crewInputs?: Readonly<Record<string, unknown>>;
}

/**
 * A task as `--json` prints it: `description` as written, with its `{placeholders}` (its meaning in
 * schema version 1), and `descriptionAsRun` as the run used it (what every view shows).
 */
export function taskJson({ description, descriptionTemplate, ...task }: TaskView): Record<string, unknown> {
  const { index, indexInCrew, crewName, name, ...rest } = task;
  return {
    index,
    indexInCrew,
    crewName,
    ...(name !== undefined ? { name } : {}),
    description: descriptionTemplate ?? description,
    descriptionAsRun: description,
    ...rest,
  };
}

/**
 * Builds the view of a checkpoint: decoded inputs, entities, flat tasks and template placeholders.
 * Entity data is read through its owner's parser: a damaged field is a `corrupt_checkpoint` error.
 */
export function viewDocument(document: CheckpointDocument, options: ViewOptions = {}): DocumentView {
  const inputs = decodeValue<unknown>(document.inputs);
  const found = new Set<string>();
  // Per entity id: its placeholders that its own stored inputs leave without a value.
  const unfilled = new Map<string, Set<string>>();
  const entities: EntityView[] = [];
  let nextIndex = 0;
  for (const entity of document.entities) {
    const view =
      entity.kind === 'crew'
        ? crewView(entity, nextIndex, found, unfilled, options.crewInputs)
        : entity.kind === 'agent'
          ? agentEntityView(entity, found, unfilled)
          : flowView(entity);
    nextIndex += view.tasks.length;
    entities.push(view);
  }
  const kickoffInputs = isRecord(inputs) ? inputs : {};
  // A flow's crew not started yet gets its inputs from the flow's methods, usually out of its state.
  const flowState = entities.find((entity) => entity.kind === 'flow')?.state ?? {};
  const missing = new Set<string>();
  for (const names of unfilled.values())
    for (const name of names)
      if (!Object.hasOwn(kickoffInputs, name) && !Object.hasOwn(flowState, name)) missing.add(name);
  return {
    document,
    inputs: kickoffInputs,
    entities,
    tasks: entities.flatMap((entity) => entity.tasks),
    placeholders: [...found].sort(),
    missingPlaceholders: [...missing].sort(),
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
  return [...Object.keys(view.inputs), ...view.missingPlaceholders];
}
