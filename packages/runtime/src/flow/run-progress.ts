import {
  decodeValue,
  type EncodedValue,
  type EntityKind,
  encodeValue,
  type ValueCodec,
} from '@crewline/runtime-state';
import type { FlowExecutionData, FlowStatus } from '@crewline/runtime-state/internal';

export type { FlowStatus };

/** What a paused method waits for. */
export interface PauseRequest {
  message: string;
  /** `feedback` emits human_feedback_* events, `input` emits flow_input_* events. */
  kind: 'feedback' | 'input';
}

/** One method execution that is due: queued, running, or paused waiting for an answer. */
export interface Activation {
  id: number;
  method: string;
  /** The round this execution belongs to (see `conditionRound`). */
  round: number;
  /** Output of the trigger that fired it (`undefined` for start methods at kickoff). */
  input: unknown;
  /** Answers given to `ask()` calls of this execution, in order. */
  answers: string[];
  /** How many of `answers` were already handed to the method (their "received" events emitted). */
  answersDelivered: number;
  pause: PauseRequest | undefined;
  /**
   * The crews, agents and flows this execution started so far, in order: what a checkpoint written
   * while it runs (or is paused) says is its work, so that its re-run on resume takes up the same
   * saved entities (see `claimStartedFirst`). Its completion credits the method with them.
   */
  started: NestedEntity[];
}

/** Nested entities (crews, agents, flows) a method execution ran, in order. */
export interface NestedEntity {
  kind: EntityKind;
  name: string;
  /** Its id in the run: which saved snapshot of that name is its (absent in older checkpoints). */
  id?: string | undefined;
}

/**
 * The bookkeeping of one flow run. Everything needed to continue is here: which methods completed,
 * their outputs and counts, which executions are due, and the state as of the last completed method.
 */
export interface FlowExecution {
  status: FlowStatus;
  /** Distinct methods that completed at least once, in order of first completion. */
  completedMethods: string[];
  /** Completed executions per method. */
  callCounts: Map<string, number>;
  /** Latest round each method name and route label completed in: what listener conditions read. */
  latestRounds: Map<string, number>;
  /** Latest round each listener fired for. */
  firedRounds: Map<string, number>;
  /** Round of the latest execution scheduled per method (a re-execution goes to the next round). */
  scheduledRounds: Map<string, number>;
  /** Latest output per method. */
  outputs: Map<string, unknown>;
  pending: Activation[];
  lastMethod: string | undefined;
  lastOutput: unknown;
  /** The state as of the last completed method (what a checkpoint stores). */
  committedState: EncodedValue | undefined;
  /** Fields of the initial state that `committedState` no longer has (see `SharedState.ofRecord`). */
  deletedFields: string[];
  nextActivationId: number;
  nestedEntities: NestedEntity[];
}

export function newExecution(): FlowExecution {
  return {
    status: 'pending',
    completedMethods: [],
    callCounts: new Map(),
    latestRounds: new Map(),
    firedRounds: new Map(),
    scheduledRounds: new Map(),
    outputs: new Map(),
    pending: [],
    lastMethod: undefined,
    lastOutput: undefined,
    committedState: undefined,
    deletedFields: [],
    nextActivationId: 1,
    nestedEntities: [],
  };
}

export function increment(map: Map<string, number>, key: string): number {
  const next = (map.get(key) ?? 0) + 1;
  map.set(key, next);
  return next;
}

/**
 * How a snapshot stores an execution's values (see `StoredFlowParts`): each value through the place
 * it holds (given how to encode it), the committed state through `state`. Without it, each is
 * encoded afresh.
 */
export interface StoredValues {
  /** The latest output of `method` (returned by its latest completion). */
  output(method: string, value: unknown, encode: (value: unknown) => EncodedValue): EncodedValue;
  /** The output of the last completed method, `method`. */
  lastOutput(method: string, value: unknown, encode: (value: unknown) => EncodedValue): EncodedValue;
  /** The input of the due execution with id `activation`. */
  input(activation: number, value: unknown, encode: (value: unknown) => EncodedValue): EncodedValue;
  state(committed: EncodedValue): EncodedValue;
}

/** The JSON form of an execution, as stored under `execution` in the flow's entity snapshot. */
export function executionToJson(
  execution: FlowExecution,
  codec: ValueCodec,
  stored?: StoredValues,
): FlowExecutionData {
  const pairs = (map: Map<string, number>): [string, number][] => [...map.entries()];
  const encode = (value: unknown) => encodeValue(value, codec);
  return {
    status: execution.status,
    completedMethods: [...execution.completedMethods],
    methodOutputs: [...execution.outputs.entries()].map(([method, output]) => ({
      method,
      output: stored ? stored.output(method, output, encode) : encode(output),
    })),
    callCounts: pairs(execution.callCounts),
    latestRounds: pairs(execution.latestRounds),
    firedRounds: pairs(execution.firedRounds),
    scheduledRounds: pairs(execution.scheduledRounds),
    pending: execution.pending.map((activation) => ({
      id: activation.id,
      method: activation.method,
      round: activation.round,
      input:
        activation.input === undefined
          ? null
          : stored
            ? stored.input(activation.id, activation.input, encode)
            : encode(activation.input),
      answers: [...activation.answers],
      answersDelivered: activation.answersDelivered,
      pause: activation.pause ? { ...activation.pause } : null,
      // Only when it started something: the snapshot of a flow whose methods start nothing is as before.
      ...(activation.started.length > 0
        ? { started: activation.started.map((entity) => ({ ...entity })) }
        : {}),
    })),
    lastMethod: execution.lastMethod ?? null,
    lastOutput:
      execution.lastOutput === undefined
        ? null
        : stored && execution.lastMethod !== undefined
          ? stored.lastOutput(execution.lastMethod, execution.lastOutput, encode)
          : encode(execution.lastOutput),
    committedState:
      execution.committedState === undefined
        ? null
        : (stored?.state(execution.committedState) ?? execution.committedState),
    // Only when a method deleted one: a checkpoint without it reads in versions that predate it.
    ...(execution.deletedFields.length > 0 ? { deletedFields: [...execution.deletedFields] } : {}),
    nextActivationId: execution.nextActivationId,
    nestedEntities: execution.nestedEntities.map((entity) => ({ ...entity })),
  };
}

/** Puts a saved execution (read by `parseFlowData`) back into its working form. */
export function executionFromData(data: FlowExecutionData, codec: ValueCodec): FlowExecution {
  const decode = (encoded: EncodedValue | null): unknown =>
    encoded === null ? undefined : decodeValue(encoded, codec);
  return {
    status: data.status,
    completedMethods: data.completedMethods,
    callCounts: new Map(data.callCounts),
    latestRounds: new Map(data.latestRounds),
    firedRounds: new Map(data.firedRounds),
    scheduledRounds: new Map(data.scheduledRounds),
    outputs: new Map(data.methodOutputs.map((entry) => [entry.method, decode(entry.output)])),
    pending: data.pending.map((activation) => ({
      id: activation.id,
      method: activation.method,
      round: activation.round,
      input: decode(activation.input),
      answers: activation.answers,
      answersDelivered: activation.answersDelivered,
      pause: activation.pause ?? undefined,
      started: activation.started ?? [],
    })),
    lastMethod: data.lastMethod ?? undefined,
    lastOutput: decode(data.lastOutput),
    committedState: data.committedState ?? undefined,
    deletedFields: data.deletedFields ?? [],
    nextActivationId: data.nextActivationId,
    nestedEntities: data.nestedEntities,
  };
}

/** The first paused activation of an execution, if any. */
export function firstPaused(execution: FlowExecution): Activation | undefined {
  return execution.pending.find((activation) => activation.pause !== undefined);
}
