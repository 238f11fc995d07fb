import type { CheckpointEventType } from '@crewline/events';
import { type BaseEvent, CrewlineError, EventBus, REDACTED } from '@crewline/events';
import type { Flow, FlowResult } from '@crewline/runtime';
import type { CheckpointConfigInput, CheckpointProvider, RuntimeState } from '@crewline/runtime-state';
import { workerError } from './errors.js';
import { type ForkStart, prepareForkAttempt } from './fork-attempt.js';
import type { RegisteredRun, RunContext } from './run-registry.js';

/** Why an attempt was stopped from outside (the abort reason the worker gives). */
export type StopReason = 'hand-back' | 'cancelled' | 'timed-out' | 'lost';

/** Live progress of an attempt; the worker writes it to the run's row at each renewal. */
export interface AttemptProgress {
  lineageId: string | undefined;
  lastCheckpoint: string | undefined;
  currentTask: string | undefined;
  /** Tokens since the last time the worker took them (see {@link AttemptTracker.takeTokens}). */
  inputTokens: number;
  outputTokens: number;
}

/** What a flow that stopped to ask a person (its `ask()`) waits for. */
export interface AttemptPause {
  /** The method that asked. */
  methodName: string;
  /** The question. */
  message: string;
  kind: 'feedback' | 'input';
  /** Reference of the checkpoint written at the pause: the answer is for the run continued from it. */
  checkpoint: string | undefined;
}

export type AttemptOutcome =
  | { kind: 'completed'; output: string }
  | { kind: 'paused'; pause: AttemptPause }
  | { kind: 'stopped'; reason: StopReason }
  | { kind: 'failed'; error: unknown; retryable: boolean };

export interface AttemptOptions {
  entry: RegisteredRun;
  context: RunContext;
  provider: CheckpointProvider;
  /** The checkpoint location (the queue's URL with its schema). */
  location: string;
  /** The checkpoint of the run's lineage to continue; none for a first attempt. */
  restoreFrom: string | undefined;
  onEvents: readonly CheckpointEventType[] | '*';
  leaseTtlMs: number;
  tracker: AttemptTracker;
  /** The first attempt of a run made by `queue.fork`: it branches off this checkpoint. Default: none. */
  fork?: ForkStart | undefined;
  /** The answer a paused flow restored from `restoreFrom` continues with. Default: none. */
  humanInput?: string | undefined;
}

/** Codes that say the run itself is wrong, not the moment: retrying cannot help. */
const unretryableCodes = new Set([
  'invalid_argument',
  'invalid_config',
  'invalid_name',
  'not_found',
  'not_rebuildable',
]);

/**
 * Follows one attempt's events on its own bus: lineage, newest checkpoint, current task, tokens, and
 * whether a model call is in flight; stops the attempt (through its abort signal) when asked, at the
 * right moment for a hand-back: not in the middle of a model call.
 */
export class AttemptTracker {
  readonly bus = new EventBus();
  readonly controller = new AbortController();
  readonly progress: AttemptProgress = {
    lineageId: undefined,
    lastCheckpoint: undefined,
    currentTask: undefined,
    inputTokens: 0,
    outputTokens: 0,
  };
  #callsInFlight = 0;
  #handBackRequested = false;
  /** Told when the attempt's lineage becomes known or changes (it is recorded before any model call ends). */
  onLineage: ((lineageId: string) => void) | undefined;

  constructor() {
    // Three parameters: the handler gets the run's state, whose lineage is the run's from its first event.
    this.bus.onAny((_source: unknown, event: BaseEvent, state: RuntimeState | undefined) =>
      this.#observe(event, state),
    );
  }

  get stopReason(): StopReason | undefined {
    return this.controller.signal.aborted
      ? (this.controller.signal.reason as { stop: StopReason }).stop
      : undefined;
  }

  /** Stops now (cancel, timeout, lost hold): a model call in flight is aborted. */
  stop(reason: StopReason): void {
    if (this.controller.signal.aborted) return;
    const error = workerError('aborted', `run stopped: ${reason}`);
    Object.assign(error, { stop: reason });
    this.controller.abort(error);
  }

  /**
   * Hands the run back: the model call in flight (if any) is let finish and its completion
   * checkpointed, then the run stops between steps.
   */
  handBack(): void {
    this.#handBackRequested = true;
    if (this.#callsInFlight === 0) this.stop('hand-back');
  }

  #observe(event: BaseEvent, state: RuntimeState | undefined): void {
    const lineageId = state?.lineage?.lineageId;
    if (lineageId !== undefined && lineageId !== this.progress.lineageId) {
      this.progress.lineageId = lineageId;
      this.onLineage?.(lineageId);
    }
    const fields = event as unknown as Record<string, unknown>;
    switch (event.type) {
      case 'task_started':
        this.progress.currentTask = String(fields.description ?? event.context.taskName ?? '');
        break;
      case 'method_execution_started':
        this.progress.currentTask = String(fields.methodName ?? '');
        break;
      case 'llm_call_started':
        this.#callsInFlight += 1;
        break;
      case 'llm_call_completed':
      case 'llm_call_failed': {
        this.#callsInFlight = Math.max(0, this.#callsInFlight - 1);
        const usage = fields.usage as { inputTokens?: number; outputTokens?: number } | undefined;
        this.progress.inputTokens += usage?.inputTokens ?? 0;
        this.progress.outputTokens += usage?.outputTokens ?? 0;
        // The completion's checkpoint was started inside this event (the automatic checkpoint handler
        // ran before us or runs right after, synchronously); stopping now lets the run settle it.
        if (this.#handBackRequested && this.#callsInFlight === 0)
          queueMicrotask(() => this.stop('hand-back'));
        break;
      }
      case 'checkpoint_completed':
        this.progress.lastCheckpoint = String(fields.reference);
        break;
    }
  }

  /** Tokens counted since the last call (the worker adds them to the row). */
  takeTokens(): { input: number; output: number } {
    const taken = { input: this.progress.inputTokens, output: this.progress.outputTokens };
    this.progress.inputTokens = 0;
    this.progress.outputTokens = 0;
    return taken;
  }
}

/** Runs one attempt of a run to its end, a stop, or a failure (classified retryable or not). */
export async function runAttempt(options: AttemptOptions): Promise<AttemptOutcome> {
  const { entry, tracker } = options;
  const checkpoint = options.restoreFrom
    ? {
        restoreFrom: options.restoreFrom,
        provider: options.provider,
        leaseTtlMs: options.leaseTtlMs,
        onConflict: 'error' as const,
      }
    : {
        location: options.location,
        provider: options.provider,
        onEvents: options.onEvents === '*' ? ['*' as const] : [...options.onEvents],
        leaseTtlMs: options.leaseTtlMs,
        onConflict: 'error' as const,
      };
  let start: () => Promise<unknown>;
  try {
    start = options.fork
      ? await prepareForkAttempt({
          entry,
          context: options.context,
          fork: options.fork,
          provider: options.provider,
          onEvents: options.onEvents,
          leaseTtlMs: options.leaseTtlMs,
          bus: tracker.bus,
          abortSignal: tracker.controller.signal,
        })
      : await prepare(options, checkpoint);
  } catch (error) {
    // The factory refused the inputs, or built nothing runnable: the run is wrong, not the moment.
    return {
      kind: 'failed',
      error: CrewlineError.isInstance(error)
        ? error
        : workerError(
            'invalid_argument',
            `building "${entry.name}" failed: ${String((error as Error)?.message ?? error)}`,
            {
              cause: error,
            },
          ),
      retryable: false,
    };
  }
  try {
    const result = await start();
    if (tracker.stopReason !== undefined) return { kind: 'stopped', reason: tracker.stopReason };
    const pause = pauseOf(result);
    if (pause) return { kind: 'paused', pause };
    return { kind: 'completed', output: outputText(result) };
  } catch (error) {
    if (tracker.stopReason !== undefined) return { kind: 'stopped', reason: tracker.stopReason };
    const code = CrewlineError.isInstance(error) ? error.code : undefined;
    return { kind: 'failed', error, retryable: code === undefined || !unretryableCodes.has(code) };
  }
}

async function prepare(
  options: AttemptOptions,
  checkpoint: Record<string, unknown>,
): Promise<() => Promise<unknown>> {
  const { entry, tracker, context } = options;
  const bus = tracker.bus;
  if (entry.kind === 'crew') {
    const crew = await entry.build(context);
    if (!crew || typeof (crew as { kickoff?: unknown }).kickoff !== 'function') {
      throw workerError(
        'invalid_config',
        `the factory of crew "${entry.name}" returned no crew; return new Crew({...})`,
      );
    }
    return () =>
      crew.kickoff({
        ...(options.restoreFrom ? {} : { inputs: context.inputs }),
        fromCheckpoint: checkpoint,
        abortSignal: tracker.controller.signal,
        bus,
      });
  }
  // Registered as a Flow subclass (RunRegistry checks it is a class; the runtime checks the rest).
  const FlowClass = entry.build as unknown as typeof Flow;
  const abortSignal = tracker.controller.signal;
  if (options.restoreFrom !== undefined) {
    // A continuation: a retry after a crash, a hand-back or a lost lease, or the answer of a person
    // to a paused run (the method that asked runs again and gets it from its ask()). Loaded when the
    // attempt starts, so a store that is briefly away is a retryable failure.
    const answer = options.humanInput;
    return async () => {
      const flow = await FlowClass.fromCheckpoint(checkpoint as CheckpointConfigInput, { bus });
      const inputs = redactedInputsOf(flow.state, context.inputs);
      return answer === undefined
        ? flow.kickoff({ inputs, abortSignal })
        : flow.resume(answer, { inputs, abortSignal });
    };
  }
  const flow = new FlowClass({ bus });
  return () => flow.kickoff({ inputs: context.inputs, fromCheckpoint: checkpoint, abortSignal });
}

/**
 * The run's inputs a continued flow is given again: those whose field the restored state holds as
 * `[REDACTED]` (a credential the checkpoint did not store, which the flow refuses to run without and
 * the queue holds). Only those: every other input was merged into the state at the first attempt,
 * and merging it again would undo what completed methods made of it (a count raised back to its
 * starting value).
 */
function redactedInputsOf(
  state: unknown,
  inputs: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const given: Record<string, unknown> = {};
  const restored = state as Record<string, unknown>;
  for (const key of Object.keys(inputs)) {
    if (Object.hasOwn(restored, key) && holdsRedacted(restored[key], new Set(), 0)) given[key] = inputs[key];
  }
  return given;
}

/** Whether `value` is `[REDACTED]` or holds it, as a field or item at any depth (up to redaction's). */
function holdsRedacted(value: unknown, seen: Set<object>, depth: number): boolean {
  if (value === REDACTED) return true;
  if (value === null || typeof value !== 'object' || depth >= 32 || seen.has(value)) return false;
  seen.add(value);
  const items = Array.isArray(value) ? value : Object.values(value);
  return items.some((item) => holdsRedacted(item, seen, depth + 1));
}

/** The pause of a flow result that stopped to ask a person, if it did. */
function pauseOf(result: unknown): AttemptPause | undefined {
  const flowResult = result as Partial<FlowResult> | null;
  if (flowResult?.status !== 'paused' || !flowResult.pause) return undefined;
  const { methodName, message, kind, resumeFrom } = flowResult.pause;
  return { methodName, message, kind, checkpoint: resumeFrom };
}

function outputText(result: unknown): string {
  if (typeof result === 'string') return result;
  const raw = (result as { raw?: unknown } | null)?.raw;
  if (typeof raw === 'string') return raw;
  // A flow's result: the output of its last method, not the whole result (state, references).
  const flowResult = result as Partial<FlowResult> | null;
  if (flowResult?.status === 'completed' && Array.isArray(flowResult.completedMethods)) {
    return typeof flowResult.output === 'string'
      ? flowResult.output
      : JSON.stringify(flowResult.output ?? null);
  }
  return JSON.stringify(result ?? null);
}
