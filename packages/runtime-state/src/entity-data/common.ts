import { z } from 'zod';
import type { EntitySnapshot } from '../document.js';
import { formatIssues, stateError } from '../errors.js';
import type { JsonObject, JsonValue } from '../json.js';
import type { EncodedValue } from '../value-codec.js';

/** Any JSON value (parts whose shape another module owns: model settings, knowledge, schemas). */
export const jsonSchema = z.json() as unknown as z.ZodType<JsonValue>;

/** A user value in storable form ({@link EncodedValue}). */
export const encodedValueSchema = z.strictObject({
  json: jsonSchema,
  meta: jsonSchema.optional(),
}) as unknown as z.ZodType<EncodedValue>;

/** Token counts, as stored on task outputs, conversations and a crew's cache probes. */
export const usageDataSchema = z.strictObject({
  inputTokens: z.number(),
  outputTokens: z.number(),
  totalTokens: z.number(),
  cachedInputTokens: z.number(),
});
export type UsageData = z.infer<typeof usageDataSchema>;

/**
 * An agent's conversation on one task as stored. The messages are the AI SDK's, owned by the agent
 * loop; here only the frame a resume relies on is checked.
 */
export const conversationDataSchema = z.looseObject({
  messages: z.array(jsonSchema),
  llmCalls: z.number().int().nonnegative(),
  finished: z.boolean(),
  usage: usageDataSchema,
  output: z.string().optional(),
  structuredOutputRetries: z.number().int().nonnegative().optional(),
});
export type ConversationData = z.infer<typeof conversationDataSchema>;

/** The stored form of a checkpoint setting (`false`, `null` for inherit, or a config); owned by the runtime. */
export const checkpointSettingDataSchema = jsonSchema;

/**
 * Parses entity data with `schema`; a value that does not fit is a `corrupt_checkpoint` error that
 * names the entity and the field at fault, never a silent default.
 */
export function parseEntityPart<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw stateError(
    'corrupt_checkpoint',
    `${what} in the checkpoint is not valid (${formatIssues(parsed.error.issues)}); the checkpoint may be damaged or written by a newer crewline`,
  );
}

/**
 * The version of stored entity data. Data written before its kind had a version field is version 1;
 * a version newer than `current` is refused, so old code never misreads new data.
 */
export function entityDataVersion(value: unknown, current: number, what: string): number {
  const version =
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as { version?: unknown }).version
      : undefined;
  if (version === undefined) return 1;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw stateError(
      'corrupt_checkpoint',
      `${what} in the checkpoint has version ${JSON.stringify(version)}; expected a whole number from 1`,
    );
  }
  if (version > current) {
    throw stateError(
      'unsupported_version',
      `${what} in the checkpoint has data version ${version}, newer than this crewline understands (${current}); upgrade crewline to read it`,
    );
  }
  return version;
}

/** The statuses a crew, a task and a standalone agent are stored with. */
export const progressStatuses = ['pending', 'running', 'completed', 'failed'] as const;

/** Entity data stamped with the version its schema describes. */
export function withDataVersion(data: object, version: number): JsonObject {
  return { version, ...data } as unknown as JsonObject;
}

/**
 * Reads one entity's data with its schema: the version is checked first (data written before its kind
 * had a version field is version 1), then every field.
 */
export function parseVersionedData<T>(
  schema: z.ZodType<T>,
  snapshot: Pick<EntitySnapshot, 'kind' | 'name' | 'data'>,
  current: number,
): T {
  const what = `the data of ${snapshot.kind} "${snapshot.name}"`;
  const version = entityDataVersion(snapshot.data, current, what);
  const data = snapshot.data.version === undefined ? { ...snapshot.data, version } : snapshot.data;
  return parseEntityPart(schema, data, what);
}
