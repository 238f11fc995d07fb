import type { CheckpointEventType, EventBus } from '@crewline/events';
import { Crew, type Flow } from '@crewline/runtime';
import type { CheckpointProvider } from '@crewline/runtime-state';
import type { RegisteredRun, RunContext } from './run-registry.js';

/** The first attempt of a run made by `queue.fork`: where it branches off and what it changes. */
export interface ForkStart {
  /** The checkpoint the fork branches off (the finished run's last, or a flow's rerun point): its parent. */
  restoreFrom: string;
  /** Flat task index → edited raw output; every later task runs again. */
  taskOutputs: Readonly<Record<string, string>>;
  /**
   * A flow's fork: the method it re-runs (`queue.fork`'s `rerunFrom`). Its executions start from
   * scratch, even those half done in the save (taken while it ran beside another listener) that
   * would otherwise continue their crews on the old inputs. Default: none.
   */
  rerunFrom?: string;
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
 * Prepares the first attempt of a forked run: the crew or flow is restored from the checkpoint the
 * fork branches off onto a new lineage and branch (its first checkpoint names that one as parent).
 * A crew's edited task outputs are set through the crew's one edit (every later task is
 * invalidated) and its kickoff gets the fork's inputs (they re-template the tasks that run again);
 * a flow (the class registered under the run's name) continues with the inputs put into its state,
 * running what is pending at that checkpoint — with `rerunFrom`, the method asked (from scratch) and those after.
 * Completed tasks and methods before the fork point are not run, so not paid, again; a task the run
 * was interrupted in starts over when the inputs change (else it continues its saved conversation).
 * The request
 * was checked against the checkpoint by `queue.fork`. Later attempts of the run continue its own
 * lineage like any other run's.
 */
export async function prepareForkAttempt(options: ForkAttemptOptions): Promise<() => Promise<unknown>> {
  const { entry, context, fork } = options;
  const checkpoint = {
    restoreFrom: fork.restoreFrom,
    provider: options.provider,
    onEvents: options.onEvents === '*' ? ['*' as const] : [...options.onEvents],
    leaseTtlMs: options.leaseTtlMs,
    onConflict: 'error' as const,
  };
  const branch = `runs/${context.runId}`;
  if (entry.kind === 'flow') {
    // Registered as a Flow subclass (RunRegistry checks it is a class; the runtime checks the rest).
    const FlowClass = entry.build as unknown as typeof Flow;
    const flow = await FlowClass.fork(checkpoint, {
      bus: options.bus,
      branch,
      ...(fork.rerunFrom !== undefined ? { rerunFrom: fork.rerunFrom } : {}),
    });
    return () => flow.kickoff({ inputs: context.inputs, abortSignal: options.abortSignal });
  }
  const crew = await Crew.fork(checkpoint, { bus: options.bus, branch });
  for (const [index, raw] of Object.entries(fork.taskOutputs)) crew.setTaskOutput(Number(index), raw);
  // A task the run was stopped in starts over when the inputs change (the runtime's kickoff does it:
  // its saved prompts hold the old inputs); queue.fork warned of the cost.
  return () => crew.kickoff({ inputs: context.inputs, abortSignal: options.abortSignal, bus: options.bus });
}
