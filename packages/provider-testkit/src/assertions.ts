import { CrewlineError, type CrewlineErrorCode } from '@crewline/events';
import {
  type CheckpointDocument,
  type CheckpointMetadata,
  type CheckpointProvider,
  parseDocumentText,
  type StoredCheckpoint,
  validateDocument,
} from '@crewline/runtime-state';
import { expect } from 'vitest';

/** The keys of {@link CheckpointMetadata}; a listing carries these, `reference` and `sizeBytes`. */
export const metadataKeys = [
  'id',
  'createdAt',
  'lineageId',
  'parentId',
  'branch',
  'trigger',
  'entities',
  'eventCount',
] as const satisfies readonly (keyof CheckpointMetadata)[];

const listedKeys = new Set<string>([...metadataKeys, 'reference', 'sizeBytes']);

/** The metadata part of a listed checkpoint. */
export function metadataOf(stored: StoredCheckpoint): CheckpointMetadata {
  const result: Record<string, unknown> = {};
  for (const key of metadataKeys) result[key] = stored[key];
  return result as unknown as CheckpointMetadata;
}

/** A listed checkpoint is metadata only, matches what was written, and has a usable reference. */
export function expectListed(stored: StoredCheckpoint, metadata: CheckpointMetadata): void {
  expect(metadataOf(stored)).toEqual(metadata);
  for (const key of Object.keys(stored))
    expect(listedKeys.has(key), `unexpected listed field "${key}"`).toBe(true);
  expect(typeof stored.reference).toBe('string');
  expect(stored.reference.length).toBeGreaterThan(0);
  if (stored.sizeBytes !== undefined) {
    expect(Number.isInteger(stored.sizeBytes)).toBe(true);
    expect(stored.sizeBytes).toBeGreaterThan(0);
  }
}

/** Reads a checkpoint back the way the core does (parse, upgrade, validate). */
export async function readBack(
  provider: CheckpointProvider,
  location: string,
  id: string,
): Promise<CheckpointDocument> {
  const raw = await provider.read(location, id);
  const parsed = 'text' in raw ? parseDocumentText(raw.text, { origin: `${location}#${id}` }) : raw.document;
  return validateDocument(parsed);
}

/**
 * Runs `action` and asserts it fails with a crewline error whose code is one of `codes`. Returns
 * the error for further checks.
 */
export async function expectCrewlineError(
  action: () => unknown,
  codes: readonly CrewlineErrorCode[],
  what = 'the call',
): Promise<CrewlineError> {
  let outcome: { error: unknown } | { value: unknown };
  try {
    outcome = { value: await action() };
  } catch (error) {
    outcome = { error };
  }
  if (!('error' in outcome)) {
    expect.fail(
      `${what} succeeded (returned ${safeDescribe(outcome.value)}); expected a CrewlineError (${codes.join(' or ')})`,
    );
  }
  const { error } = outcome;
  expect(
    CrewlineError.isInstance(error),
    `${what} threw something that is not a CrewlineError: ${safeDescribe(error)}`,
  ).toBe(true);
  const typed = error as CrewlineError;
  expect(codes, `${what} threw code "${typed.code}": ${typed.message}`).toContain(typed.code);
  return typed;
}

/**
 * Runs `action`, which may either fail with a crewline error of one of `codes` or succeed with a
 * value `accept` approves (e.g. an empty list for a branch that cannot exist).
 */
export async function expectRefusedOrEmpty(
  action: () => unknown,
  codes: readonly CrewlineErrorCode[],
  accept: (value: unknown) => boolean,
  what: string,
): Promise<void> {
  let value: unknown;
  try {
    value = await action();
  } catch (error) {
    expect(
      CrewlineError.isInstance(error),
      `${what} threw something that is not a CrewlineError: ${safeDescribe(error)}`,
    ).toBe(true);
    expect(codes, `${what} threw code "${(error as CrewlineError).code}"`).toContain(
      (error as CrewlineError).code,
    );
    return;
  }
  expect(accept(value), `${what} returned ${safeDescribe(value)}`).toBe(true);
}

function safeDescribe(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.slice(0, 300);
  } catch {
    return String(value);
  }
}

/** Ids in the order a listing returns them. */
export function idsOf(list: readonly { id: string }[]): string[] {
  return list.map((entry) => entry.id);
}
