/** A change at one place inside the flow state. */
export interface StateChange {
  /** Where, as a path: `plan.steps[2]`, `topic`. */
  path: string;
  change: 'added' | 'removed' | 'changed';
  from?: unknown;
  to?: unknown;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  const plain = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
  return path === '' ? plain : /^[A-Za-z_$]/.test(plain) ? `${path}.${plain}` : `${path}[${plain}]`;
}

/** Walks two JSON-like values together and lists what was added, removed or changed, by path. */
export function diffStructure(from: unknown, to: unknown, path = ''): StateChange[] {
  if (same(from, to)) return [];
  if (isPlainObject(from) && isPlainObject(to)) {
    const changes: StateChange[] = [];
    for (const key of new Set([...Object.keys(from), ...Object.keys(to)])) {
      const inFrom = Object.hasOwn(from, key);
      const inTo = Object.hasOwn(to, key);
      const where = childPath(path, key);
      if (inFrom && !inTo) changes.push({ path: where, change: 'removed', from: from[key] });
      else if (!inFrom && inTo) changes.push({ path: where, change: 'added', to: to[key] });
      else changes.push(...diffStructure(from[key], to[key], where));
    }
    return changes;
  }
  if (Array.isArray(from) && Array.isArray(to)) {
    const changes: StateChange[] = [];
    for (let index = 0; index < Math.max(from.length, to.length); index += 1) {
      const where = childPath(path, index);
      if (index >= to.length) changes.push({ path: where, change: 'removed', from: from[index] });
      else if (index >= from.length) changes.push({ path: where, change: 'added', to: to[index] });
      else changes.push(...diffStructure(from[index], to[index], where));
    }
    return changes;
  }
  return [{ path: path === '' ? '(state)' : path, change: 'changed', from, to }];
}
