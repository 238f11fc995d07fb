import { parseCount } from '../core/args.js';
import { usageError } from '../core/cli-error.js';

type EnqueueOptions = import('@crewline/worker').EnqueueOptions;

/** The option values of how a queued run is run, shared by `crewline runs enqueue` and `runs fork`. */
export interface RunLimitValues {
  'idempotency-key'?: string | undefined;
  priority?: string | undefined;
  'timeout-ms'?: string | undefined;
  'max-attempts'?: string | undefined;
}

/** `--idempotency-key`, `--priority`, `--timeout-ms`, `--max-attempts` as `queue.enqueue` and `queue.fork` take them. */
export function runLimitOptions(
  values: RunLimitValues,
): Pick<EnqueueOptions, 'idempotencyKey' | 'priority' | 'timeoutMs' | 'maxAttempts'> {
  return {
    ...(values['idempotency-key'] !== undefined ? { idempotencyKey: values['idempotency-key'] } : {}),
    ...(values.priority !== undefined ? { priority: parsePriority(values.priority) } : {}),
    ...(values['timeout-ms'] !== undefined
      ? { timeoutMs: parseCount('--timeout-ms', values['timeout-ms']) }
      : {}),
    ...(values['max-attempts'] !== undefined
      ? { maxAttempts: parseCount('--max-attempts', values['max-attempts']) }
      : {}),
  };
}

/** `--priority`: a whole number, negative allowed (higher runs first). */
function parsePriority(value: string): number {
  if (!/^-?\d+$/.test(value))
    throw usageError(`--priority must be a whole number (higher runs first; default 0), got "${value}"`);
  return Number(value);
}
