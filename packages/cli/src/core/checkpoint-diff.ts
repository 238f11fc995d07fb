import type { DocumentView, TaskStatus } from './document-view.js';
import { formatDelta, formatTime, formatValue, oneLine, truncate } from './format.js';

export interface FieldChange {
  field: 'time' | 'branch' | 'trigger' | 'events' | 'parent' | 'lineage';
  from: string | number | null;
  to: string | number | null;
}

export interface InputChange {
  key: string;
  change: 'added' | 'removed' | 'changed';
  from?: unknown;
  to?: unknown;
}

export interface TaskChange {
  index: number;
  description: string;
  fromStatus?: TaskStatus;
  toStatus?: TaskStatus;
  fromOutput?: string;
  toOutput?: string;
  outputChanged: boolean;
}

/** What differs between two checkpoints, A before B. */
export interface CheckpointDiff {
  from: string;
  to: string;
  fields: FieldChange[];
  inputs: InputChange[];
  tasks: TaskChange[];
}

function sameValue(a: unknown, b: unknown): boolean {
  return formatValue(a) === formatValue(b);
}

/** Compares two checkpoints: metadata, kickoff inputs, each task's status and output (by flat index). */
export function diffCheckpoints(a: DocumentView, b: DocumentView): CheckpointDiff {
  const ma = a.document.metadata;
  const mb = b.document.metadata;
  const fields: FieldChange[] = [];
  const compare = (field: FieldChange['field'], from: string | number | null, to: string | number | null) => {
    if (from !== to) fields.push({ field, from, to });
  };
  compare('time', ma.createdAt, mb.createdAt);
  compare('branch', ma.branch, mb.branch);
  compare('trigger', ma.trigger, mb.trigger);
  compare('events', ma.eventCount, mb.eventCount);
  compare('parent', ma.parentId, mb.parentId);
  compare('lineage', ma.lineageId, mb.lineageId);
  const inputs: InputChange[] = [];
  for (const key of new Set([...Object.keys(a.inputs), ...Object.keys(b.inputs)])) {
    const inA = Object.hasOwn(a.inputs, key);
    const inB = Object.hasOwn(b.inputs, key);
    if (inA && !inB) inputs.push({ key, change: 'removed', from: a.inputs[key] });
    else if (!inA && inB) inputs.push({ key, change: 'added', to: b.inputs[key] });
    else if (!sameValue(a.inputs[key], b.inputs[key]))
      inputs.push({ key, change: 'changed', from: a.inputs[key], to: b.inputs[key] });
  }
  const tasks: TaskChange[] = [];
  const count = Math.max(a.tasks.length, b.tasks.length);
  for (let index = 0; index < count; index += 1) {
    const ta = a.tasks[index];
    const tb = b.tasks[index];
    const outputChanged = ta?.output !== tb?.output;
    if (ta?.status === tb?.status && !outputChanged) continue;
    tasks.push({
      index,
      description: (tb ?? ta)!.name ?? (tb ?? ta)!.description,
      fromStatus: ta?.status,
      toStatus: tb?.status,
      fromOutput: ta?.output,
      toOutput: tb?.output,
      outputChanged,
    });
  }
  return { from: ma.id, to: mb.id, fields, inputs, tasks };
}

function formatField(change: FieldChange): string {
  if (change.field === 'time' && typeof change.from === 'string' && typeof change.to === 'string') {
    return `${formatTime(change.from)} -> ${formatTime(change.to)} (${formatDelta(Date.parse(change.to) - Date.parse(change.from))})`;
  }
  if (change.field === 'events' && typeof change.from === 'number' && typeof change.to === 'number') {
    const delta = change.to - change.from;
    return `${change.from} -> ${change.to} (${delta >= 0 ? '+' : ''}${delta})`;
  }
  return `${change.from ?? '(none)'} -> ${change.to ?? '(none)'}`;
}

/** The diff as lines a person reads: `---`/`+++` headers, changed fields, inputs, tasks. */
export function formatDiff(diff: CheckpointDiff, width = 100): string[] {
  const lines = [`--- ${diff.from}`, `+++ ${diff.to}`];
  for (const change of diff.fields) {
    lines.push(
      `${`${change.field[0]!.toUpperCase()}${change.field.slice(1)}:`.padEnd(9)}${formatField(change)}`,
    );
  }
  if (diff.inputs.length > 0) {
    lines.push('Inputs:');
    for (const input of diff.inputs) {
      const text =
        input.change === 'added'
          ? `  + ${input.key} = ${formatValue(input.to)}`
          : input.change === 'removed'
            ? `  - ${input.key} = ${formatValue(input.from)}`
            : `  ~ ${input.key}: ${formatValue(input.from)} -> ${formatValue(input.to)}`;
      lines.push(truncate(text, width));
    }
  }
  if (diff.tasks.length > 0) {
    lines.push('Tasks:');
    for (const task of diff.tasks) {
      const status = `${task.fromStatus ?? '(absent)'} -> ${task.toStatus ?? '(absent)'}`;
      lines.push(
        truncate(
          `  ${task.index + 1}. ${task.fromStatus === task.toStatus ? `${task.toStatus}, output changed` : status}  ${oneLine(task.description)}`,
          width,
        ),
      );
      if (task.outputChanged) {
        if (task.fromOutput !== undefined) lines.push(truncate(`     - ${oneLine(task.fromOutput)}`, width));
        if (task.toOutput !== undefined) lines.push(truncate(`     + ${oneLine(task.toOutput)}`, width));
      }
    }
  }
  if (diff.inputs.length === 0 && diff.tasks.length === 0) lines.push('Inputs and tasks are the same.');
  return lines;
}
