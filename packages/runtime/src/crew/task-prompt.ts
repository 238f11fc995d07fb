import type { TaskOutput } from '../task/task-output.js';

export interface TaskPromptParts {
  description: string;
  expectedOutput: string;
  /** Outputs of the tasks this one builds on. */
  context: readonly TaskOutput[];
  /** Memory and knowledge sections (already searched). */
  recall: readonly string[];
  /** For a manager: who can be delegated to. */
  coworkers?: readonly { role: string; goal: string }[];
}

/** The user message that starts an agent's work on a task. */
export function taskPrompt(parts: TaskPromptParts): string {
  const sections = [
    `Current task: ${parts.description}`,
    `This is the expected criteria for your final answer: ${parts.expectedOutput}\nYou must return the actual complete content as the final answer, not a summary.`,
  ];
  if (parts.context.length > 0) {
    const context = parts.context
      .map((output) => `## ${output.name ?? output.description}\n${output.raw}`)
      .join('\n\n');
    sections.push(`This is the context you are working with:\n${context}`);
  }
  sections.push(...parts.recall);
  if (parts.coworkers && parts.coworkers.length > 0) {
    const team = parts.coworkers.map((coworker) => `- ${coworker.role}: ${coworker.goal}`).join('\n');
    sections.push(
      `You manage these coworkers; delegate the work with the delegate_work_to_coworker tool, then give the final answer:\n${team}`,
    );
  }
  return sections.join('\n\n');
}
