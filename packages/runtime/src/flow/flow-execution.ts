import {
  decodeValue,
  type EncodedValue,
  type EntityKind,
  encodeValue,
  formatIssues,
  type JsonObject,
  type JsonValue,
} from '@crewline/runtime-state';
import { z } from 'zod';
import { flowError } from './errors.js';

export type FlowStatus = 'pending' | 'running' | 'completed' | 'failed' | 'paused';

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
}

/** Nested entities (crews, agents) a completed method execution ran, in order. */
export interface NestedEntity {
  kind: EntityKind;
  name: string;
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
    nextActivationId: 1,
    nestedEntities: [],
  };
}

export function increment(map: Map<string, number>, key: string): number {
  const next = (map.get(key) ?? 0) + 1;
  map.set(key, next);
  return next;
}

const encodedSchema = z.strictObject({ json: z.json(), meta: z.json().optional() });
const countsSchema = z.array(z.tuple([z.string(), z.number().int().nonnegative()]));

const executionSchema = z.object({
  status: z.enum(['pending', 'running', 'completed', 'failed', 'paused']),
  completedMethods: z.array(z.string()),
  methodOutputs: z.array(z.strictObject({ method: z.string(), output: encodedSchema })),
  callCounts: countsSchema,
  latestRounds: countsSchema,
  firedRounds: countsSchema,
  scheduledRounds: countsSchema,
  pending: z.array(
    z.strictObject({
      id: z.number().int().positive(),
      method: z.string(),
      round: z.number().int().positive(),
      input: encodedSchema.nullable(),
      answers: z.array(z.string()),
      answersDelivered: z.number().int().nonnegative(),
      pause: z.strictObject({ message: z.string(), kind: z.enum(['feedback', 'input']) }).nullable(),
    }),
  ),
  lastMethod: z.string().nullable(),
  lastOutput: encodedSchema.nullable(),
  committedState: encodedSchema.nullable(),
  nextActivationId: z.number().int().positive(),
  nestedEntities: z.array(z.strictObject({ kind: z.enum(['crew', 'flow', 'agent']), name: z.string() })),
});

/** The JSON form of an execution, as stored under `execution` in the flow's entity snapshot. */
export function executionToJson(execution: FlowExecution): JsonObject {
  const pairs = (map: Map<string, number>): JsonValue =>
    [...map.entries()].map(([key, count]) => [key, count]);
  return {
    status: execution.status,
    completedMethods: [...execution.completedMethods],
    methodOutputs: [...execution.outputs.entries()].map(([method, output]) => ({
      method,
      output: encodeValue(output) as unknown as JsonObject,
    })),
    callCounts: pairs(execution.callCounts),
    latestRounds: pairs(execution.latestRounds),
    firedRounds: pairs(execution.firedRounds),
    scheduledRounds: pairs(execution.scheduledRounds),
    pending: execution.pending.map((activation) => ({
      id: activation.id,
      method: activation.method,
      round: activation.round,
      input: activation.input === undefined ? null : (encodeValue(activation.input) as unknown as JsonObject),
      answers: [...activation.answers],
      answersDelivered: activation.answersDelivered,
      pause: activation.pause ? { ...activation.pause } : null,
    })),
    lastMethod: execution.lastMethod ?? null,
    lastOutput:
      execution.lastOutput === undefined
        ? null
        : (encodeValue(execution.lastOutput) as unknown as JsonObject),
    committedState: (execution.committedState as unknown as JsonObject | undefined) ?? null,
    nextActivationId: execution.nextActivationId,
    nestedEntities: execution.nestedEntities.map((entity) => ({ ...entity })),
  };
}

/** Reads an execution back from a checkpoint; a damaged one gives a `corrupt_checkpoint` error. */
export function executionFromJson(value: unknown, flowName: string): FlowExecution {
  const parsed = executionSchema.safeParse(value);
  if (!parsed.success) {
    throw flowError(
      'corrupt_checkpoint',
      `flow "${flowName}": the saved execution in the checkpoint is invalid: ${formatIssues(parsed.error.issues)}`,
    );
  }
  const data = parsed.data;
  const decode = (encoded: { json: unknown; meta?: unknown } | null): unknown =>
    encoded === null ? undefined : decodeValue(encoded as EncodedValue);
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
    })),
    lastMethod: data.lastMethod ?? undefined,
    lastOutput: decode(data.lastOutput),
    committedState: (data.committedState as EncodedValue | null) ?? undefined,
    nextActivationId: data.nextActivationId,
    nestedEntities: data.nestedEntities,
  };
}

/** The first paused activation of an execution, if any. */
export function firstPaused(execution: FlowExecution): Activation | undefined {
  return execution.pending.find((activation) => activation.pause !== undefined);
}
