import {
  CheckpointCompletedEvent,
  FlowFinishedEvent,
  FlowPausedEvent,
  FlowStartedEvent,
  logger,
} from '@crewline/events';
import {
  type CheckpointableEntity,
  type CheckpointConfig,
  decodeValue,
  type EntitySummary,
  type LoadedCheckpoint,
  triggersOn,
} from '@crewline/runtime-state';
import { resolveCheckpointChain } from '../checkpointing/checkpoint-setting.js';
import { defaultProvider } from '../checkpointing/provider-registry.js';
import { Run } from '../checkpointing/run.js';
import { flowComponent, flowError } from './errors.js';
import { type FlowExecution, firstPaused } from './flow-execution.js';
import type { FlowGraph } from './flow-graph.js';
import { FlowRunner } from './flow-runner.js';
import { findFlowSnapshot } from './flow-snapshot.js';
import { loadStateCheckpoint, type StorageTarget, stateBranch, storageTarget } from './flow-storage.js';
import type { FlowInternals, FlowPauseInfo, FlowResult } from './flow-types.js';

/** What one kickoff (or resume) asks for. */
export interface RunPlan {
  inputs: Record<string, unknown>;
  /** The answer to the first paused `ask()`. */
  answer: string | undefined;
  /** A checkpoint the flow was hydrated from (and whether to fork it). */
  restore: { loaded: LoadedCheckpoint; fork?: { branch?: string } } | undefined;
}

/** Where persisted states and pause checkpoints go: the flow's checkpoint config, the restored storage, or `@persist()` options. */
export async function persistTarget(
  graph: FlowGraph,
  config: CheckpointConfig | undefined,
  restored?: LoadedCheckpoint,
): Promise<StorageTarget> {
  if (config) {
    const provider = config.provider ?? defaultProvider();
    return { provider, location: provider.resolveLocation(config.location) };
  }
  if (restored) return { provider: restored.provider, location: restored.location };
  return storageTarget(graph.persistOptions?.location, graph.persistOptions?.provider);
}

/**
 * Runs a flow inside a {@link Run}: prepares the state (fresh, restored, or found by persisted id),
 * executes due methods, and ends as completed (`flow_finished`) or paused (`flow_paused`, with a
 * checkpoint when checkpointing or persistence is on).
 */
export async function runFlow<State extends object>(
  flow: FlowInternals<State>,
  plan: RunPlan,
): Promise<FlowResult<State>> {
  const graph = flow.graph();
  const flowName = flow.flow.flowName;
  const config = resolveCheckpointChain([flow.flow.checkpoint]);
  const active = Run.current(flow.bus);
  let restore = plan.restore;
  let continuing =
    restore !== undefined || (plan.answer !== undefined && flow.execution().status === 'paused');
  const { id: inputId, ...otherInputs } = plan.inputs;
  if (inputId !== undefined && (typeof inputId !== 'string' || inputId.length === 0)) {
    throw flowError(
      'invalid_argument',
      `flow "${flowName}": inputs.id must be a non-empty string (the state id)`,
    );
  }

  // The state id asked for: inputs.id, else an id written into the initial state.
  const requestedId = typeof inputId === 'string' ? inputId : flow.declaredStateId();
  if (continuing && typeof inputId === 'string' && inputId !== flow.stateId()) {
    throw flowError(
      'invalid_argument',
      `flow "${flowName}" was restored with state id "${flow.stateId()}"; it cannot continue as "${inputId}" (fork it for a new id, or drop inputs.id)`,
    );
  }

  if (!continuing && !active && graph.persisted && requestedId !== undefined) {
    const loaded = await loadStateCheckpoint(await persistTarget(graph, config), flowName, requestedId);
    if (loaded) {
      flow.hydrateSnapshot(findFlowSnapshot(loaded, flow.flow));
      restore = { loaded };
      continuing = true;
    }
  }
  if (!continuing && active?.restored) {
    // A flow kicked off inside a restored run (e.g. from another flow's method) takes its own snapshot.
    const snapshot = active.takeRestoredSnapshot('flow', flow.flow.entityName);
    if (snapshot) {
      flow.hydrateSnapshot(snapshot);
      continuing = true;
    }
  }

  if (continuing) {
    // State changes made by an execution that did not complete are dropped: it runs again.
    flow.rollbackState();
    if (Object.keys(otherInputs).length > 0) flow.replaceState([flow.state(), otherInputs]);
    if (plan.answer !== undefined) {
      const paused = firstPaused(flow.execution());
      if (!paused)
        throw flowError('invalid_state', `flow "${flowName}" is not waiting for input; nothing to answer`);
      paused.answers.push(plan.answer);
    }
  } else {
    // State set before kickoff (or left by an earlier kickoff of this instance) is kept.
    const previous = flow.existingState();
    flow.resetExecution();
    if (requestedId !== undefined) flow.setStateId(requestedId);
    flow.replaceState([previous, otherInputs]);
  }
  flow.commitState();

  const storedInputs = restore ? decodeValue<Record<string, unknown>>(restore.loaded.document.inputs) : {};
  const runInputs = { ...storedInputs, ...plan.inputs };
  const target = await persistTarget(graph, config, restore?.loaded);
  const written = { last: undefined as string | undefined, pause: undefined as string | undefined };
  let runState: unknown;
  const stopTracking = flow.bus.on(
    CheckpointCompletedEvent,
    (source: unknown, event: CheckpointCompletedEvent) => {
      if (source !== runState) return;
      written.last = event.reference;
      if (event.trigger === 'flow_paused') written.pause = event.reference;
    },
  );

  try {
    const outcome = await Run.execute(
      {
        root: flow.flow,
        config,
        inputs: runInputs,
        ...(restore ? { restored: restore.loaded } : {}),
        ...(restore?.fork ? { fork: restore.fork } : {}),
        bus: flow.bus,
      },
      async (run) => {
        runState = run.state;
        const isRoot = run.root === flow.flow;
        if (isRoot && graph.persisted && !run.restored && run.state.lineage.checkpointId === null) {
          // One lineage per persisted state: its checkpoints are easy to find by branch as well as by id.
          run.state.lineage.branch = stateBranch(flow.stateId());
        }
        const execution = flow.execution();
        if (isRoot && run.restored) carryNestedSnapshots(run, execution, run.restored);
        const emit = (event: Parameters<Run['emit']>[1]) => run.emit(flow.flow, event);
        const writeTo = async (trigger: string) => {
          try {
            await run.state.writeCheckpoint({
              provider: target.provider,
              location: target.location,
              trigger,
              ...(config?.maxCheckpoints !== undefined ? { maxCheckpoints: config.maxCheckpoints } : {}),
            });
          } catch (error) {
            logger.warn(
              flowComponent,
              `flow "${flowName}": saving state ${flow.stateId()} on ${trigger} to ${target.location} failed; the flow continues`,
              error,
            );
          }
        };
        const runner = new FlowRunner({
          flow: flow.flow,
          flowName,
          graph,
          execution,
          maxMethodCalls: flow.maxMethodCalls,
          source: flow.source,
          context: flow.context,
          emit,
          invoke: flow.invoke,
          commitState: flow.commitState,
          afterCompletion: async (node) => {
            if (!node.persisted) return;
            if (config && triggersOn(config, 'method_execution_finished')) return; // already written by auto-checkpoint
            await writeTo('method_execution_finished');
          },
          nestedEntityCount: () => run.state.entities.length,
          nestedEntitiesSince: (count) =>
            run.state.entities
              .slice(count)
              .filter((entity) => entity !== flow.flow)
              .map((entity) => ({ kind: entity.entityKind, name: entity.entityName })),
        });
        execution.status = 'running';
        if (!continuing) {
          runner.enqueueStarts();
          emit(
            new FlowStartedEvent({
              flowName,
              inputs: plan.inputs,
              source: flow.source(),
              context: flow.context(),
            }),
          );
        }
        try {
          await runner.run();
        } catch (error) {
          execution.status = 'failed';
          throw error;
        }
        const paused = firstPaused(execution);
        if (paused?.pause) {
          execution.status = 'paused';
          emit(
            new FlowPausedEvent({
              flowName,
              methodName: paused.method,
              message: paused.pause.message,
              source: flow.source(),
              context: flow.context(paused.method),
            }),
          );
          const autoWritten = config !== undefined && triggersOn(config, 'flow_paused');
          if (!autoWritten && (config || graph.persisted)) await writeTo('flow_paused');
          return { paused };
        }
        execution.status = 'completed';
        emit(
          new FlowFinishedEvent({
            flowName,
            result: execution.lastOutput,
            source: flow.source(),
            context: flow.context(),
          }),
        );
        return { paused: undefined };
      },
    );
    const execution = flow.execution();
    const base = {
      stateId: flow.stateId(),
      state: flow.state(),
      output: execution.lastOutput,
      methodName: execution.lastMethod,
      completedMethods: [...execution.completedMethods],
      checkpoint: written.last,
    };
    if (outcome.paused?.pause) {
      const pause: FlowPauseInfo = {
        methodName: outcome.paused.method,
        message: outcome.paused.pause.message,
        kind: outcome.paused.pause.kind,
        resumeFrom: written.pause,
        hint: resumeHint(flowName, flow.stateId(), written.pause, graph.persisted),
      };
      return { ...base, status: 'paused', pause };
    }
    return { ...base, status: 'completed' };
  } finally {
    stopTracking();
  }
}

function resumeHint(
  flowName: string,
  stateId: string,
  reference: string | undefined,
  persisted: boolean,
): string {
  if (persisted) return `continue with ${flowName}.resume({ id: '${stateId}' }, answer)`;
  if (reference) return `continue with ${flowName}.resume('${reference}', answer)`;
  return 'continue in this process with flow.resume(answer); enable checkpoint or @persist() to continue from another process';
}

/**
 * Crews and agents that ran inside methods which already completed are not run again, so nobody
 * claims their saved snapshots: claim them here (so a later crew of the same name gets its own) and
 * keep them in the run, so every checkpoint still holds every entity of the run.
 */
function carryNestedSnapshots(run: Run, execution: FlowExecution, restored: LoadedCheckpoint): void {
  for (const nested of execution.nestedEntities) {
    const snapshot = run.takeRestoredSnapshot(nested.kind, nested.name);
    if (!snapshot) continue;
    const summary: EntitySummary = restored.document.metadata.entities.find(
      (entity) => entity.kind === snapshot.kind && entity.id === snapshot.id,
    ) ?? { kind: snapshot.kind, id: snapshot.id, name: snapshot.name };
    const preserved: CheckpointableEntity = {
      entityKind: snapshot.kind,
      entityId: snapshot.id,
      entityName: snapshot.name,
      snapshotEntity: () => snapshot,
      summarizeEntity: () => summary,
    };
    run.state.addEntity(preserved);
  }
}
