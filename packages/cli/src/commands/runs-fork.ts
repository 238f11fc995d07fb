import { CrewlineError } from '@crewline/events';
import { parseAssignments } from '../core/args.js';
import { cliError, usageError } from '../core/cli-error.js';
import { truncate } from '../core/format.js';
import { type RunLimitValues, runLimitOptions } from './run-limit-options.js';

type ForkRunOptions = import('@crewline/worker').ForkRunOptions;

/** The option values `crewline runs fork` reads. */
export interface RunsForkValues extends RunLimitValues {
  input?: string[] | undefined;
  'set-output'?: string[] | undefined;
  'rerun-from'?: string | undefined;
}

/**
 * `crewline runs fork RUN [--input k=v] [--set-output N=text] [--rerun-from METHOD]`: the options of
 * `queue.fork`, with the conventions of `crewline checkpoint fork` (`--input` as there;
 * `--set-output` numbers tasks from 1, as `checkpoint info` shows them) and of `checkpoint flows
 * rerun --from` for a flow run. Which tasks, inputs and methods exist is checked by `queue.fork`
 * against the run's checkpoint before anything is queued (its refusal names task numbers from 1).
 */
export function forkOptions(values: RunsForkValues, command: string): ForkRunOptions {
  const inputs = parseAssignments('--input', values.input);
  let taskOutputs: Record<number, string> | undefined;
  for (const pair of values['set-output'] ?? []) {
    const match = /^(\d+)=([\s\S]*)$/.exec(pair);
    if (!match || Number(match[1]) < 1) {
      throw usageError(
        `--set-output "${truncate(pair, 40)}" must look like N=text, N being a task number from 1 (${command} checkpoint info shows them)`,
      );
    }
    taskOutputs ??= {};
    taskOutputs[Number(match[1]) - 1] = match[2]!;
  }
  return {
    ...(inputs ? { inputs } : {}),
    ...(taskOutputs ? { taskOutputs } : {}),
    ...(values['rerun-from'] !== undefined ? { rerunFrom: values['rerun-from'] } : {}),
    ...runLimitOptions(values),
  };
}

/**
 * The queue's refusal of an input the run does not know, said with this command's flag: the
 * worker's message names its call (`fork("<run id>")`, which the user did not type) and the input
 * meant as a key (`did you mean "topic"?`), where `crewline checkpoint fork` says `--input topic=…`.
 * Any other error is returned as it is.
 */
export function forkRefusalInCliWords(error: unknown, command: string): unknown {
  if (!CrewlineError.hasCode(error, 'invalid_argument')) return error;
  const { unknownInput, known, nearest } = error.details ?? {};
  if (typeof unknownInput !== 'string' || !Array.isArray(known)) return error;
  return cliError(
    'invalid_argument',
    `input "${unknownInput}" is not one the run knows (known: ${known.join(', ') || 'none'}); check its spelling${
      typeof nearest === 'string' ? ` (did you mean --input ${nearest}=…?)` : ''
    }, or queue a new run for new inputs with ${command} runs enqueue`,
    { cause: error, details: error.details },
  );
}
