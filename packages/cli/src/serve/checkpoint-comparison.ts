import { diffLines } from 'diff';
import {
  type CheckpointDiff,
  diffCheckpoints,
  type FieldChange,
  type InputChange,
  taskChangeJson,
} from '../core/checkpoint-diff.js';
import type { DocumentView } from '../core/document-view.js';
import type { StateChange } from '../core/state-diff.js';

/** One row of a side-by-side diff: a line of A, a line of B, or both. */
export interface SideBySideRow {
  left?: string;
  right?: string;
  /** `same` both sides equal; `changed` both present and different; `removed` A only; `added` B only. */
  kind: 'same' | 'changed' | 'removed' | 'added';
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
  /** A flow's completed methods in A and in B, when they differ (else null). */
  completedMethods: CheckpointDiff['completedMethods'];
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

function valueText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/**
 * Compares two checkpoints for the page: the `crewline checkpoint diff` comparison (fields, inputs,
 * tasks, a flow's state and completed methods, A before B) with each changed input and task output
 * as side-by-side line rows.
 */
export function compareCheckpoints(a: DocumentView, b: DocumentView): CheckpointComparison {
  const diff: CheckpointDiff = diffCheckpoints(a, b);
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
    state: diff.state,
    completedMethods: diff.completedMethods,
  };
}
