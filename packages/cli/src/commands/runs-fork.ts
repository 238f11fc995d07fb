import { parseAssignments, parseCount } from '../core/args.js';
import { usageError } from '../core/cli-error.js';
import { truncate } from '../core/format.js';

type ForkRunOptions = import('@crewline/worker').ForkRunOptions;

/** The option values `crewline runs fork` reads. */
export interface RunsForkValues {
  input?: string[] | undefined;
  'set-output'?: string[] | undefined;
  'idempotency-key'?: string | undefined;
  priority?: string | undefined;
  'timeout-ms'?: string | undefined;
  'max-attempts'?: string | undefined;
}

/**
 * `crewline runs fork RUN [--input k=v] [--set-output N=text]`: the options of `queue.fork`, with
 * the conventions of `crewline checkpoint fork` (`--input` as there; `--set-output` numbers tasks
 * from 1, as `checkpoint info` shows them). Which tasks exist and are completed is checked by the
 * worker that starts the fork, against the checkpoint it branches off.
 */
export function forkOptions(values: RunsForkValues): ForkRunOptions {
  const inputs = parseAssignments('--input', values.input);
  let taskOutputs: Record<number, string> | undefined;
  for (const pair of values['set-output'] ?? []) {
    const match = /^(\d+)=([\s\S]*)$/.exec(pair);
    if (!match || Number(match[1]) < 1) {
      throw usageError(
        `--set-output "${truncate(pair, 40)}" must look like N=text, N being a task number from 1 (crewline checkpoint info shows them)`,
      );
    }
    taskOutputs ??= {};
    taskOutputs[Number(match[1]) - 1] = match[2]!;
  }
  return {
    ...(inputs ? { inputs } : {}),
    ...(taskOutputs ? { taskOutputs } : {}),
    ...(values['idempotency-key'] !== undefined ? { idempotencyKey: values['idempotency-key'] } : {}),
    ...(values.priority !== undefined ? { priority: Number.parseInt(values.priority, 10) } : {}),
    ...(values['timeout-ms'] !== undefined
      ? { timeoutMs: parseCount('--timeout-ms', values['timeout-ms']) }
      : {}),
    ...(values['max-attempts'] !== undefined
      ? { maxAttempts: parseCount('--max-attempts', values['max-attempts']) }
      : {}),
  };
}
