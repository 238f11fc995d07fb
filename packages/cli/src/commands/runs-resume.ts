import { shellWord } from '@crewline/runtime-state/internal';
import { usageError } from '../core/cli-error.js';

type RunRecord = import('@crewline/worker').RunRecord;

/**
 * `crewline runs resume RUN --answer "text"`: the answer a paused run's flow waits for (its
 * `ask()`), named as `crewline checkpoint resume --answer` names it. `command` names the CLI as it
 * was run (`commandName`).
 */
export function resumeAnswer(
  values: { answer?: string | undefined },
  runId: string,
  command: string,
): string {
  if (values.answer === undefined) {
    throw usageError(
      `${command} runs resume needs the answer: ${command} runs resume ${shellWord(runId)} --answer "..." (${command} runs show ${shellWord(runId)} prints the question)`,
    );
  }
  return values.answer;
}

/** The question of a paused run and how to answer it, or the answer it was given, for `runs show`. */
export function questionLines(record: RunRecord, command: string): string[] {
  if (record.question === null) return [];
  const lines = [`question   ${record.question.methodName}: ${record.question.message}`];
  if (record.status === 'paused') {
    lines.push(`answer     ${command} runs resume ${shellWord(record.id)} --answer "..."`);
  } else if (record.humanInput !== null) {
    lines.push(`answer     ${record.humanInput}`);
  }
  return lines;
}
