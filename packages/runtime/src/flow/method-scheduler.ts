import {
  type BaseEvent,
  type CrewlineError,
  type EventContext,
  type EventSource,
  FlowInputRequestedEvent,
  HumanFeedbackRequestedEvent,
  logger,
  MethodExecutionFailedEvent,
  MethodExecutionFinishedEvent,
  MethodExecutionPausedEvent,
  MethodExecutionStartedEvent,
} from '@crewline/events';
import { claimStartedFirst } from '../checkpointing/claim-snapshot.js';
import { stoppedByLeaseRelease } from '../checkpointing/lineage-lease.js';
import { conditionRound, satisfiedBy } from './conditions.js';
import { FlowMethodCallLimitError, flowComponent, flowError } from './errors.js';
import type { FlowGraph, FlowNode } from './flow-graph.js';
import { FlowPauseSignal, type MethodScope, methodScope } from './method-scope.js';
import {
  type Activation,
  type FlowExecution,
  increment,
  type NestedEntity,
  type PauseRequest,
} from './run-progress.js';

/** What the scheduler needs from the run of the flow it drives (given once per run). */
export interface SchedulerHost {
  readonly flow: object;
  readonly flowName: string;
  readonly graph: FlowGraph;
  readonly execution: FlowExecution;
  readonly maxMethodCalls: number;
  /** Stops the run between methods; a method that fails while it is aborted was stopped, not failed. */
  readonly abortSignal: AbortSignal | undefined;
  source(): EventSource;
  context(methodName?: string): EventContext;
  emit(event: BaseEvent): void;
  /** Calls the method on the flow instance. */
  invoke(method: string, input: unknown): unknown;
  /** Stores the state as of `completed`'s completion as the state of record (without what executions still due changed). */
  commitState(completed: Activation): void;
  /**
   * Called after `method_execution_finished` was emitted (state persistence), with that event: the
   * run's automatic checkpoint on it may have saved the state already.
   */
  afterCompletion(node: FlowNode, finished: MethodExecutionFinishedEvent): Promise<void>;
  /**
   * Runs `body` (a method's execution), calling `onJoin` with each crew, agent or flow that joins
   * the run from inside it: what the execution is credited with when it completes.
   */
  watchNested<T>(onJoin: (entity: NestedEntity) => void, body: () => T): T;
}

/**
 * Drives one flow run: executes due activations (concurrently when several are due), records each
 * completion, fires the listeners whose conditions it completes, and stops scheduling after a
 * failure. Bookkeeping is updated before `method_execution_finished` is emitted, so a checkpoint
 * written for that event already holds the completion and the executions it made due.
 */
export class MethodScheduler {
  readonly #host: SchedulerHost;
  readonly #started = new Map<string, number>();
  #failure: { error: unknown } | undefined;

  constructor(host: SchedulerHost) {
    this.#host = host;
    for (const [method, count] of host.execution.callCounts) this.#started.set(method, count);
  }

  /** Schedules the start methods of a fresh run (before `flow_started`, so its checkpoint sees them). */
  enqueueStarts(): void {
    for (const method of this.#host.graph.starts) this.#enqueue(method, undefined, 1);
  }

  /** Runs every due activation (paused ones only when an answer is waiting) until nothing is due. */
  async run(): Promise<void> {
    const due = this.#host.execution.pending.filter((activation) => isRunnable(activation));
    await this.#runAll(due);
    if (this.#failure) throw this.#failure.error;
  }

  async #runAll(activations: Activation[]): Promise<void> {
    await Promise.all(activations.map((activation) => this.#runOne(activation)));
  }

  async #runOne(activation: Activation): Promise<void> {
    if (this.#failure) return;
    let next: Activation[];
    try {
      next = await this.#execute(activation);
    } catch (error) {
      this.#failure ??= { error };
      return;
    }
    await this.#runAll(next);
  }

  #enqueue(method: string, input: unknown, triggerRound: number): Activation {
    const execution = this.#host.execution;
    // Running a method again starts a new round for it and for everything it triggers.
    const round = Math.max(triggerRound, (execution.scheduledRounds.get(method) ?? 0) + 1);
    execution.scheduledRounds.set(method, round);
    const activation: Activation = {
      id: execution.nextActivationId,
      method,
      round,
      input,
      answers: [],
      answersDelivered: 0,
      pause: undefined,
      started: [],
    };
    execution.nextActivationId += 1;
    execution.pending.push(activation);
    return activation;
  }

  async #execute(activation: Activation): Promise<Activation[]> {
    const host = this.#host;
    const method = activation.method;
    const node = host.graph.nodes.get(method);
    const context = host.context(method);
    if (!node) {
      // A checkpoint from an older version of the flow class names a method that no longer exists.
      logger.warn(
        flowComponent,
        `flow "${host.flowName}": saved execution of "${method}" skipped; the method no longer exists`,
      );
      this.#remove(activation);
      return [];
    }
    // Stopped from outside: the activation stays pending, so a resume runs it.
    if (host.abortSignal?.aborted) throw this.#stopped(method, host.abortSignal);
    const started = (this.#started.get(method) ?? 0) + 1;
    if (started > host.maxMethodCalls) {
      const error = new FlowMethodCallLimitError(host.flowName, method, host.maxMethodCalls);
      host.emit(
        new MethodExecutionFailedEvent({
          flowName: host.flowName,
          methodName: method,
          error: error.message,
          source: host.source(),
          context,
        }),
      );
      throw error;
    }
    this.#started.set(method, started);
    activation.pause = undefined;
    host.emit(
      new MethodExecutionStartedEvent({
        flowName: host.flowName,
        methodName: method,
        source: host.source(),
        context,
      }),
    );
    const scope: MethodScope = { flow: host.flow, activation, asked: 0, pauseRequested: undefined };
    // What this execution had started when it was saved (it ran, or paused, in the run a resume
    // continues): its re-run takes up those saved entities, in order, not the n-th one of a name.
    const startedBefore = activation.started;
    // Until the re-run takes them up again, their saved snapshots stand in for them in the run (see
    // `Run.reserveRestoredSnapshots`): a checkpoint written meanwhile still says they are this
    // execution's, and one the re-run no longer kicks off stays its work as saved. Entries without an
    // id (older checkpoints) have no stand-in: the re-run's entities are listed as they join.
    activation.started = startedBefore.filter((entity) => entity.id !== undefined);
    // Only what joined the run from this execution's own async context is its work: a method
    // running beside it, or one that ran before it, ran the others.
    let output: unknown;
    try {
      output = await host.watchNested(
        (entity) => {
          // One taking up its saved snapshot joins under the saved id, listed already.
          const listed = activation.started.some(
            (known) => known.kind === entity.kind && known.id !== undefined && known.id === entity.id,
          );
          if (!listed) activation.started.push(entity);
        },
        () =>
          claimStartedFirst(startedBefore, () =>
            methodScope.run(scope, () => host.invoke(method, activation.input)),
          ),
      );
    } catch (error) {
      if (error instanceof FlowPauseSignal) return this.#pause(activation, node, error.request);
      this.#started.set(method, started - 1);
      // Its crew or agent stopped at the abort: the method runs again on resume, continuing their
      // saved work, so it is not recorded as failed (a checkpoint on the failure would say it was).
      if (host.abortSignal?.aborted) throw this.#stopped(method, host.abortSignal, error);
      // So is one stopped as the process ends on a signal (its run gave up its lineage head).
      if (stoppedByLeaseRelease(error)) throw error;
      host.execution.status = 'failed';
      host.emit(
        new MethodExecutionFailedEvent({
          flowName: host.flowName,
          methodName: method,
          error: error instanceof Error ? error.message : String(error),
          source: host.source(),
          context,
        }),
      );
      throw error;
    }
    // The method caught the pause and carried on: the question is still unanswered, so it pauses.
    if (scope.pauseRequested) return this.#pause(activation, node, scope.pauseRequested);
    return this.#complete(activation, node, output);
  }

  #stopped(method: string, signal: AbortSignal, thrown?: unknown): CrewlineError {
    return flowError(
      'aborted',
      `flow "${this.#host.flowName}" was stopped by its abort signal at method "${method}"; continue it from its latest checkpoint (kickoff({ fromCheckpoint: { restoreFrom } }))`,
      { cause: thrown ?? signal.reason },
    );
  }

  #remove(activation: Activation): void {
    const pending = this.#host.execution.pending;
    const index = pending.indexOf(activation);
    if (index >= 0) pending.splice(index, 1);
  }

  async #complete(activation: Activation, node: FlowNode, output: unknown): Promise<Activation[]> {
    const host = this.#host;
    const execution = host.execution;
    const method = node.name;
    this.#remove(activation);
    increment(execution.callCounts, method);
    if (!execution.completedMethods.includes(method)) execution.completedMethods.push(method);
    execution.outputs.set(method, output);
    execution.lastMethod = method;
    execution.lastOutput = output;
    execution.nestedEntities.push(...activation.started);
    // After the activation left `pending`: what those still in it changed is not saved.
    host.commitState(activation);

    const completedNames = [method];
    const label = node.router ? routeLabel(host.flowName, method, output) : undefined;
    if (label !== undefined && label !== method) completedNames.push(label);
    const round = this.#completionRound(method, completedNames, activation.round);
    for (const name of completedNames) {
      execution.latestRounds.set(name, Math.max(execution.latestRounds.get(name) ?? 0, round));
    }
    const next = this.#fire(completedNames, output, round);
    if (label !== undefined && label !== method && execution.pending.length === 0)
      this.#warnIfUnheard(method, label);
    // Nothing else due or running: a checkpoint written for this completion shows a finished flow.
    if (execution.pending.length === 0 && execution.status === 'running') execution.status = 'completed';
    const finished = new MethodExecutionFinishedEvent({
      flowName: host.flowName,
      methodName: method,
      output,
      source: host.source(),
      context: host.context(method),
    });
    host.emit(finished);
    await host.afterCompletion(node, finished);
    return next;
  }

  /**
   * The round a completion belongs to. When it triggers a method that already ran in this round and
   * whose run can lead to this method, it closes a cycle (a router sending the flow back, or to
   * itself): the completion and what it triggers start the next round, so `or()` listeners fire
   * again and `and()` joins wait for every part to complete again.
   */
  #completionRound(method: string, completedNames: string[], round: number): number {
    const { graph, execution } = this.#host;
    for (const name of completedNames) {
      for (const listener of graph.listenersByName.get(name) ?? []) {
        const ranThisRound = (execution.scheduledRounds.get(listener.name) ?? 0) >= round;
        if (ranThisRound && graph.downstream.get(listener.name)?.has(method)) return round + 1;
      }
    }
    return round;
  }

  /**
   * Listeners whose condition reaches a round they have not fired for, in declaration order. A
   * router also runs on every completion that alone satisfies its condition (a name, or one
   * alternative of an `or()`): a router is a decision point, taken each time it is reached.
   */
  #fire(completedNames: string[], output: unknown, round: number): Activation[] {
    const host = this.#host;
    const candidates = new Set<FlowNode>();
    for (const name of completedNames)
      for (const listener of host.graph.listenersByName.get(name) ?? []) candidates.add(listener);
    const fired: Activation[] = [];
    for (const listener of [...candidates].sort((a, b) => a.order - b.order)) {
      const trigger = listener.trigger;
      if (!trigger) continue;
      const reached = conditionRound(trigger, host.execution.latestRounds);
      const firedRound = host.execution.firedRounds.get(listener.name) ?? 0;
      const decisionReached = listener.router && completedNames.some((name) => satisfiedBy(trigger, name));
      if (reached <= firedRound && !decisionReached) continue;
      host.execution.firedRounds.set(listener.name, Math.max(reached, firedRound));
      fired.push(this.#enqueue(listener.name, output, round));
    }
    return fired;
  }

  /** The flow ends on a route nobody listens to: almost always a misspelt label, so say so. */
  #warnIfUnheard(router: string, label: string): void {
    const graph = this.#host.graph;
    if ((graph.listenersByName.get(label) ?? []).length > 0) return;
    const heard = [...graph.listenersByName.keys()].filter((name) => !graph.nodes.has(name));
    const known =
      heard.length === 0
        ? 'no method listens to any route'
        : `the routes methods listen to are ${heard.map((name) => JSON.stringify(name)).join(', ')}`;
    logger.warn(
      flowComponent,
      `flow "${this.#host.flowName}": router "${router}" returned the route ${JSON.stringify(label)}, which no method listens to, and nothing else is left to run, so the flow ends here (${known}); return one of those routes, or add @listen(${JSON.stringify(label)}) to the method that should run next`,
    );
  }

  #pause(activation: Activation, node: FlowNode, request: PauseRequest): Activation[] {
    const host = this.#host;
    activation.pause = request;
    this.#started.set(node.name, (this.#started.get(node.name) ?? 1) - 1);
    const base = {
      flowName: host.flowName,
      methodName: node.name,
      message: request.message,
      source: host.source(),
      context: host.context(node.name),
    };
    host.emit(new MethodExecutionPausedEvent(base));
    host.emit(
      request.kind === 'input' ? new FlowInputRequestedEvent(base) : new HumanFeedbackRequestedEvent(base),
    );
    return [];
  }
}

/** Due now: never paused, or paused and an answer has arrived since. */
function isRunnable(activation: Activation): boolean {
  return activation.pause === undefined || activation.answers.length > activation.answersDelivered;
}

function routeLabel(flowName: string, method: string, output: unknown): string | undefined {
  if (output === undefined || output === null) return undefined;
  if (typeof output === 'string') return output;
  if (typeof output === 'number' || typeof output === 'boolean') return String(output);
  logger.warn(
    flowComponent,
    `flow "${flowName}": router "${method}" returned a ${typeof output}, not a route label; no route taken`,
  );
  return undefined;
}
