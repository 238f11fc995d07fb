import type { TokenUsage } from '../agent-loop/conversation.js';

export interface TaskOutputInit {
  taskId: string;
  name: string | undefined;
  description: string;
  expectedOutput: string;
  agentRole: string;
  raw: string;
  structured?: unknown;
  usage: TokenUsage;
  /** True when the output was set by hand (`crew.setTaskOutput`) rather than produced by the agent. */
  edited?: boolean;
}

/** What one task produced: the raw text, the parsed structured value (with `outputSchema`) and who made it. */
export class TaskOutput {
  readonly taskId: string;
  readonly name: string | undefined;
  /** The task description as sent (placeholders filled). */
  readonly description: string;
  readonly expectedOutput: string;
  /** Role of the agent that produced the output. */
  readonly agentRole: string;
  readonly raw: string;
  /** The output parsed and validated against the task's `outputSchema`; `undefined` without one. */
  readonly structured: unknown;
  readonly usage: TokenUsage;
  readonly edited: boolean;

  constructor(init: TaskOutputInit) {
    this.taskId = init.taskId;
    this.name = init.name;
    this.description = init.description;
    this.expectedOutput = init.expectedOutput;
    this.agentRole = init.agentRole;
    this.raw = init.raw;
    this.structured = init.structured;
    this.usage = init.usage;
    this.edited = init.edited ?? false;
    // Read-only at run time too: a checkpoint keeps a completed task's stored output while the task
    // holds the same TaskOutput, so one changed in place would not reach it; replace it instead.
    Object.freeze(this);
  }

  toString(): string {
    return this.raw;
  }
}
