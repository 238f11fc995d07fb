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
  if (value === null || typeof value !== 'object') return undefined;
  // Two parallel stacks (containers and their levels) keep the common case free of allocations
  // beyond Object.keys; the path is rebuilt by a second walk, only when something is too deep.
  const containers: object[] = [value];
  const levels: number[] = [1];
  while (containers.length > 0) {
    const container = containers.pop() as object;
    const level = levels.pop() as number;
    if (level > limit) return { path: pathTo(value, container) };
    const childLevel = level + 1;
    if (Array.isArray(container)) {
      for (let index = 0; index < container.length; index += 1) {
        const item: unknown = container[index];
        if (item !== null && typeof item === 'object') {
          containers.push(item);
          levels.push(childLevel);
        }
      }
    } else {
      const record = container as Record<string, unknown>;
      const keys = Object.keys(record);
      for (let index = 0; index < keys.length; index += 1) {
        const item = record[keys[index] as string];
        if (item !== null && typeof item === 'object') {
          containers.push(item);
          levels.push(childLevel);
        }
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
