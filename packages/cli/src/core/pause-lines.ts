import { shellWord } from '@crewline/runtime-state/internal';
import { entityLabel } from './entity-label.js';
import { displayPath } from './location.js';

/** What a run that ended paused says of its pause (a `ContinueOutcome`'s). */
export interface PausedOutcome {
  kind: string;
  name: string;
  lastCheckpoint?: string;
  pause: { methodName: string; message: string; resumeFrom?: string };
}

/**
 * The lines `resume`, `fork` and `flows rerun` print when the run ended paused: the question, then
 * the command that answers it (from the checkpoint written at the pause), naming the CLI as
 * `command` (see commandName).
 */
export function pauseLines(outcome: PausedOutcome, cwd: string, command = 'crewline'): string[] {
  const from = outcome.pause.resumeFrom ?? outcome.lastCheckpoint;
  return [
    `Paused: ${entityLabel(outcome.kind, outcome.name)} waits for an answer in ${outcome.pause.methodName}:`,
    `  ${outcome.pause.message}`,
    from
      ? `Answer with: ${command} checkpoint resume ${shellWord(displayPath(from, cwd))} --answer "..."`
      : 'No checkpoint was written for the pause; enable checkpointing to answer from the command line',
  ];
}
