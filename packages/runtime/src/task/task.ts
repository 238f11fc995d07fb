import { randomUUID } from 'node:crypto';
import { CrewlineError } from '@crewline/events';
import { findPlaceholders, type TaskStatus, taskLabel } from '@crewline/runtime-state/internal';
import type { z } from 'zod';
import type { Agent } from '../agent/agent.js';
import type { Conversation } from '../agent-loop/conversation.js';
import { interpolate } from '../templating/interpolate.js';
import type { TaskOutput } from './task-output.js';

export type { TaskStatus };

export interface TaskOptions {
  /** What to do; `{placeholder}`s are filled from the kickoff inputs. */
  description: string;
  /** What a good answer looks like; `{placeholder}`s are filled too. */
  expectedOutput: string;
  /** Who does it. Required in a sequential crew; a hierarchical crew's manager picks one when omitted. */
  agent?: Agent;
  /**
   * Earlier tasks whose outputs are given to this task. Default: the output of the task right before
   * it (none for the first task).
   */
  context?: Task[];
  /** A zod schema: the final answer is parsed as JSON and validated; see `TaskOutput.structured`. Default: none. */
  outputSchema?: z.ZodType;
  /** A short name shown in events, listings and the TUI. Default: none (the description is shown). */
  name?: string;
}

/**
 * One unit of work in a crew. A task also carries its progress (status, output, and the agent's
 * conversation while it runs) so that a checkpoint can resume it exactly where it stopped.
 */
export class Task {
  id: string;
  readonly name: string | undefined;
  /** The description template as written (placeholders unfilled). */
  readonly description: string;
  /** The expected-output template as written. */
  readonly expectedOutput: string;
  agent: Agent | undefined;
  readonly context: Task[] | undefined;
  readonly outputSchema: z.ZodType | undefined;

  status: TaskStatus = 'pending';
  output: TaskOutput | undefined;
  /** The agent's conversation for this task: kept while it runs and after, so a resume continues it. */
  conversation: Conversation | undefined;
  /** Conversations of coworkers this task's manager delegated to, by tool call id (hierarchical crews). */
  delegations: Record<string, Conversation> = {};
  /** Whether `task_started` was emitted (a resumed in-progress task does not emit it again). */
  startedEmitted = false;
  /** The worker's system prompt when the task started (kept so a resumed task sends the same one). */
  systemPrompt: string | undefined;

  constructor(options: TaskOptions) {
    if (typeof options?.description !== 'string' || options.description.trim() === '') {
      throw new CrewlineError('runtime', 'invalid_config', 'Task: `description` must be a non-empty string');
    }
    if (typeof options.expectedOutput !== 'string') {
      throw new CrewlineError(
        'runtime',
        'invalid_config',
        'Task: `expectedOutput` must be a string (what a good answer looks like)',
      );
    }
    this.id = randomUUID();
    this.name = options.name;
    this.description = options.description;
    this.expectedOutput = options.expectedOutput;
    this.agent = options.agent;
    this.context = options.context;
    this.outputSchema = options.outputSchema;
  }

  /** A label for messages: the name, else the start of the description. */
  get label(): string {
    return taskLabel(this.name, this.description);
  }

  /** The description with placeholders filled. */
  renderDescription(inputs: Readonly<Record<string, unknown>>): string {
    return interpolate(this.description, inputs, `task "${this.label}" description`);
  }

  renderExpectedOutput(inputs: Readonly<Record<string, unknown>>): string {
    return interpolate(this.expectedOutput, inputs, `task "${this.label}" expectedOutput`);
  }

  /** Placeholders used by this task's templates. */
  placeholders(): string[] {
    return [...new Set([...findPlaceholders(this.description), ...findPlaceholders(this.expectedOutput)])];
  }

  /** Forgets all progress, so the task runs again. */
  resetProgress(): void {
    this.status = 'pending';
    this.output = undefined;
    this.conversation = undefined;
    this.delegations = {};
    this.startedEmitted = false;
    this.systemPrompt = undefined;
  }
}
