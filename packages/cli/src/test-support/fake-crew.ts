import { TaskCompletedEvent, TaskStartedEvent } from '@crewline/events';
import {
  type CheckpointableEntity,
  type CheckpointProvider,
  type EntitySnapshot,
  type EntitySummary,
  type JsonObject,
  RuntimeState,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import {
  type CrewStatus,
  parseCrewData,
  type TaskStatus,
  toCrewData,
} from '@crewline/runtime-state/internal';

export interface FakeTask {
  description: string;
  expectedOutput: string;
  agentRole: 'Researcher' | 'Writer';
  status: TaskStatus;
  output?: string;
}

const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, cachedInputTokens: 0 };

function fakeAgent(role: string, goal: string) {
  return {
    id: `agent-${role.toLowerCase()}`,
    role,
    goal,
    backstory: 'Expert',
    llm: 'offline:test',
    tools: [],
    maxIterations: 10,
    checkpoint: null,
    knowledge: null,
    memory: null,
  };
}

/**
 * A crew's data as the runtime's writer stores it (through `toCrewData`), for fixtures that need a
 * crew without running one: two agents (Researcher, Writer) and the tasks given.
 */
export function fakeCrewData(
  name: string,
  tasks: readonly FakeTask[],
  status: CrewStatus = tasks.every((task) => task.status === 'completed') ? 'completed' : 'running',
): JsonObject {
  return toCrewData({
    name,
    process: 'sequential',
    memory: false,
    cachePreload: false,
    cachePreloadStrategy: 'parallel',
    checkpoint: null,
    status,
    kickoffStarted: true,
    inputs: { json: {} },
    agents: [fakeAgent('Researcher', 'Research {topic}'), fakeAgent('Writer', 'Write')],
    manager: null,
    tasks: tasks.map((task, index) => ({
      id: `task-${index}`,
      name: null,
      description: task.description,
      expectedOutput: task.expectedOutput,
      agent: task.agentRole === 'Researcher' ? 0 : 1,
      context: null,
      outputSchema: null,
      status: task.status,
      startedEmitted: task.status !== 'pending',
      output:
        task.output === undefined
          ? null
          : {
              raw: task.output,
              description: task.description,
              expectedOutput: task.expectedOutput,
              agentRole: task.agentRole,
              usage,
              edited: false,
            },
      systemPrompt: null,
      conversation: null,
      delegations: {},
    })),
    memoryState: null,
    knowledge: null,
    probeUsage: usage,
  });
}

/**
 * A crew entity for fixtures: it snapshots through the runtime's crew data writer (agents, tasks
 * with status and output) without running any model.
 */
export class FakeCrew implements CheckpointableEntity {
  readonly entityKind = 'crew' as const;
  readonly entityId: string;
  readonly entityName: string;
  readonly tasks: FakeTask[];

  constructor(name: string, taskCount: number, id = `crew-${name.toLowerCase().replace(/\W+/g, '-')}`) {
    this.entityId = id;
    this.entityName = name;
    this.tasks = Array.from({ length: taskCount }, (_, index) => ({
      description: index === 0 ? 'Research {topic} for {audience}' : `Step ${index + 1} about {topic}`,
      expectedOutput: 'A short answer',
      agentRole: index % 2 === 0 ? 'Researcher' : 'Writer',
      status: 'pending' as const,
    }));
  }

  snapshotEntity(): EntitySnapshot {
    return {
      kind: 'crew',
      id: this.entityId,
      name: this.entityName,
      data: fakeCrewData(this.entityName, this.tasks),
    };
  }

  summarizeEntity(): EntitySummary {
    return {
      kind: 'crew',
      id: this.entityId,
      name: this.entityName,
      status: this.tasks.every((task) => task.status === 'completed') ? 'completed' : 'running',
      completed: this.tasks.filter((task) => task.status === 'completed').length,
      total: this.tasks.length,
    };
  }
}

export interface FakeRunOptions {
  provider: CheckpointProvider;
  location: string;
  crewName?: string;
  taskCount?: number;
  /** Tasks to complete (default all). */
  complete?: number;
  inputs?: Record<string, unknown>;
  /** Write a checkpoint at task_started as well as task_completed. Default true. */
  onStart?: boolean;
}

/** Simulates a crew run writing checkpoints on task events; returns what was stored, oldest first. */
export async function writeFakeRun(options: FakeRunOptions): Promise<StoredCheckpoint[]> {
  const crew = new FakeCrew(options.crewName ?? 'Research', options.taskCount ?? 3);
  const state = new RuntimeState({
    entities: [crew],
    inputs: options.inputs ?? { topic: 'AI', audience: 'engineers' },
    provider: options.provider,
    location: options.location,
  });
  const stored: StoredCheckpoint[] = [];
  const complete = options.complete ?? crew.tasks.length;
  for (let index = 0; index < complete; index += 1) {
    const task = crew.tasks[index]!;
    task.status = 'running';
    state.recordEvent(new TaskStartedEvent({ description: task.description }));
    if (options.onStart !== false) stored.push(await state.writeCheckpoint({ trigger: 'task_started' }));
    task.status = 'completed';
    task.output = `Output ${index + 1}: findings about AI.\nSecond line of task ${index + 1}.`;
    state.recordEvent(new TaskCompletedEvent({ description: task.description, output: task.output }));
    stored.push(await state.writeCheckpoint({ trigger: 'task_completed' }));
  }
  await state.settle();
  return stored;
}

/** Writes a fork of `from` (a document read back) on `branch`, completing its next task differently. */
export async function writeFakeFork(
  provider: CheckpointProvider,
  location: string,
  from: StoredCheckpoint,
  branch: string,
): Promise<StoredCheckpoint> {
  const raw = await provider.read(location, from.id);
  const { validateDocument, parseDocumentText } = await import('@crewline/runtime-state');
  const document = validateDocument('text' in raw ? parseDocumentText(raw.text) : raw.document);
  const entity = document.entities[0]!;
  const crew = new FakeCrew(entity.name, 0, entity.id);
  const data = parseCrewData(entity);
  for (const task of data.tasks) {
    crew.tasks.push({
      description: task.description,
      expectedOutput: task.expectedOutput,
      agentRole: task.agent === 0 ? 'Researcher' : 'Writer',
      status: task.status,
      ...(task.output ? { output: task.output.raw } : {}),
    });
  }
  const state = RuntimeState.fromDocument(document, { entities: [crew], provider, location });
  state.fork(branch);
  const next = crew.tasks.find((task) => task.status !== 'completed');
  if (next) {
    next.status = 'completed';
    next.output = `Forked output on ${branch}`;
  }
  return state.writeCheckpoint({ trigger: 'task_completed' });
}
