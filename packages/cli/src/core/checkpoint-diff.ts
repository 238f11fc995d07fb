import { isDeepStrictEqual } from 'node:util';
import { diffLines } from 'diff';
import { type DocumentView, primaryEntity, type TaskStatus } from './document-view.js';
import { formatDelta, formatTime, formatValue, oneLine, truncate } from './format.js';
import { diffStructure, type StateChange } from './state-diff.js';

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
  /** The task's name, else its description as the run used it (`{placeholders}` filled). */
  description: string;
  /** Its description as written, where it differs (no name, and placeholders filled). */
  descriptionTemplate?: string;
  fromStatus?: TaskStatus;
  toStatus?: TaskStatus;
  fromOutput?: string;
  toOutput?: string;
  outputChanged: boolean;
}

/**
 * A task change as `--json` (and the explorer's `/api/diff`) gives it: `description` keeps its
 * meaning of schema version 1 (the name, else the description as written, with its
 * `{placeholders}`), and `descriptionAsRun` is what the text shows.
 */
export function taskChangeJson({ description, descriptionTemplate, ...task }: TaskChange) {
  return { ...task, description: descriptionTemplate ?? description, descriptionAsRun: description };
}

/** What differs between two checkpoints, A before B. */
export interface CheckpointDiff {
  from: string;
  to: string;
  fields: FieldChange[];
  inputs: InputChange[];
  tasks: TaskChange[];
  /** A flow's state changes, path by path (empty when neither checkpoint is of a flow). */
  state: StateChange[];
  /** A flow's completed methods, in order, in A and in B; null when neither checkpoint is of a flow. */
  completedMethods: { from: string[]; to: string[] } | null;
}

/** Equal as data: the order of an object's keys is no change (`{lang, year}` is `{year, lang}`). */
function sameValue(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a, b);
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
    const shown = (tb ?? ta)!;
    tasks.push({
      index,
      description: shown.name ?? shown.description,
      ...(shown.name === undefined && shown.descriptionTemplate !== undefined
        ? { descriptionTemplate: shown.descriptionTemplate }
        : {}),
      fromStatus: ta?.status,
      toStatus: tb?.status,
      fromOutput: ta?.output,
      toOutput: tb?.output,
      outputChanged,
    });
  }
  // A flow's methods run outside any task: its progress is in its state and completed methods.
  const flowA = a.entities.find((entity) => entity.kind === 'flow');
  const flowB = b.entities.find((entity) => entity.kind === 'flow');
  const stateA = flowA?.state ?? primaryEntity(a.entities)?.state;
  const stateB = flowB?.state ?? primaryEntity(b.entities)?.state;
  return {
    from: ma.id,
    to: mb.id,
    fields,
    inputs,
    tasks,
    state: stateA === undefined && stateB === undefined ? [] : diffStructure(stateA ?? {}, stateB ?? {}),
    completedMethods:
      flowA === undefined && flowB === undefined
        ? null
        : { from: flowA?.completedMethods ?? [], to: flowB?.completedMethods ?? [] },
  };
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

export interface FormatDiffOptions {
  /** Every line of changed outputs, none cut to the width. Default false: changed lines with context. */
  full?: boolean;
}

/** Unchanged lines shown around each changed one. */
const CONTEXT_LINES = 2;
/** How far into a line a cut starts before the first character that differs. */
const LEAD_IN = 12;
const OUTPUT_INDENT = '     ';

interface OutputRow {
  mark: ' ' | '-' | '+';
  text: string;
  /** Code points at the start this line shares with the line it replaces (or replaced). */
  shared: number;
}

function textLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 1 && lines.at(-1) === '') lines.pop();
  return lines;
}

function sharedPrefix(a: string, b: string): number {
  const left = Array.from(a);
  const right = Array.from(b);
  let index = 0;
  while (index < left.length && index < right.length && left[index] === right[index]) index += 1;
  return index;
}

/** The rows of a line diff of two outputs; a removed line and the added line in its place know their shared start. */
function outputRows(from: string | undefined, to: string | undefined): OutputRow[] {
  const rows: OutputRow[] = [];
  // Both end in a line break, so a last line followed by more text is not a changed line.
  const ended = (text: string | undefined) =>
    text === undefined || text.endsWith('\n') ? (text ?? '') : `${text}\n`;
  const parts = diffLines(ended(from), ended(to));
  for (let index = 0; index < parts.length; index += 1) {
    const part = parts[index]!;
    if (part.removed && parts[index + 1]?.added) {
      const removed = textLines(part.value);
      const added = textLines(parts[index + 1]!.value);
      const shared = removed.map((line, at) =>
        added[at] === undefined ? 0 : sharedPrefix(line, added[at]!),
      );
      for (const [at, text] of removed.entries()) rows.push({ mark: '-', text, shared: shared[at]! });
      for (const [at, text] of added.entries()) rows.push({ mark: '+', text, shared: shared[at] ?? 0 });
      index += 1;
      continue;
    }
    const mark = part.added ? '+' : part.removed ? '-' : ' ';
    // An output that is absent on one side (a task added or removed) has no lines there.
    if (part.value === '' || (mark === '-' && from === undefined) || (mark === '+' && to === undefined))
      continue;
    for (const text of textLines(part.value)) rows.push({ mark, text, shared: 0 });
  }
  return rows;
}

/** A line cut to `room` columns; when what differs lies beyond the cut, the cut starts just before it. */
function excerpt(text: string, shared: number, room: number): string {
  const characters = Array.from(text);
  if (characters.length <= room) return text;
  const start = shared > room - LEAD_IN * 2 ? shared - LEAD_IN : 0;
  return start === 0 ? truncate(text, room) : truncate(`...${characters.slice(start).join('')}`, room);
}

/**
 * A changed output as a line diff, indented under its task. By default the changed lines with
 * {@link CONTEXT_LINES} of context, each cut to the width around where it differs; `full` shows
 * every line whole. Returns whether anything was left out or cut.
 */
function outputDiff(
  from: string | undefined,
  to: string | undefined,
  width: number,
  full: boolean,
): { lines: string[]; shortened: boolean } {
  const rows = outputRows(from, to);
  if (full) return { lines: rows.map((row) => `${OUTPUT_INDENT}${row.mark} ${row.text}`), shortened: false };
  const room = Math.max(20, width - OUTPUT_INDENT.length - 2);
  const shown = rows.map(() => false);
  rows.forEach((row, index) => {
    if (row.mark === ' ') return;
    for (let near = index - CONTEXT_LINES; near <= index + CONTEXT_LINES; near += 1)
      if (near >= 0 && near < rows.length) shown[near] = true;
  });
  const lines: string[] = [];
  let shortened = false;
  rows.forEach((row, index) => {
    if (!shown[index]) {
      shortened = true;
      if (index === 0 || shown[index - 1]) lines.push(`${OUTPUT_INDENT}  ...`);
      return;
    }
    const text = excerpt(row.text, row.shared, room);
    if (text !== row.text) shortened = true;
    lines.push(`${OUTPUT_INDENT}${row.mark} ${text}`);
  });
  return { lines, shortened };
}

/**
 * The diff as lines a person reads: `---`/`+++` headers, changed fields, inputs, tasks; a changed
 * output as a line diff (see `full` in {@link FormatDiffOptions}).
 */
export function formatDiff(diff: CheckpointDiff, width = 100, options: FormatDiffOptions = {}): string[] {
  const full = options.full === true;
  const fitWidth = (text: string) => (full ? text : truncate(text, width));
  let shortened = false;
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
      if (fitWidth(text) !== text) shortened = true;
      lines.push(fitWidth(text));
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
        const output = outputDiff(task.fromOutput, task.toOutput, width, full);
        lines.push(...output.lines);
        if (output.shortened) shortened = true;
      }
    }
  }
  const methodsChanged =
    diff.completedMethods !== null && !sameValue(diff.completedMethods.from, diff.completedMethods.to);
  if (diff.completedMethods !== null && methodsChanged) {
    const methods = (names: string[]) => (names.length === 0 ? '(none)' : names.join(', '));
    lines.push(
      fitWidth(
        `Completed methods: ${methods(diff.completedMethods.from)} -> ${methods(diff.completedMethods.to)}`,
      ),
    );
  }
  if (diff.state.length > 0) {
    lines.push('State:');
    for (const change of diff.state) {
      const text =
        change.change === 'added'
          ? `  + ${change.path} = ${formatValue(change.to)}`
          : change.change === 'removed'
            ? `  - ${change.path} = ${formatValue(change.from)}`
            : `  ~ ${change.path}: ${formatValue(change.from)} -> ${formatValue(change.to)}`;
      if (fitWidth(text) !== text) shortened = true;
      lines.push(fitWidth(text));
    }
  }
  if (diff.inputs.length === 0 && diff.tasks.length === 0 && diff.state.length === 0 && !methodsChanged) {
    lines.push(
      diff.completedMethods === null
        ? 'Inputs and tasks are the same.'
        : 'Inputs, tasks, completed methods and state are the same.',
    );
  }
  if (shortened) lines.push('(--full shows whole outputs and values)');
  return lines;
}
