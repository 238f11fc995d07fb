import type { StoredCheckpoint } from '@crewline/runtime-state';
import { type BrowserState, done, type RunMode, type RunRequest, type Update } from './browser-state.js';
import type { KeyPress } from './key-press.js';
import { editsFor, selectedCheckpoint } from './selection.js';
import { textBuffer } from './text-editor.js';
import { findCheckpointNode } from './tree.js';

// Starting a resume or a fork of the selected checkpoint (asked, confirmed, then the \`start-run\`
// effect), and continuing a paused run with the answer typed.

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

/** Asks to confirm a resume or fork of the selected checkpoint (a fork asks for its branch first). */
export function askToRun(state: BrowserState, mode: RunMode): Update {
  const checkpoint = selectedCheckpoint(state);
  if (!checkpoint) return done({ ...state, message: `select a checkpoint to ${mode} first` });
  const confirm = { mode, checkpointId: checkpoint.id, branch: '' };
  // Fork asks for a branch name straight away; Enter with it empty lets the runtime generate one.
  const editor =
    mode === 'fork' ? { target: { kind: 'branch' as const }, buffer: textBuffer('') } : undefined;
  return done({ ...state, confirm, editor, message: undefined });
}

/** A key pressed while a resume or fork waits for confirmation. */
export function confirmKey(state: BrowserState, press: KeyPress): Update {
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
export function answerPausedRun(state: BrowserState, answer: string): Update {
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
