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

/** The fields of every task, as own enumerable accessors (see {@link Task}); made once, shared. */
let fieldDescriptors: PropertyDescriptorMap;

/**
 * One unit of work in a crew. A task also carries its progress (status, output, and the agent's
 * conversation while it runs) so that a checkpoint can resume it exactly where it stopped.
 *
 * Why every field is an accessor: a checkpoint stores each task of every crew of a run, and a flow
 * of crews checkpoints hundreds of finished tasks on every event. Each assignment to a field moves
 * the task's revision, so a snapshot tells an unchanged task by one number instead of reading again
 * everything its stored form is built from (a cost per checkpoint that grew with every task the run
 * had finished). The fields given at construction cannot be reassigned, and `context` is a frozen
 * copy: nothing a stored form reads can change without the revision moving. The accessors are the
 * task's own enumerable properties, as its plain fields were: `JSON.stringify`, a spread, a value
 * stored in flow state and `toEqual` see every field; and they cannot be redefined, so a subclass
 * that declares one as a field of its own (hiding it from the revision) fails at once.
 */
export class Task {
  declare id: string;
  declare readonly name: string | undefined;
  /** The description template as written (placeholders unfilled). */
  declare readonly description: string;
  /** The expected-output template as written. */
  declare readonly expectedOutput: string;
  declare agent: Agent | undefined;
  /** The earlier tasks given to this one: a frozen copy of the list given to the constructor. */
  declare readonly context: readonly Task[] | undefined;
  declare readonly outputSchema: z.ZodType | undefined;
  declare status: TaskStatus;
  declare output: TaskOutput | undefined;
  /** The agent's conversation for this task: kept while it runs and after, so a resume continues it. */
  declare conversation: Conversation | undefined;
  /** Conversations of coworkers this task's manager delegated to, by tool call id (hierarchical crews). */
  declare delegations: Record<string, Conversation>;
  /** Whether `task_started` was emitted (a resumed in-progress task does not emit it again). */
  declare startedEmitted: boolean;
  /** The worker's system prompt when the task started (kept so a resumed task sends the same one). */
  declare systemPrompt: string | undefined;

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

  static {
    revisionOf = (task) => task.#revision;
    const readOnly = (get: (task: Task) => unknown): PropertyDescriptor => ({
      enumerable: true,
      get(this: Task) {
        return get(this);
      },
    });
    const tracked = <Value>(get: (task: Task) => Value, set: (task: Task, value: Value) => void) => ({
      enumerable: true,
      get(this: Task): Value {
        return get(this);
      },
      set(this: Task, value: Value) {
        set(this, value);
        this.#revision += 1;
      },
    });
    fieldDescriptors = {
      id: tracked(
        (task) => task.#id,
        (task, value: string) => {
          task.#id = value;
        },
      ),
      name: readOnly((task) => task.#name),
      description: readOnly((task) => task.#description),
      expectedOutput: readOnly((task) => task.#expectedOutput),
      agent: tracked(
        (task) => task.#agent,
        (task, value: Agent | undefined) => {
          task.#agent = value;
        },
      ),
      context: readOnly((task) => task.#context),
      outputSchema: readOnly((task) => task.#outputSchema),
      status: tracked(
        (task) => task.#status,
        (task, value: TaskStatus) => {
          task.#status = value;
        },
      ),
      output: tracked(
        (task) => task.#output,
        (task, value: TaskOutput | undefined) => {
          task.#output = value;
        },
      ),
      conversation: tracked(
        (task) => task.#conversation,
        (task, value: Conversation | undefined) => {
          task.#conversation = value;
        },
      ),
      delegations: tracked(
        (task) => task.#delegations,
        (task, value: Record<string, Conversation>) => {
          task.#delegations = value;
        },
      ),
      startedEmitted: tracked(
        (task) => task.#startedEmitted,
        (task, value: boolean) => {
          task.#startedEmitted = value;
        },
      ),
      systemPrompt: tracked(
        (task) => task.#systemPrompt,
        (task, value: string | undefined) => {
          task.#systemPrompt = value;
        },
      ),
    };
  }

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
    Object.defineProperties(this, fieldDescriptors);
  }

  /** What `console.log` and `util.inspect` show: the fields' values (an accessor shows as `[Getter/Setter]`). */
  [Symbol.for('nodejs.util.inspect.custom')](
    depth: number,
    options: object,
    inspect: (value: unknown, options: object) => string,
  ): string {
    return `Task ${inspect({ ...this }, { ...options, depth })}`;
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
 * A number that changes whenever one of the task's fields is assigned. A conversation or the
 * delegations growing in place do not move it: the runtime does that only to a task under way, whose
 * stored form is built afresh each time, and a reader of the revision checks the delegations of a
 * task that has not completed itself.
 */
export function taskRevision(task: Task): number {
  return revisionOf(task);
}
