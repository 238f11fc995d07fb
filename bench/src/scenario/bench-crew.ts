import type {
  CheckpointableEntity,
  EntitySnapshot,
  EntitySummary,
  JsonObject,
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
  /** The conversation of the task in progress (cleared when the task completes). */
  messages: { role: string; content: string; toolCallId?: string }[];
  iterations: number;
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
}

/**
 * A crew-like entity for benchmarks, shaped like what the runtime stores for a crew (agents with
 * their in-progress conversation, tasks with progress and outputs, usage, execution context) and
 * growing as tasks complete. Its snapshot is a fresh object every time, as a real snapshot is.
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

  constructor(taskCount: number) {
    const roles = ['Researcher', 'Analyst', 'Writer'];
    this.agents = roles.map((role, index) => ({
      id: `agent-${index + 1}`,
      role,
      goal: `${role} goal: ${prose(100 + index, 120)}`,
      backstory: prose(200 + index, 400),
      llm: 'offline:bench-model',
      tools: ['search', 'calculator'],
      maxIterations: 25,
      messages: [],
      iterations: 0,
    }));
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
      };
    });
  }

  agentFor(task: BenchTask): BenchAgent {
    return this.agents.find((agent) => agent.role === task.agentRole)!;
  }

  snapshotEntity(): EntitySnapshot {
    const data = {
      process: 'sequential',
      verbose: false,
      memory: false,
      templates: { topic: '{topic}' },
      agents: this.agents.map((agent) => ({
        ...agent,
        tools: [...agent.tools],
        messages: agent.messages.map((message) => ({ ...message })),
      })),
      tasks: this.tasks.map((task) => ({
        ...task,
        output: task.output === null ? null : { ...task.output },
      })),
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

export type { BenchAgent, BenchTask };
