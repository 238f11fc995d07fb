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

/** Reads a task's revision: for the runtime's snapshot caches, not part of the public surface. */
let revisionOf: (task: Task) => number;

/**
 * One unit of work in a crew. A task also carries its progress (status, output, and the agent's
 * conversation while it runs) so that a checkpoint can resume it exactly where it stopped.
 *
 * Why every field is an accessor: a checkpoint stores each task of every crew of a run, and a flow
 * of crews checkpoints hundreds of finished tasks on every event. Each assignment to a field moves
 * the task's revision, so a snapshot tells an unchanged task by one number instead of reading again
 * everything its stored form is built from (a cost per checkpoint that grew with every task the run
 * had finished). The fields given at construction cannot be reassigned, and `context` is a frozen
 * copy: nothing a stored form reads can change without the revision moving.
 */
export class Task {
  static {
    revisionOf = (task) => task.#revision;
  }

  #revision = 0;
  #id: string;
  readonly #name: string | undefined;
  readonly #description: string;
  readonly #expectedOutput: string;
  #agent: Agent | undefined;
  readonly #context: readonly Task[] | undefined;
  readonly #outputSchema: z.ZodType | undefined;
  #status: TaskStatus = 'pending';
  #output: TaskOutput | undefined;
  #conversation: Conversation | undefined;
  #delegations: Record<string, Conversation> = {};
  #startedEmitted = false;
  #systemPrompt: string | undefined;

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
    this.#id = randomUUID();
    this.#name = options.name;
    this.#description = options.description;
    this.#expectedOutput = options.expectedOutput;
    this.#agent = options.agent;
    this.#context = options.context ? Object.freeze([...options.context]) : undefined;
    this.#outputSchema = options.outputSchema;
  }

  get id(): string {
    return this.#id;
  }
  set id(id: string) {
    this.#id = id;
    this.#revision += 1;
  }

  get name(): string | undefined {
    return this.#name;
  }

  /** The description template as written (placeholders unfilled). */
  get description(): string {
    return this.#description;
  }

  /** The expected-output template as written. */
  get expectedOutput(): string {
    return this.#expectedOutput;
  }

  get agent(): Agent | undefined {
    return this.#agent;
  }
  set agent(agent: Agent | undefined) {
    this.#agent = agent;
    this.#revision += 1;
  }

  /** The earlier tasks given to this one (a frozen copy of the list given to the constructor). */
  get context(): readonly Task[] | undefined {
    return this.#context;
  }

  get outputSchema(): z.ZodType | undefined {
    return this.#outputSchema;
  }

  get status(): TaskStatus {
    return this.#status;
  }
  set status(status: TaskStatus) {
    this.#status = status;
    this.#revision += 1;
  }

  get output(): TaskOutput | undefined {
    return this.#output;
  }
  set output(output: TaskOutput | undefined) {
    this.#output = output;
    this.#revision += 1;
  }

  /** The agent's conversation for this task: kept while it runs and after, so a resume continues it. */
  get conversation(): Conversation | undefined {
    return this.#conversation;
  }
  set conversation(conversation: Conversation | undefined) {
    this.#conversation = conversation;
    this.#revision += 1;
  }

  /** Conversations of coworkers this task's manager delegated to, by tool call id (hierarchical crews). */
  get delegations(): Record<string, Conversation> {
    return this.#delegations;
  }
  set delegations(delegations: Record<string, Conversation>) {
    this.#delegations = delegations;
    this.#revision += 1;
  }

  /** Whether `task_started` was emitted (a resumed in-progress task does not emit it again). */
  get startedEmitted(): boolean {
    return this.#startedEmitted;
  }
  set startedEmitted(startedEmitted: boolean) {
    this.#startedEmitted = startedEmitted;
    this.#revision += 1;
  }

  /** The worker's system prompt when the task started (kept so a resumed task sends the same one). */
  get systemPrompt(): string | undefined {
    return this.#systemPrompt;
  }
  set systemPrompt(systemPrompt: string | undefined) {
    this.#systemPrompt = systemPrompt;
    this.#revision += 1;
  }

  /** What `console.log` and `util.inspect` show: the fields, as they were shown before they became accessors. */
  [Symbol.for('nodejs.util.inspect.custom')](): object {
    const { id, name, description, expectedOutput, agent, context, outputSchema, status, output } = this;
    const { conversation, delegations, startedEmitted, systemPrompt } = this;
    return {
      id,
      name,
      description,
      expectedOutput,
      agent,
      context,
      outputSchema,
      status,
      output,
      conversation,
      delegations,
      startedEmitted,
      systemPrompt,
    };
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

/**
 * A number that changes whenever one of the task's fields is assigned. A conversation or delegation
 * growing in place does not move it: only a task under way changes that way, and its stored form is
 * built afresh each time anyway.
 */
export function taskRevision(task: Task): number {
  return revisionOf(task);
}
