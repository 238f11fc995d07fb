import type { CrewlineError } from '@crewline/events';
import { stateError } from './errors.js';

/**
 * How deeply arrays and objects may nest in a checkpoint read from storage, counted from the document
 * itself (the document is level 1, its `entities` array level 2, ...). Validation, migration,
 * redaction, restore and the CLI's views all recurse once per level or more, and the JavaScript stack
 * runs out somewhere past a thousand levels (sooner when the caller is already deep), so a document
 * nested deeper is refused, before any of them walks it. What crewline itself nests stays within a
 * dozen levels; the rest of the budget is for values of the run (state, inputs, outputs, messages).
 */
export const MAX_NESTING_DEPTH = 256;

/** Where a value nests too deeply: the path to the first container past the limit. */
export interface NestingOverflow {
  path: (string | number)[];
}

/**
 * Finds the first array or object nested more than `limit` levels deep in `value` (which is level
 * 1), without recursion, so that it works whatever the depth. A cyclic value is found too deep.
 */
export function findNestingOverflow(value: unknown, limit = MAX_NESTING_DEPTH): NestingOverflow | undefined {
  const found = walkContainers(value, limit, false, false);
  return found === undefined ? undefined : { path: pathTo(value as object, found.container) };
}

/** What {@link findStoredValueProblem} found, and where. */
export interface StoredValueProblem {
  /**
   * `too_deep`: nested past the limit; `proto_key`: an object with an own `__proto__` key;
   * `not_json`: a value JSON cannot hold (undefined, a function, NaN, a bigint...).
   */
  kind: 'too_deep' | 'proto_key' | 'not_json';
  path: (string | number)[];
}

/**
 * The one walk over a checkpoint read from storage, before anything recursive reads it: the first
 * container nested past `limit`, the first object with an own `__proto__` key (what `JSON.parse`
 * without a reviver makes of one: a property, never a prototype change), or, with `jsonValues`, the
 * first value that is not JSON — whichever comes first. Text `JSON.parse` made holds only JSON, so
 * its callers skip that check.
 */
export function findStoredValueProblem(
  value: unknown,
  options: { jsonValues: boolean; limit?: number },
): StoredValueProblem | undefined {
  if (options.jsonValues && !isJsonLeaf(value) && (value === null || typeof value !== 'object'))
    return { kind: 'not_json', path: [] };
  const found = walkContainers(value, options.limit ?? MAX_NESTING_DEPTH, true, options.jsonValues);
  if (found === undefined) return undefined;
  const path = pathTo(value as object, found.container);
  return { kind: found.kind, path: found.key === undefined ? path : [...path, found.key] };
}

/** A JSON value that is not an array or object. */
function isJsonLeaf(value: unknown): boolean {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

function walkContainers(
  value: unknown,
  limit: number,
  refuseProtoKeys: boolean,
  jsonValues: boolean,
): { kind: StoredValueProblem['kind']; container: object; key?: string | number } | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  // Two parallel stacks (containers and their levels) keep the common case free of allocations
  // beyond Object.keys; the path is rebuilt by a second walk, only when something is found.
  const containers: object[] = [value];
  const levels: number[] = [1];
  while (containers.length > 0) {
    const container = containers.pop() as object;
    const level = levels.pop() as number;
    if (level > limit) return { kind: 'too_deep', container };
    const childLevel = level + 1;
    if (Array.isArray(container)) {
      for (let index = 0; index < container.length; index += 1) {
        const item: unknown = container[index];
        if (item !== null && typeof item === 'object') {
          containers.push(item);
          levels.push(childLevel);
        } else if (jsonValues && !isJsonLeaf(item)) return { kind: 'not_json', container, key: index };
      }
    } else {
      const record = container as Record<string, unknown>;
      const keys = Object.keys(record);
      for (let index = 0; index < keys.length; index += 1) {
        const key = keys[index] as string;
        if (refuseProtoKeys && key === '__proto__') return { kind: 'proto_key', container, key };
        const item = record[key];
        if (item !== null && typeof item === 'object') {
          containers.push(item);
          levels.push(childLevel);
        } else if (jsonValues && !isJsonLeaf(item)) return { kind: 'not_json', container, key };
      }
    }
  }
  return undefined;
}

/** The path from `root` to `target` (found in the same order as the walk above), iteratively. */
function pathTo(root: object, target: object): (string | number)[] {
  interface Step {
    container: object;
    parent: Step | undefined;
    key: string | number | undefined;
  }
  const pending: Step[] = [{ container: root, parent: undefined, key: undefined }];
  while (pending.length > 0) {
    const step = pending.pop() as Step;
    if (step.container === target) {
      const path: (string | number)[] = [];
      for (let at: Step | undefined = step; at?.parent !== undefined; at = at.parent)
        path.push(at.key as string | number);
      return path.reverse();
    }
    const entries: [string | number, unknown][] = Array.isArray(step.container)
      ? step.container.map((item, index) => [index, item])
      : Object.entries(step.container);
    for (const [key, item] of entries) {
      if (item !== null && typeof item === 'object') pending.push({ container: item, parent: step, key });
    }
  }
  return [];
}

/**
 * A path for a message: its first segments (where the deep value starts is what helps; the hundreds
 * of levels below it do not), joined as `formatIssues` joins zod paths.
 */
export function describeNestingPath(path: readonly (string | number)[], shown = 8): string {
  if (path.length === 0) return '(root)';
  const head = path.slice(0, shown).map(String).join('.');
  return path.length > shown ? `${head}... (${path.length - shown} levels more)` : head;
}

/**
 * The refusal of a value nested more than {@link MAX_NESTING_DEPTH} levels deep, naming where (what
 * `validateDocument` and `parseDocumentText` throw). `origin` is `""` or ` (where it came from)`.
 */
export function nestingError(value: unknown, origin: string, cause?: unknown): CrewlineError {
  const overflow = findNestingOverflow(value);
  const path = describeNestingPath(overflow?.path ?? []);
  return stateError(
    'too_large',
    `checkpoint${origin} is nested more than ${MAX_NESTING_DEPTH} levels deep at ${path}; refusing to read it (keep the run's values shallower than that)`,
    { cause, details: { path, limit: MAX_NESTING_DEPTH } },
  );
}

/**
 * Throws the typed error for what {@link findStoredValueProblem} found in `value` (`origin` is `""`
 * or ` (where it came from)`); nothing when it found nothing.
 */
export function throwStoredValueProblem(
  value: unknown,
  problem: StoredValueProblem | undefined,
  origin: string,
): void {
  if (problem === undefined) return;
  if (problem.kind === 'too_deep') throw nestingError(value, origin);
  const path = describeNestingPath(problem.path);
  throw stateError(
    'corrupt_checkpoint',
    problem.kind === 'proto_key'
      ? `checkpoint${origin} contains a "__proto__" key (at ${path}); refusing to load it`
      : `checkpoint${origin} is invalid: ${path}: not a JSON value`,
  );
}
