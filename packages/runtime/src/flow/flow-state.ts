import { randomUUID } from 'node:crypto';
import { describeIssues, type StandardSchema } from '../schema/standard-schema.js';
import { flowError } from './errors.js';

/** The state a flow's methods read and change: your fields plus an `id`. */
export type FlowState<State extends object> = State & { id: string };

/** Initial values of a state: every field but `id` (which is generated when absent). */
export type StateInit<State extends object> = Omit<State, 'id'> & { id?: string };

/**
 * A schema for the state: any Standard Schema (zod 4, valibot, arktype...) whose validation is
 * synchronous. It validates and fills defaults at kickoff and after a restore (so fields added to the
 * schema after a state was saved get their defaults).
 */
export type StateSchema<State = unknown> = StandardSchema<unknown, State>;

/** A new state id. */
export function newStateId(): string {
  return randomUUID();
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Copies own enumerable fields, skipping ones that would touch a prototype. */
export function assignFields(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const key of Object.keys(source)) {
    if (key === '__proto__') continue;
    Object.defineProperty(target, key, {
      value: source[key],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
}

/**
 * Builds a state: defaults, then `layers` in order (later wins), validated by the schema when there
 * is one, with `id` set last so that neither a schema nor a layer can drop it.
 */
export function composeState<State extends object>(
  flowName: string,
  schema: StateSchema | undefined,
  id: string,
  layers: readonly unknown[],
): FlowState<State> {
  const merged: Record<string, unknown> = {};
  for (const layer of layers) {
    if (layer === undefined || layer === null) continue;
    if (!isPlainRecord(layer)) {
      throw flowError(
        'invalid_argument',
        `flow "${flowName}": state must be a plain object (got ${Array.isArray(layer) ? 'an array' : typeof layer}); use initialState = { ... } or a schema`,
      );
    }
    assignFields(merged, layer);
  }
  merged.id = id;
  const validated = schema ? validateWithSchema(flowName, schema, merged) : merged;
  validated.id = id;
  return validated as FlowState<State>;
}

function validateWithSchema(
  flowName: string,
  schema: StateSchema,
  value: Record<string, unknown>,
): Record<string, unknown> {
  const result = schema['~standard'].validate(value);
  if (result instanceof Promise) {
    throw flowError(
      'invalid_config',
      `flow "${flowName}": the state schema validates asynchronously; use a synchronous schema`,
    );
  }
  if (result.issues) {
    throw flowError(
      'invalid_argument',
      `flow "${flowName}": state does not match the state schema: ${describeIssues(result.issues)}; fix the inputs or initial state (a strict schema must declare \`id\`)`,
    );
  }
  if (!isPlainRecord(result.value)) {
    throw flowError('invalid_config', `flow "${flowName}": the state schema must produce an object`);
  }
  return result.value;
}
