import type { CheckpointEventType, EventBus } from '@crewline/events';
import { Crew, type Flow } from '@crewline/runtime';
import { type CheckpointProvider, decodeValue, readDocument } from '@crewline/runtime-state';
import { workerError } from './errors.js';
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
 * a flow (the class registered under the run's name) continues with the inputs the fork changed put
 * into its state (see {@link forkedFlowInputs}), running what is pending at that checkpoint — with
 * `rerunFrom`, the method asked (from scratch) and those after.
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
    // Read when the attempt starts, as a continuation loads its checkpoint: a store that is briefly
    // away is then a retryable failure, not the end of the run.
    return async () =>
      flow.kickoff({
        inputs: await forkedFlowInputs(options.provider, fork.restoreFrom, context),
        abortSignal: options.abortSignal,
      });
  }
  const crew = await Crew.fork(checkpoint, { bus: options.bus, branch });
  for (const [index, raw] of Object.entries(fork.taskOutputs)) crew.setTaskOutput(Number(index), raw);
  // A task the run was stopped in starts over when the inputs change (the runtime's kickoff does it:
  // its saved prompts hold the old inputs); queue.fork warned of the cost.
  return () => crew.kickoff({ inputs: context.inputs, abortSignal: options.abortSignal, bus: options.bus });
}

/**
 * The inputs the first attempt of a flow's fork kicks off with: the run's inputs that differ from the
 * kickoff inputs the fork point saved (those of the forked run, with any of its own fork's changes),
 * so the ones the fork changed. A flow merges its inputs into its restored state: the others given
 * again would undo what its completed methods made of them (a count they raised put back to its
 * starting value). A credential is saved as `[REDACTED]`, so it differs and is given too, which the
 * restored state needs (it holds the credential as `[REDACTED]` and the flow refuses to run on that).
 * `id` is never given: a fork runs under a new state id, which a kickoff by another id would contradict;
 * a fork that changes it is refused.
 */
async function forkedFlowInputs(
  provider: CheckpointProvider,
  forkPoint: string,
  context: RunContext,
): Promise<Record<string, unknown>> {
  const parsed = provider.parseReference(forkPoint);
  if (parsed?.id === undefined) {
    throw workerError(
      'corrupt_checkpoint',
      `run ${context.runId}: the checkpoint it forks, ${forkPoint}, names no checkpoint id; fork the run again`,
    );
  }
  const document = await readDocument(provider, parsed.location, parsed.id);
  const decoded = decodeValue<unknown>(document.inputs);
  const saved: Record<string, unknown> =
    decoded !== null && typeof decoded === 'object' ? (decoded as Record<string, unknown>) : {};
  const { id, ...inputs } = context.inputs;
  if (id !== undefined && !(Object.hasOwn(saved, 'id') && sameValue(saved.id, id))) {
    const change = Object.hasOwn(saved, 'id')
      ? `${JSON.stringify(saved.id)} to ${JSON.stringify(id)}`
      : `to ${JSON.stringify(id)}`;
    throw workerError(
      'invalid_argument',
      `run ${context.runId}: a fork of a flow's run runs under a new state id, so its input "id" cannot change (${change}); fork without it, or enqueue a new run with that id`,
    );
  }
  const changed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(inputs)) {
    if (!Object.hasOwn(saved, key) || !sameValue(saved[key], value)) changed[key] = value;
  }
  return changed;
}

/** Whether two JSON values are equal, whatever the order of their keys (jsonb reorders them). */
function sameValue(one: unknown, other: unknown): boolean {
  if (one === other) return true;
  if (one === null || other === null || typeof one !== 'object' || typeof other !== 'object') return false;
  if (Array.isArray(one) !== Array.isArray(other)) return false;
  const oneFields = one as Record<string, unknown>;
  const otherFields = other as Record<string, unknown>;
  const keys = Object.keys(oneFields);
  return (
    keys.length === Object.keys(otherFields).length &&
    keys.every((key) => Object.hasOwn(otherFields, key) && sameValue(oneFields[key], otherFields[key]))
  );
}
