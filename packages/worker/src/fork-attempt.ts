import type { CheckpointEventType, EventBus } from '@crewline/events';
import { Crew } from '@crewline/runtime';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { workerError } from './errors.js';
import type { RegisteredRun, RunContext } from './run-registry.js';

/** The first attempt of a run made by `queue.fork`: where it branches off and what it changes. */
export interface ForkStart {
  /** The finished run's last checkpoint: the fork's parent. */
  restoreFrom: string;
  /** Flat task index → edited raw output; every later task runs again. */
  taskOutputs: Readonly<Record<string, string>>;
}

export interface ForkAttemptOptions {
  entry: RegisteredRun;
  context: RunContext;
  fork: ForkStart;
  provider: CheckpointProvider;
  onEvents: readonly CheckpointEventType[] | '*';
  leaseTtlMs: number;
  bus: EventBus;
  abortSignal: AbortSignal;
}

/**
 * Prepares the first attempt of a forked run: the crew is restored from the finished run's last
 * checkpoint onto a new lineage and branch (its first checkpoint names that one as parent), the
 * edited task outputs are set through the crew's one edit (every later task is invalidated), and the
 * kickoff gets the fork's inputs (they re-template the tasks that run again). Completed tasks before
 * the first edit are not run, so not paid, again. Later attempts of the run continue its own lineage
 * like any other run's.
 */
export async function prepareForkAttempt(options: ForkAttemptOptions): Promise<() => Promise<unknown>> {
  const { entry, context, fork } = options;
  if (entry.kind !== 'crew') {
    throw workerError(
      'invalid_argument',
      `run ${context.runId} forks a run of flow "${entry.name}"; forking a run is for crews (fork a flow's checkpoint with crewline checkpoint fork)`,
    );
  }
  const crew = await Crew.fork(
    {
      restoreFrom: fork.restoreFrom,
      provider: options.provider,
      onEvents: options.onEvents === '*' ? ['*'] : [...options.onEvents],
      leaseTtlMs: options.leaseTtlMs,
      onConflict: 'error',
    },
    { bus: options.bus, branch: `runs/${context.runId}` },
  );
  for (const [index, raw] of Object.entries(fork.taskOutputs)) crew.setTaskOutput(Number(index), raw);
  return () => crew.kickoff({ inputs: context.inputs, abortSignal: options.abortSignal, bus: options.bus });
}
