import { diffLines } from 'diff';
import {
  type CheckpointDiff,
  diffCheckpoints,
  type FieldChange,
  type InputChange,
  taskChangeJson,
} from '../core/checkpoint-diff.js';
import { type DocumentView, primaryEntity } from '../core/document-view.js';

/** One row of a side-by-side diff: a line of A, a line of B, or both. */
export interface SideBySideRow {
  left?: string;
  right?: string;
  /** `same` both sides equal; `changed` both present and different; `removed` A only; `added` B only. */
  kind: 'same' | 'changed' | 'removed' | 'added';
}

/** A change at one place inside the flow state. */
export interface StateChange {
  /** Where, as a path: `plan.steps[2]`, `topic`. */
  path: string;
  change: 'added' | 'removed' | 'changed';
  from?: unknown;
  to?: unknown;
}

export interface InputComparison extends InputChange {
  rows: SideBySideRow[];
}

export type TaskComparison = ReturnType<typeof taskChangeJson> & { rows: SideBySideRow[] };

/** What the page shows for two checkpoints: the CLI `diff` plus line diffs and the flow state's changes. */
export interface CheckpointComparison {
  from: string;
  to: string;
  fields: FieldChange[];
  inputs: InputComparison[];
  tasks: TaskComparison[];
  /** Flow state changes, path by path (empty when neither checkpoint is of a flow). */
  state: StateChange[];
}

function lines(text: string): string[] {
  const parts = text.split('\n');
  if (parts.length > 1 && parts.at(-1) === '') parts.pop();
  return parts;
}

/** Two texts as aligned rows: equal lines side by side, a removed block paired with the added block after it. */
export function sideBySide(from: string | undefined, to: string | undefined): SideBySideRow[] {
  const rows: SideBySideRow[] = [];
  // Both end in a line break, so a last line followed by more text is not a changed line.
  const ended = (text: string | undefined) =>
    text === undefined || text === '' || text.endsWith('\n') ? (text ?? '') : `${text}\n`;
  const parts = diffLines(ended(from), ended(to));
  for (let index = 0; index < parts.length; index += 1) {
    const part = parts[index]!;
    if (!part.added && !part.removed) {
      for (const line of lines(part.value)) rows.push({ left: line, right: line, kind: 'same' });
      continue;
    }
    if (part.removed) {
      const removed = lines(part.value);
      const next = parts[index + 1];
      const added = next?.added ? lines(next.value) : [];
      if (next?.added) index += 1;
      for (let line = 0; line < Math.max(removed.length, added.length); line += 1) {
        const left = removed[line];
        const right = added[line];
        rows.push({
          ...(left !== undefined ? { left } : {}),
          ...(right !== undefined ? { right } : {}),
          kind:
            left !== undefined && right !== undefined ? 'changed' : left !== undefined ? 'removed' : 'added',
        });
      }
      continue;
    }
    for (const line of lines(part.value)) rows.push({ right: line, kind: 'added' });
  }
  return rows;
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

function valueText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/**
 * Compares two checkpoints for the page: the `crewline checkpoint diff` comparison (fields, inputs,
 * tasks, A before B) with each changed input and task output as side-by-side line rows, and the
 * flow state compared structurally.
 */
export function compareCheckpoints(a: DocumentView, b: DocumentView): CheckpointComparison {
  const diff: CheckpointDiff = diffCheckpoints(a, b);
  const stateA = primaryEntity(a.entities)?.state;
  const stateB = primaryEntity(b.entities)?.state;
  return {
    from: diff.from,
    to: diff.to,
    fields: diff.fields,
    inputs: diff.inputs.map((input) => ({
      ...input,
      rows: sideBySide(valueText(input.from), valueText(input.to)),
    })),
    tasks: diff.tasks.map((task) => ({
      ...taskChangeJson(task),
      rows: task.outputChanged ? sideBySide(task.fromOutput, task.toOutput) : [],
    })),
    state: stateA === undefined && stateB === undefined ? [] : diffStructure(stateA ?? {}, stateB ?? {}),
  };
}
