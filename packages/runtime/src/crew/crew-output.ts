import type { TokenUsage } from '../agent-loop/conversation.js';
import type { TaskOutput } from '../task/task-output.js';

/** What `crew.kickoff()` returns. */
export class CrewOutput {
  /** The last task's raw output. */
  readonly raw: string;
  /** The last task's structured output (with an `outputSchema`), else `undefined`. */
  readonly structured: unknown;
  /** Every task's output, in task order (saved outputs of tasks skipped on resume included). */
  readonly tasksOutput: TaskOutput[];
  /** Tokens of every task's conversation (calls made before a resume included) and of cache probes. */
  readonly tokenUsage: TokenUsage;

  constructor(tasksOutput: TaskOutput[], tokenUsage: TokenUsage) {
    const last = tasksOutput[tasksOutput.length - 1];
    this.raw = last?.raw ?? '';
    this.structured = last?.structured;
    this.tasksOutput = tasksOutput;
    this.tokenUsage = tokenUsage;
  }

  toString(): string {
    return this.raw;
  }
}
