import type { EventRecord } from '@crewline/events';
import { z } from 'zod';
import { formatIssues, stateError } from './errors.js';
import { isValidBranchName, isValidCheckpointId } from './ids.js';
import type { JsonObject, JsonValue } from './json.js';
import { findStoredValueProblem, throwStoredValueProblem } from './nesting-depth.js';
import { checkEventRecords, parseStoredEvents, withStoredEvents } from './stored-events.js';
import type { EncodedValue } from './value-codec.js';

export const CHECKPOINT_FORMAT = 'crewline.checkpoint';
/** The checkpoint format this code writes. Older versions are upgraded on read; newer ones refused. */
export const CHECKPOINT_FORMAT_VERSION = 1;
/** Version of the library that writes checkpoints; stored in every envelope. */
export const LIBRARY_VERSION = '0.1.0';

export type EntityKind = 'crew' | 'flow' | 'agent';

/** Progress of one entity, enough for a one-line listing. */
export interface EntitySummary {
  kind: EntityKind;
  id: string;
  name: string;
  status?: 'pending' | 'running' | 'completed' | 'failed' | 'paused';
  completed?: number;
  total?: number;
}

/**
 * One entity of a run as stored. `data` is owned by the runtime (agents, tasks, flow state...);
 * `registryName` is how code-defined entities (Flow subclasses) are found again on restore.
 */
export interface EntitySnapshot {
  kind: EntityKind;
  id: string;
  name: string;
  registryName?: string;
  data: JsonObject;
}

/** What listing a checkpoint shows; stored at the top of every checkpoint. */
export interface CheckpointMetadata {
  id: string;
  createdAt: string;
  lineageId: string;
  parentId: string | null;
  branch: string;
  /** The event type that caused the write, or `manual`. */
  trigger: string;
  entities: EntitySummary[];
  eventCount: number;
}

/** The envelope and content of one checkpoint (format version 1). */
export interface CheckpointDocument {
  format: typeof CHECKPOINT_FORMAT;
  formatVersion: typeof CHECKPOINT_FORMAT_VERSION;
  libraryVersion: string;
  metadata: CheckpointMetadata;
  inputs: EncodedValue;
  entities: EntitySnapshot[];
  events: EventRecord[];
}

const idSchema = z.string().refine(isValidCheckpointId, 'must be a checkpoint id (letters, digits, _ . -)');
const branchSchema = z
  .string()
  .refine(isValidBranchName, 'must be a branch name (segments of letters, digits, _ . -)');
// Every value below the document is JSON: the walk before the schema (`findStoredValueProblem`)
// checks it once, iteratively, so the schema only checks the shape crewline itself gives a checkpoint
// (checking every value again through a recursive union was most of a restore's validation).
const jsonValueSchema = z.unknown() as z.ZodType<JsonValue>;
const entityKindSchema = z.enum(['crew', 'flow', 'agent']);

const entitySummarySchema = z.strictObject({
  kind: entityKindSchema,
  id: z.string().max(200),
  name: z.string().max(1000),
  status: z.enum(['pending', 'running', 'completed', 'failed', 'paused']).optional(),
  completed: z.number().int().nonnegative().optional(),
  total: z.number().int().nonnegative().optional(),
});

export const checkpointMetadataSchema = z.strictObject({
  id: idSchema,
  createdAt: z.iso.datetime(),
  // Carried into every later checkpoint of the run and used in file and query names: the same safe
  // alphabet as ids (no "/", "..", NUL or line breaks).
  lineageId: z.string().refine(isValidCheckpointId, 'must be a lineage id (letters, digits, _ . -)'),
  parentId: idSchema.nullable(),
  branch: branchSchema,
  trigger: z.string().min(1).max(200),
  entities: z.array(entitySummarySchema),
  eventCount: z.number().int().nonnegative(),
});

const documentSchema = z.strictObject({
  format: z.literal(CHECKPOINT_FORMAT),
  formatVersion: z.literal(CHECKPOINT_FORMAT_VERSION),
  libraryVersion: z.string().max(100),
  metadata: checkpointMetadataSchema,
  // Kickoff inputs are a record of names to values; a string or an array is not something a run can
  // be resumed with.
  inputs: z.strictObject({
    json: z.record(z.string(), jsonValueSchema, 'must be an object of input names to values'),
    meta: jsonValueSchema.optional(),
  }),
  entities: z.array(
    z.strictObject({
      kind: entityKindSchema,
      id: z.string().min(1).max(200),
      name: z.string().max(1000),
      registryName: z.string().max(500).optional(),
      data: z.record(z.string(), jsonValueSchema),
    }),
  ),
  // Checked by `checkEventRecords` without copying each event, through the schema only to say what is wrong.
  events: z.array(z.unknown()),
});

/** Upgrades a raw document of format version `from` to version `from + 1`. Pure. */
export type Migration = (document: Record<string, unknown>) => Record<string, unknown>;

/** Upgrade functions by the version they upgrade from. Version 1 is the first released format. */
export const builtinMigrations: Readonly<Record<number, Migration>> = {};

/**
 * Upgrades a raw checkpoint document to the current format version. Refuses documents written by a
 * newer crewline with a clear error instead of guessing, naming the checkpoint (its id, when its
 * metadata has one, and `origin`: `""` or ` (where it came from)`), since the one who reads it may
 * hold several and the fix is on their side: a newer crewline.
 */
export function upgradeDocument(
  raw: Record<string, unknown>,
  migrations: Readonly<Record<number, Migration>> = builtinMigrations,
  targetVersion = CHECKPOINT_FORMAT_VERSION,
  origin = '',
): Record<string, unknown> {
  let version = raw.formatVersion;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 0) {
    throw stateError(
      'corrupt_checkpoint',
      `checkpoint${origin} has no valid formatVersion; it is not a crewline checkpoint`,
    );
  }
  if (version > targetVersion) {
    const metadata = raw.metadata;
    const id =
      metadata !== null &&
      typeof metadata === 'object' &&
      typeof (metadata as { id?: unknown }).id === 'string'
        ? ` ${JSON.stringify((metadata as { id: string }).id)}`
        : '';
    const written =
      typeof raw.libraryVersion === 'string' ? ` (written by crewline ${raw.libraryVersion})` : '';
    throw stateError(
      'unsupported_version',
      `checkpoint${id}${origin}: format version ${version} is newer than this crewline understands (${targetVersion})${written}; upgrade crewline (the @crewline/* packages, @crewline/runtime-state among them) to read it`,
      { details: { formatVersion: version, supported: targetVersion } },
    );
  }
  let document = raw;
  while (version < targetVersion) {
    const migrate = migrations[version];
    if (!migrate) {
      throw stateError(
        'unsupported_version',
        `checkpoint format version ${version} can no longer be read (no upgrade to ${version + 1}); use an older crewline to export it`,
      );
    }
    document = migrate(document);
    version += 1;
    document = { ...document, formatVersion: version };
  }
  return document;
}

/**
 * Validates a parsed checkpoint document (after upgrading it) and returns it typed. Refuses documents
 * nested more than `MAX_NESTING_DEPTH` levels deep, holding a `__proto__` key or a value that is not JSON.
 */
export function validateDocument(
  raw: unknown,
  migrations: Readonly<Record<number, Migration>> = builtinMigrations,
  /** Where the document came from (a file path, a reference), named in the errors. Default: nothing. */
  origin?: string,
): CheckpointDocument {
  return validateParsedDocument(raw, {
    jsonValues: true,
    origin: origin === undefined ? '' : ` (${origin})`,
    migrations,
  });
}

/**
 * {@link validateDocument} for a caller that knows more of `raw`: with `jsonValues: false`, that
 * `JSON.parse` made it (every value is JSON already); `origin` (`""` or ` (where it came from)`)
 * goes into the messages. With `eventLines` (what a provider's `readParsed` may give instead of the
 * document's `events`), the events are parsed and checked when first read (see `withStoredEvents`),
 * or at once when the document must be upgraded (a migration may rewrite them).
 */
export function validateParsedDocument(
  raw: unknown,
  options: {
    jsonValues: boolean;
    origin: string;
    migrations?: Readonly<Record<number, Migration>>;
    eventLines?: readonly string[] | undefined;
  },
): CheckpointDocument {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw stateError('corrupt_checkpoint', `checkpoint${options.origin} is not a JSON object`);
  }
  let record = raw as Record<string, unknown>;
  if (record.format !== CHECKPOINT_FORMAT) {
    throw stateError(
      'corrupt_checkpoint',
      `not a crewline checkpoint (format is ${JSON.stringify(record.format ?? null)}, expected "${CHECKPOINT_FORMAT}")`,
    );
  }
  let eventLines = options.eventLines;
  if (eventLines !== undefined) {
    // A newer version is refused below whatever its events hold; an older one is upgraded whole.
    const upgrading =
      typeof record.formatVersion === 'number' && record.formatVersion < CHECKPOINT_FORMAT_VERSION;
    // The schema below sees an empty list in place of events still to parse.
    record = { ...record, events: upgrading ? parseStoredEvents(eventLines, options.origin) : [] };
    if (upgrading) eventLines = undefined;
  }
  // Before anything recursive (migrations, the schema below, every later reader) walks it.
  throwStoredValueProblem(
    record,
    findStoredValueProblem(record, { jsonValues: options.jsonValues }),
    options.origin,
  );
  const upgraded = upgradeDocument(
    record,
    options.migrations ?? builtinMigrations,
    CHECKPOINT_FORMAT_VERSION,
    options.origin,
  );
  const parsed = documentSchema.safeParse(upgraded);
  if (!parsed.success) {
    throw stateError(
      'corrupt_checkpoint',
      `checkpoint${options.origin} is invalid: ${formatIssues(parsed.error.issues)}`,
    );
  }
  if (eventLines !== undefined)
    return withStoredEvents(parsed.data, eventLines, options.origin) as CheckpointDocument;
  checkEventRecords(parsed.data.events, options.origin);
  return parsed.data as CheckpointDocument;
}

/** Validates stored metadata (as read back from a provider's index). */
export function validateMetadata(raw: unknown): CheckpointMetadata {
  const parsed = checkpointMetadataSchema.safeParse(raw);
  if (!parsed.success) {
    throw stateError(
      'corrupt_checkpoint',
      `checkpoint metadata is invalid: ${formatIssues(parsed.error.issues)}`,
    );
  }
  return parsed.data as CheckpointMetadata;
}
