// Addressing values inside a parsed checkpoint: every path to a value, and replacing the value at one.
// The mutations use them to put a wrong type, a huge value or a hostile key at a random place.

export type JsonPath = (string | number)[];

type Container = Record<string, unknown> | unknown[];

function isContainer(value: unknown): value is Container {
  return typeof value === 'object' && value !== null;
}

/** Every path under `root` (the root itself excluded), depth first, up to `limit` paths. */
export function pathsOf(root: unknown, limit = 100_000): JsonPath[] {
  const paths: JsonPath[] = [];
  const stack: { value: unknown; path: JsonPath }[] = [{ value: root, path: [] }];
  while (stack.length > 0 && paths.length < limit) {
    const { value, path } = stack.pop()!;
    if (!isContainer(value)) continue;
    const keys: (string | number)[] = Array.isArray(value)
      ? value.map((_, index) => index)
      : Object.keys(value);
    for (const key of keys) {
      const child = [...path, key];
      paths.push(child);
      stack.push({ value: (value as Record<string | number, unknown>)[key], path: child });
    }
  }
  return paths;
}

/** Paths of the objects under `root` (the root included): where a key can be added. */
export function objectPathsOf(root: unknown): JsonPath[] {
  const objects = [[] as JsonPath, ...pathsOf(root)].filter((path) => {
    const value = valueAt(root, path);
    return isContainer(value) && !Array.isArray(value);
  });
  return objects;
}

/** The value at `path`, or undefined when the path leads nowhere. */
export function valueAt(root: unknown, path: JsonPath): unknown {
  let current = root;
  for (const key of path) {
    if (!isContainer(current)) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

/** Replaces the value at a non-empty `path` (the parent must exist). */
export function replaceAt(root: unknown, path: JsonPath, value: unknown): void {
  const parent = valueAt(root, path.slice(0, -1));
  if (!isContainer(parent)) throw new Error(`no container at ${path.slice(0, -1).join('.')}`);
  // defineProperty, not assignment: the key may be one an assignment would treat specially.
  Object.defineProperty(parent, path.at(-1)!, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** A path as text for the report: `metadata.branch`, `events[3].context`. */
export function describePath(path: JsonPath): string {
  return (
    path
      .map((key, index) => (typeof key === 'number' ? `[${key}]` : index === 0 ? key : `.${key}`))
      .join('') || '(root)'
  );
}
