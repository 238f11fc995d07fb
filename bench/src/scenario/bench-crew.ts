import {
  type CheckpointableEntity,
  type EntitySnapshot,
  type EntitySummary,
  type JsonObject,
  redactSecrets,
  type SettledValues,
} from '@crewline/runtime-state';
import { prose } from './prose.js';

interface BenchAgent {
  id: string;
  role: string;
  goal: string;
  backstory: string;
  llm: string;
  tools: string[];
  maxIterations: number;
}

interface BenchMessage {
  role: string;
  content: string;
  toolCallId?: string;
}

interface BenchTask {
  id: string;
  description: string;
  originalDescription: string;
  expectedOutput: string;
  agentRole: string;
  status: 'pending' | 'running' | 'completed';
  startedAt: string | null;
  completedAt: string | null;
  output: { raw: string; summary: string; agent: string; format: 'raw' } | null;
  /** The agent's conversation while the task runs (dropped when it completes). */
  conversation: { messages: BenchMessage[]; iterations: number } | null;
}

/**
 * How snapshots are built:
 * - `'runtime'` (default): as `@crewline/runtime` builds them — agent definitions, tasks not
 *   started yet, completed tasks and finished conversation messages are built once and settled in
 *   the run (`SettledValues`: redacted once, stored once) and the same objects come back in every
 *   later snapshot; only what is in progress is built fresh.
 * - `'fresh'`: every snapshot is a deep copy, the worst case for a provider (nothing can be
 *   recognized as unchanged without comparing it).
 */
export type SnapshotStyle = 'runtime' | 'fresh';

/**
 * A crew-like entity for benchmarks, shaped like what the runtime stores for a crew (agent
 * definitions, tasks with progress, outputs and the running task's conversation, usage, execution
 * context) and growing as tasks complete.
 */
export class BenchCrew implements CheckpointableEntity {
  readonly entityKind = 'crew' as const;
  readonly entityId = 'crew-50-bench';
  readonly entityName = 'Research crew (crew-50)';
  readonly agents: BenchAgent[];
  readonly tasks: BenchTask[];
  readonly usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, requests: 0 };
  readonly context = {
    currentTaskId: null as string | null,
    lastEventId: null as string | null,
    emissionSequence: 0,
  };
  readonly style: SnapshotStyle;
  readonly #storedAgents: JsonObject[];
  /** How this snapshot settles what will not change (the run's, or redaction alone without one). */
  #settle: <T>(value: T) => T = (value) => redactSecrets(value);
  readonly #storedTasks = new Map<BenchTask, JsonObject>();
  readonly #storedMessages = new WeakMap<BenchMessage, JsonObject>();

  constructor(taskCount: number, style: SnapshotStyle = 'runtime') {
    this.style = style;
    const roles = ['Researcher', 'Analyst', 'Writer'];
    this.agents = roles.map((role, index) => ({
      id: `agent-${index + 1}`,
      role,
      goal: `${role} goal: ${prose(100 + index, 120)}`,
      backstory: prose(200 + index, 400),
      llm: 'offline:bench-model',
      tools: ['search', 'calculator'],
      maxIterations: 25,
    }));
    this.#storedAgents = this.agents.map((agent) => copyAgent(agent));
    this.tasks = Array.from({ length: taskCount }, (_, index) => {
      const description = `Task ${index + 1}: ${prose(300 + index, 160)} about {topic}`;
      return {
        id: `task-${String(index + 1).padStart(3, '0')}`,
        description: description.replace('{topic}', 'AI agents'),
        originalDescription: description,
        expectedOutput: `A report section of about 2 KB: ${prose(400 + index, 60)}`,
        agentRole: roles[index % roles.length]!,
        status: 'pending',
        startedAt: null,
        completedAt: null,
        output: null,
        conversation: null,
      };
    });
  }

  agentFor(task: BenchTask): BenchAgent {
    return this.agents.find((agent) => agent.role === task.agentRole)!;
  }

  #message(message: BenchMessage): JsonObject {
    if (this.style === 'fresh') return { ...message } as unknown as JsonObject;
    let stored = this.#storedMessages.get(message);
    if (stored === undefined) {
      stored = { ...message } as unknown as JsonObject;
      this.#storedMessages.set(message, stored);
    }
    return this.#settle(stored);
  }

  #task(task: BenchTask): JsonObject {
    const cached = this.#storedTasks.get(task);
    if (cached !== undefined && cached.status === task.status) return this.#settle(cached);
    const data = {
      ...task,
      output: task.output === null ? null : { ...task.output },
      conversation:
        task.conversation === null
          ? null
          : {
              messages: task.conversation.messages.map((message) => this.#message(message)),
              iterations: task.conversation.iterations,
            },
    } as unknown as JsonObject;
    // Like the runtime, tasks not started yet and completed tasks are settled: built once.
    if (this.style === 'fresh' || task.status === 'running') return data;
    this.#storedTasks.set(task, data);
    return this.#settle(data);
  }

  snapshotEntity(settled?: SettledValues): EntitySnapshot {
    this.#settle = settled === undefined ? (value) => redactSecrets(value) : (value) => settled.settle(value);
    const data = {
      process: 'sequential',
      verbose: false,
      memory: false,
      templates: { topic: '{topic}' },
      agents:
        this.style === 'fresh'
          ? this.agents.map(copyAgent)
          : this.#storedAgents.map((agent) => this.#settle(agent)),
      tasks: this.tasks.map((task) => this.#task(task)),
      usage: { ...this.usage },
      executionContext: { ...this.context },
    };
    return {
      kind: this.entityKind,
      id: this.entityId,
      name: this.entityName,
      registryName: 'bench-crew',
      data: data as unknown as JsonObject,
    };
  }

  summarizeEntity(): EntitySummary {
    const completed = this.tasks.filter((task) => task.status === 'completed').length;
    return {
      kind: this.entityKind,
      id: this.entityId,
      name: this.entityName,
      status:
        completed === this.tasks.length
          ? 'completed'
          : completed > 0 || this.context.currentTaskId
            ? 'running'
            : 'pending',
      completed,
      total: this.tasks.length,
    };
  }
}

function copyAgent(agent: BenchAgent): JsonObject {
  return { ...agent, tools: [...agent.tools] } as unknown as JsonObject;
}

export type { BenchAgent, BenchMessage, BenchTask };
