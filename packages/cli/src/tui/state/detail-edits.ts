import { inputNames } from '../../core/document-view.js';
import { formatValue } from '../../core/format.js';
import { type BrowserState, done, type Edits, tabs, type Update } from './browser-state.js';
import { detailItemCount } from './detail-items.js';
import { type KeyPress, PAGE_ROWS } from './key-press.js';
import { answerPausedRun } from './run-requests.js';
import { editsFor, selectedCheckpoint } from './selection.js';
import { textBuffer } from './text-editor.js';

// Keys while the detail panel has the focus, and the edits of task outputs and inputs made there.

function openEditor(state: BrowserState): Update {
  const view = state.detail?.status === 'ready' ? state.detail.view : undefined;
  const checkpoint = selectedCheckpoint(state);
  if (!view || !checkpoint) return done(state);
  const edits = editsFor(state, checkpoint.id);
  if (state.tab === 'tasks') {
    const task = view.tasks[state.detailCursor];
    if (!task) return done(state);
    if (task.status !== 'completed') {
      return done({
        ...state,
        message: `task ${task.index + 1} is ${task.status}; only completed outputs can be edited`,
      });
    }
    const text = edits.outputs[task.index] ?? task.output ?? '';
    return done({
      ...state,
      editor: { target: { kind: 'output', index: task.index }, buffer: textBuffer(text) },
      message: undefined,
    });
  }
  if (state.tab === 'inputs') {
    const key = inputNames(view)[state.detailCursor];
    if (key === undefined) return done(state);
    const value = Object.hasOwn(edits.inputs, key) ? edits.inputs[key] : view.inputs[key];
    const text = value === undefined ? '' : typeof value === 'string' ? value : formatValue(value);
    return done({
      ...state,
      editor: { target: { kind: 'input', key }, buffer: textBuffer(text) },
      message: undefined,
    });
  }
  return done(state);
}

/** An edited input keeps the type of the value it replaces: JSON for non-strings when it parses. */
function inputValue(original: unknown, text: string): unknown {
  if (typeof original === 'string' || original === undefined) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Enter in an editor: keeps the edit (or the branch name, or sends the answer). */
export function saveEditor(state: BrowserState): Update {
  const editor = state.editor;
  const checkpoint = selectedCheckpoint(state);
  if (!editor) return done(state);
  if (editor.target.kind === 'answer') return answerPausedRun(state, editor.buffer.text);
  if (editor.target.kind === 'branch') {
    return done({
      ...state,
      editor: undefined,
      confirm: state.confirm && { ...state.confirm, branch: editor.buffer.text },
    });
  }
  const view = state.detail?.view;
  if (!checkpoint || !view) return done({ ...state, editor: undefined });
  const edits = editsFor(state, checkpoint.id);
  let next: Edits;
  let message: string;
  if (editor.target.kind === 'output') {
    const index = editor.target.index;
    const outputs = { ...edits.outputs };
    if (editor.buffer.text === view.tasks[index]?.output) delete outputs[index];
    else outputs[index] = editor.buffer.text;
    next = { ...edits, outputs };
    const later = view.tasks.length - index - 1;
    message =
      index in outputs
        ? `output of task ${index + 1} edited; resume (e) or fork (f) re-runs the ${later} task${later === 1 ? '' : 's'} after it`
        : `output of task ${index + 1} is back to the saved one`;
  } else {
    const key = editor.target.key;
    const inputs = { ...edits.inputs };
    const value = inputValue(view.inputs[key], editor.buffer.text);
    if (Object.hasOwn(view.inputs, key) && formatValue(value) === formatValue(view.inputs[key]))
      delete inputs[key];
    else Object.defineProperty(inputs, key, { value, enumerable: true, writable: true, configurable: true });
    next = { ...edits, inputs };
    message = Object.hasOwn(inputs, key)
      ? `input ${key} edited; tasks that have not run yet will use it`
      : `input ${key} unchanged`;
  }
  return done({ ...state, editor: undefined, edits: { ...state.edits, [checkpoint.id]: next }, message });
}

function revertItem(state: BrowserState): Update {
  const checkpoint = selectedCheckpoint(state);
  const view = state.detail?.view;
  if (!checkpoint || !view) return done(state);
  const edits = editsFor(state, checkpoint.id);
  if (state.tab === 'tasks') {
    const task = view.tasks[state.detailCursor];
    if (!task || !(task.index in edits.outputs)) return done(state);
    const outputs = { ...edits.outputs };
    delete outputs[task.index];
    return done({
      ...state,
      edits: { ...state.edits, [checkpoint.id]: { ...edits, outputs } },
      message: `task ${task.index + 1}: edit undone`,
    });
  }
  if (state.tab === 'inputs') {
    const key = inputNames(view)[state.detailCursor];
    if (key === undefined || !Object.hasOwn(edits.inputs, key)) return done(state);
    const inputs = { ...edits.inputs };
    delete inputs[key];
    return done({
      ...state,
      edits: { ...state.edits, [checkpoint.id]: { ...edits, inputs } },
      message: `input ${key}: edit undone`,
    });
  }
  return done(state);
}

/** A key pressed while the detail panel has the focus. */
export function detailKey(state: BrowserState, press: KeyPress): Update {
  const name = press.name;
  const count = detailItemCount(state);
  const moveTo = (index: number) =>
    done({ ...state, detailCursor: Math.max(0, Math.min(Math.max(0, count - 1), index)) });
  if (name === 'escape') return done({ ...state, focus: 'tree' });
  if (name === 'left' || press.input === 'h' || name === 'right' || press.input === 'l') {
    const step = name === 'left' || press.input === 'h' ? -1 : 1;
    const tab = tabs[(tabs.indexOf(state.tab) + step + tabs.length) % tabs.length]!;
    return done({ ...state, tab, detailCursor: 0, message: undefined });
  }
  if (name === 'up' || press.input === 'k') return moveTo(state.detailCursor - 1);
  if (name === 'down' || press.input === 'j') return moveTo(state.detailCursor + 1);
  if (name === 'pageup') return moveTo(state.detailCursor - PAGE_ROWS);
  if (name === 'pagedown') return moveTo(state.detailCursor + PAGE_ROWS);
  if (name === 'home' || press.input === 'g') return moveTo(0);
  if (name === 'end' || press.input === 'G') return moveTo(count - 1);
  if (name === 'return') return openEditor(state);
  if (press.input === 'u') return revertItem(state);
  return done(state);
}
