import type { StoredCheckpoint } from '@crewline/runtime-state';
import { inputNames } from '../../core/document-view.js';
import { formatValue } from '../../core/format.js';
import {
  type Action,
  type BrowserState,
  type Edits,
  type Effect,
  type RunMode,
  type RunRequest,
  tabs,
  type Update,
} from './browser-state.js';
import { detailItemCount } from './detail-items.js';
import type { KeyPress } from './key-press.js';
import { editText, textBuffer } from './text-editor.js';
import { ancestorKeys, buildTree, findCheckpointNode, visibleRows } from './tree.js';

/** How many progress lines a run keeps (older ones scroll away). */
export const RUN_LINES_KEPT = 500;
/** Rows a page up/down moves. */
const PAGE = 10;

const done = (state: BrowserState, effects: Effect[] = []): Update => ({ state, effects });

/** The selected checkpoint, when the selection is a checkpoint (not a group or branch). */
export function selectedCheckpoint(state: BrowserState): StoredCheckpoint | undefined {
  if (state.selectedKey === undefined) return undefined;
  return findCheckpointNode(state.tree, state.selectedKey)?.checkpoint;
}

/** The edits made to a checkpoint so far (empty when none). */
export function editsFor(state: BrowserState, checkpointId: string): Edits {
  return state.edits[checkpointId] ?? { outputs: {}, inputs: {} };
}

function select(state: BrowserState, key: string | undefined): Update {
  if (key === state.selectedKey) return done(state);
  const next: BrowserState = { ...state, selectedKey: key, detailCursor: 0, message: undefined };
  const node = key === undefined ? undefined : findCheckpointNode(state.tree, key);
  if (!node) return done({ ...next, detail: undefined });
  if (state.detail?.checkpointId === node.key && state.detail.status !== 'error') return done(next);
  return done({ ...next, detail: { checkpointId: node.key, status: 'loading' } }, [
    { type: 'load-detail', checkpointId: node.key, reference: node.checkpoint.reference },
  ]);
}

function newest(checkpoints: readonly StoredCheckpoint[]): StoredCheckpoint | undefined {
  let best: StoredCheckpoint | undefined;
  for (const checkpoint of checkpoints) {
    if (
      !best ||
      checkpoint.createdAt > best.createdAt ||
      (checkpoint.createdAt === best.createdAt && checkpoint.id > best.id)
    ) {
      best = checkpoint;
    }
  }
  return best;
}

function listLoaded(state: BrowserState, checkpoints: StoredCheckpoint[]): Update {
  const tree = buildTree(checkpoints);
  let next: BrowserState = { ...state, listStatus: 'ready', listError: undefined, checkpoints, tree };
  const rows = visibleRows(tree, next.collapsed);
  let target = state.selectedKey;
  // After a run the runtime names its last checkpoint by reference; listings know both.
  const wanted = checkpoints.find(
    (checkpoint) => checkpoint.id === state.selectAfterLoad || checkpoint.reference === state.selectAfterLoad,
  )?.id;
  if (wanted !== undefined) target = wanted;
  else if (target === undefined || !rows.some((row) => row.node.key === target)) {
    target = findCheckpointNode(tree, target ?? '') ? target : newest(checkpoints)?.id;
  }
  if (target !== undefined) {
    // Make the selection visible: expand everything above it.
    const collapsed = new Set(next.collapsed);
    for (const key of ancestorKeys(tree, target)) collapsed.delete(key);
    next = { ...next, collapsed };
  }
  // Checkpoints never change once written, so a detail already loaded for the target is kept.
  return select({ ...next, selectAfterLoad: undefined, selectedKey: undefined }, target);
}

function moveSelection(state: BrowserState, delta: number | 'first' | 'last'): Update {
  const rows = visibleRows(state.tree, state.collapsed);
  if (rows.length === 0) return done(state);
  const current = rows.findIndex((row) => row.node.key === state.selectedKey);
  let index: number;
  if (delta === 'first') index = 0;
  else if (delta === 'last') index = rows.length - 1;
  else index = Math.min(rows.length - 1, Math.max(0, Math.max(current, 0) + delta));
  return select(state, rows[index]!.node.key);
}

function setCollapsed(state: BrowserState, key: string, collapse: boolean): BrowserState {
  const collapsed = new Set(state.collapsed);
  if (collapse) collapsed.add(key);
  else collapsed.delete(key);
  return { ...state, collapsed };
}

function treeKey(state: BrowserState, press: KeyPress): Update {
  const rows = visibleRows(state.tree, state.collapsed);
  const row = rows.find((candidate) => candidate.node.key === state.selectedKey);
  const name = press.name;
  if (name === 'up' || press.input === 'k') return moveSelection(state, -1);
  if (name === 'down' || press.input === 'j') return moveSelection(state, 1);
  if (name === 'pageup') return moveSelection(state, -PAGE);
  if (name === 'pagedown') return moveSelection(state, PAGE);
  if (name === 'home' || press.input === 'g') return moveSelection(state, 'first');
  if (name === 'end' || press.input === 'G') return moveSelection(state, 'last');
  if (!row) return done(state);
  if (name === 'left' || press.input === 'h') {
    if (row.expandable && row.expanded) return done(setCollapsed(state, row.node.key, true));
    const parentKey = ancestorKeys(state.tree, row.node.key).at(-1);
    return parentKey === undefined ? done(state) : select(state, parentKey);
  }
  if (name === 'right' || press.input === 'l') {
    if (row.expandable && !row.expanded) return done(setCollapsed(state, row.node.key, false));
    if (row.node.type === 'checkpoint') return done({ ...state, focus: 'detail' });
    return moveSelection(state, 1);
  }
  if (name === 'return' || press.input === ' ') {
    if (row.node.type === 'checkpoint' && name === 'return') return done({ ...state, focus: 'detail' });
    if (row.expandable) return done(setCollapsed(state, row.node.key, row.expanded));
  }
  return done(state);
}

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

function saveEditor(state: BrowserState): Update {
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

function detailKey(state: BrowserState, press: KeyPress): Update {
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
  if (name === 'pageup') return moveTo(state.detailCursor - PAGE);
  if (name === 'pagedown') return moveTo(state.detailCursor + PAGE);
  if (name === 'home' || press.input === 'g') return moveTo(0);
  if (name === 'end' || press.input === 'G') return moveTo(count - 1);
  if (name === 'return') return openEditor(state);
  if (press.input === 'u') return revertItem(state);
  return done(state);
}

/** What `continueFromCheckpoint` gets for the selected checkpoint and its edits. */
function runRequest(
  state: BrowserState,
  mode: RunMode,
  checkpoint: StoredCheckpoint,
  branch: string,
): RunRequest {
  const edits = editsFor(state, checkpoint.id);
  const view = state.detail?.checkpointId === checkpoint.id ? state.detail.view : undefined;
  const request: RunRequest = { mode, checkpointId: checkpoint.id, reference: checkpoint.reference };
  if (mode === 'fork' && branch.trim() !== '') request.branch = branch.trim();
  if (Object.keys(edits.inputs).length > 0) request.inputs = { ...(view?.inputs ?? {}), ...edits.inputs };
  if (Object.keys(edits.outputs).length > 0) request.taskOutputs = { ...edits.outputs };
  return request;
}

function askToRun(state: BrowserState, mode: RunMode): Update {
  const checkpoint = selectedCheckpoint(state);
  if (!checkpoint) return done({ ...state, message: `select a checkpoint to ${mode} first` });
  const confirm = { mode, checkpointId: checkpoint.id, branch: '' };
  // Fork asks for a branch name straight away; Enter with it empty lets the runtime generate one.
  const editor =
    mode === 'fork' ? { target: { kind: 'branch' as const }, buffer: textBuffer('') } : undefined;
  return done({ ...state, confirm, editor, message: undefined });
}

function confirmKey(state: BrowserState, press: KeyPress): Update {
  const confirm = state.confirm!;
  if (press.name === 'escape' || press.input === 'n')
    return done({ ...state, confirm: undefined, message: `${confirm.mode} cancelled` });
  if (press.name === 'return' || press.input === 'y') {
    const checkpoint = findCheckpointNode(state.tree, confirm.checkpointId)?.checkpoint;
    if (!checkpoint)
      return done({ ...state, confirm: undefined, message: 'that checkpoint is gone; press r to refresh' });
    const request = runRequest(state, confirm.mode, checkpoint, confirm.branch);
    return done(
      {
        ...state,
        confirm: undefined,
        run: { mode: confirm.mode, checkpointId: checkpoint.id, status: 'running', lines: [] },
        message: undefined,
      },
      [{ type: 'start-run', request }],
    );
  }
  if (press.input === 'b' && confirm.mode === 'fork') {
    return done({ ...state, editor: { target: { kind: 'branch' }, buffer: textBuffer(confirm.branch) } });
  }
  return done(state);
}

/** Continues the paused flow of the finished run with the answer typed. */
function answerPausedRun(state: BrowserState, answer: string): Update {
  const checkpoint = state.run?.result?.pause?.checkpoint;
  if (!checkpoint) return done({ ...state, editor: undefined });
  return done(
    {
      ...state,
      editor: undefined,
      run: { mode: 'resume', checkpointId: checkpoint.id, status: 'running', lines: [] },
      message: undefined,
    },
    [
      {
        type: 'start-run',
        request: {
          mode: 'resume',
          checkpointId: checkpoint.id,
          reference: checkpoint.reference,
          humanInput: answer,
        },
      },
    ],
  );
}

function editorKey(state: BrowserState, press: KeyPress): Update {
  const editor = state.editor!;
  const outcome = editText(editor.buffer, press);
  if (outcome.type === 'edit') return done({ ...state, editor: { ...editor, buffer: outcome.buffer } });
  if (outcome.type === 'save') {
    const saved = saveEditor(state);
    // Enter in the fork's branch field also confirms the fork.
    if (editor.target.kind === 'branch' && saved.state.confirm)
      return confirmKey(saved.state, { input: '', name: 'return' });
    return saved;
  }
  if (outcome.type === 'cancel') {
    if (editor.target.kind === 'answer')
      return done({ ...state, editor: undefined, message: 'answer cancelled' });
    if (editor.target.kind === 'branch')
      return done({ ...state, editor: undefined, confirm: undefined, message: 'fork cancelled' });
    return done({ ...state, editor: undefined, message: 'edit cancelled' });
  }
  return done(state);
}

function runKey(state: BrowserState, press: KeyPress): Update {
  const run = state.run!;
  if (run.status === 'running') {
    if (press.ctrl && press.input === 'c')
      return done({ ...state, message: 'interrupting the run...' }, [{ type: 'interrupt-run' }]);
    return done({ ...state, message: 'a run is in progress; Ctrl+C interrupts it' });
  }
  if (state.editor) return editorKey(state, press);
  if (press.input === 'a' && run.result?.pause?.checkpoint)
    return done({
      ...state,
      editor: { target: { kind: 'answer' }, buffer: textBuffer('') },
      message: undefined,
    });
  // Any key closes a finished run's panel; the list is reloaded to show the new checkpoints.
  return done(
    {
      ...state,
      run: undefined,
      message: undefined,
      selectAfterLoad: run.result?.lastCheckpoint,
      listStatus: 'loading',
    },
    [{ type: 'load-list' }],
  );
}

/**
 * Characters that arrive in one chunk (a held key, a paste, a slow SSH link) are separate key
 * presses: `jjj` moves three rows. Once one of them opens an editor, the rest of the chunk is text
 * typed into it, kept whole (a pasted output stays one edit).
 */
function keyChunk(state: BrowserState, press: KeyPress): Update {
  const characters = Array.from(press.input);
  if (press.name !== undefined || press.ctrl || characters.length < 2 || state.editor)
    return keyPress(state, press);
  let current = state;
  const effects: Effect[] = [];
  for (const [index, character] of characters.entries()) {
    const rest = current.editor ? characters.slice(index).join('') : character;
    const next = keyPress(current, { input: rest });
    current = next.state;
    effects.push(...next.effects);
    if (rest !== character || effects.some((effect) => effect.type === 'exit')) break;
  }
  return done(current, effects);
}

function keyPress(state: BrowserState, press: KeyPress): Update {
  if (state.run) return runKey(state, press);
  if (press.ctrl && press.input === 'c') return done(state, [{ type: 'exit' }]);
  if (state.showHelp) return done({ ...state, showHelp: false });
  if (state.editor) return editorKey(state, press);
  if (state.confirm) return confirmKey(state, press);
  if (press.input === 'q') return done(state, [{ type: 'exit' }]);
  if (press.input === '?') return done({ ...state, showHelp: true });
  if (press.input === 'r')
    return done({ ...state, listStatus: 'loading', message: 'refreshing...' }, [{ type: 'load-list' }]);
  if (press.input === 'e') return askToRun(state, 'resume');
  if (press.input === 'f') return askToRun(state, 'fork');
  if (press.name === 'tab') {
    if (state.focus === 'tree' && !selectedCheckpoint(state)) return done(state);
    return done({ ...state, focus: state.focus === 'tree' ? 'detail' : 'tree' });
  }
  if (press.input >= '1' && press.input <= '3' && press.input.length === 1) {
    return done({ ...state, tab: tabs[Number(press.input) - 1]!, detailCursor: 0, focus: 'detail' });
  }
  return state.focus === 'tree' ? treeKey(state, press) : detailKey(state, press);
}

/** The browser's state machine: the next state, and the work to do, for one action. Pure. */
export function update(state: BrowserState, action: Action): Update {
  switch (action.type) {
    case 'key':
      return keyChunk(state, action.key);
    case 'list-loaded':
      return listLoaded(
        { ...state, message: state.message === 'refreshing...' ? undefined : state.message },
        action.checkpoints,
      );
    case 'list-failed':
      return done({ ...state, listStatus: 'error', listError: action.error });
    case 'detail-loaded':
      if (state.detail?.checkpointId !== action.checkpointId) return done(state);
      return done({
        ...state,
        detail: { checkpointId: action.checkpointId, status: 'ready', view: action.view },
      });
    case 'detail-failed':
      if (state.detail?.checkpointId !== action.checkpointId) return done(state);
      return done({
        ...state,
        detail: { checkpointId: action.checkpointId, status: 'error', error: action.error },
      });
    case 'run-progress': {
      if (!state.run) return done(state);
      const lines = [...state.run.lines, action.line].slice(-RUN_LINES_KEPT);
      return done({ ...state, run: { ...state.run, lines } });
    }
    case 'run-finished':
      if (!state.run) return done(state);
      // The edits were consumed by the run; the new branch starts from what it produced.
      return done({
        ...state,
        run: { ...state.run, status: 'finished', result: action.result },
        edits: Object.fromEntries(
          Object.entries(state.edits).filter(([id]) => id !== state.run?.checkpointId),
        ),
      });
    case 'run-failed':
      if (!state.run) return done(state);
      return done({ ...state, run: { ...state.run, status: 'failed', error: action.error } });
  }
}
