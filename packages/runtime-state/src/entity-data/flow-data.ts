import { z } from 'zod';
import type { EntitySnapshot } from '../document.js';
import type { JsonObject } from '../json.js';
import {
  checkpointSettingDataSchema,
  encodedValueSchema,
  parseVersionedData,
  withDataVersion,
} from './common.js';

/** Version of a flow's entity data (flows written before the field existed read as version 1). */
export const FLOW_DATA_VERSION = 1;

export const flowStatuses = ['pending', 'running', 'completed', 'failed', 'paused'] as const;
export type FlowStatus = (typeof flowStatuses)[number];

const countsSchema = z.array(z.tuple([z.string(), z.number().int().nonnegative()]));

/** A crew, agent or flow a method execution started, in the order it started them. */
const nestedEntitySchema = z.strictObject({
  kind: z.enum(['crew', 'flow', 'agent']),
  name: z.string(),
  /** Its id in the run, which tells apart crews of one name (absent in older checkpoints). */
  id: z.string().optional(),
});

/** The bookkeeping of one flow run: everything needed to continue it. */
export const flowExecutionDataSchema = z.object({
  status: z.enum(flowStatuses),
  /** Distinct methods that completed at least once, in order of first completion. */
  completedMethods: z.array(z.string()),
  /** Latest output per method, encoded. */
  methodOutputs: z.array(z.strictObject({ method: z.string(), output: encodedValueSchema })),
  callCounts: countsSchema,
  latestRounds: countsSchema,
  firedRounds: countsSchema,
  scheduledRounds: countsSchema,
  /** Executions that are due: queued, running, or paused waiting for an answer. */
  pending: z.array(
    z.strictObject({
      id: z.number().int().positive(),
      method: z.string(),
      round: z.number().int().positive(),
      input: encodedValueSchema.nullable(),
      answers: z.array(z.string()),
      answersDelivered: z.number().int().nonnegative(),
      pause: z.strictObject({ message: z.string(), kind: z.enum(['feedback', 'input']) }).nullable(),
      /**
       * What this execution started so far (it is running, or paused), in order: a resume hands its
       * re-run the same saved entities. Absent in older checkpoints, whose re-runs go by name order.
       */
      started: z.array(nestedEntitySchema).optional(),
    }),
  ),
  lastMethod: z.string().nullable(),
  lastOutput: encodedValueSchema.nullable(),
  /** The state as of the last completed method. */
  committedState: encodedValueSchema.nullable(),
  /**
   * Fields of the initial state that state no longer has (a method deleted them): a restore leaves
   * them out, where it lays the initial state under the saved one for fields added since. Absent when
   * none (and in older checkpoints).
   */
  deletedFields: z.array(z.string()).optional(),
  nextActivationId: z.number().int().positive(),
  /** Crews and agents completed method executions ran, in order. */
  nestedEntities: z.array(nestedEntitySchema),
});
export type FlowExecutionData = z.infer<typeof flowExecutionDataSchema>;

export const flowDataSchema = z.object({
  version: z.literal(FLOW_DATA_VERSION),
  stateId: z.string(),
  flowName: z.string(),
  /** The state as of the last completed method, encoded. */
  state: encodedValueSchema,
  execution: flowExecutionDataSchema,
  checkpoint: checkpointSettingDataSchema,
  maxMethodCalls: z.number(),
  /** Some method is `@persist()`ed (or the whole class is). */
  persisted: z.boolean(),
});
export type FlowData = z.infer<typeof flowDataSchema>;

/** The stored form of a flow's data. Typed here, not checked: the write path is hot. */
export function toFlowData(data: Omit<FlowData, 'version'>): JsonObject {
  return withDataVersion(data, FLOW_DATA_VERSION);
}

/** Reads a flow's entity data; a damaged field is a `corrupt_checkpoint` error naming the flow and field. */
export function parseFlowData(snapshot: Pick<EntitySnapshot, 'kind' | 'name' | 'data'>): FlowData {
  return parseVersionedData(flowDataSchema, snapshot, FLOW_DATA_VERSION);
}
