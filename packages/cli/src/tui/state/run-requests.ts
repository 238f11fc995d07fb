import type { StoredCheckpoint } from '@crewline/runtime-state';
import { planContinuation } from '../../core/continuation-plan.js';
import { continuedInputs } from '../../core/continued-inputs.js';
import {
  type BrowserState,
  type ConfirmState,
  done,
  type Effect,
  type ResumePlanViews,
  type RunMode,
  type RunRequest,
  type Update,
} from './browser-state.js';
import { confirmScrollLimit } from './confirm-panel.js';
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
  // Without the checkpoint's detail (not loaded, or another one's), the edits alone: a flow merges
  // them into its state, a restored crew over its saved inputs, as continuedInputs would send them.
  const inputs = view
    ? continuedInputs(view, edits.inputs)
    : Object.keys(edits.inputs).length > 0
      ? { ...edits.inputs }
      : undefined;
  if (inputs) request.inputs = inputs;
  if (Object.keys(edits.outputs).length > 0) request.taskOutputs = { ...edits.outputs };
  return request;
}

/**
 * Asks to confirm a resume or fork of the selected checkpoint (a fork asks for its branch first). A
 * resume also has its plan worked out (`load-plan`): when its run went past the checkpoint (the host
 * asks the store for the run's latest, as the runtime does), the confirmation says what the runtime
 * will do, a new branch and the tasks done since paid for again.
 */
export function askToRun(state: BrowserState, mode: RunMode): Update {
  const checkpoint = selectedCheckpoint(state);
  if (!checkpoint) return done({ ...state, message: `select a checkpoint to ${mode} first` });
  const confirm: ConfirmState = { mode, checkpointId: checkpoint.id, branch: '' };
  const effects: Effect[] = [];
  if (mode === 'resume') {
    confirm.plan = { status: 'checking' };
    effects.push({ type: 'load-plan', checkpointId: checkpoint.id, reference: checkpoint.reference });
  }
  // Fork asks for a branch name straight away; Enter with it empty lets the runtime generate one.
  const editor =
    mode === 'fork' ? { target: { kind: 'branch' as const }, buffer: textBuffer('') } : undefined;
  return done({ ...state, confirm, editor, message: undefined }, effects);
}

/**
 * The plan of a resume waiting for confirmation was looked up: when its run went past the checkpoint,
 * the confirmation gets what the plan (the explorer's and the command line's, `planContinuation`, with
 * the browser's edits) says of resuming an older checkpoint. Ignored once that confirmation is gone.
 */
export function resumePlanned(
  state: BrowserState,
  checkpointId: string,
  found: ResumePlanViews | { error: string },
): Update {
  const confirm = state.confirm;
  if (confirm?.checkpointId !== checkpointId || confirm.plan?.status !== 'checking') return done(state);
  let note: string | undefined;
  if ('error' in found) {
    note = `could not read the checkpoints of this run to say what a resume runs again: ${found.error}`;
  } else if (found.newerHead !== undefined) {
    const edits = editsFor(state, checkpointId);
    // The edits as `--set-output` takes them (N=text, N from 1) and the inputs as runRequest sends them.
    const outputs = Object.entries(edits.outputs).map(([index, text]) => `${Number(index) + 1}=${text}`);
    const inputs = continuedInputs(found.view, edits.inputs);
    try {
      note = planContinuation(found.view, outputs, inputs, { newerHead: found.newerHead }).olderCheckpoint
        ?.note;
    } catch (error) {
      note = `could not plan the resume: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  return done({
    ...state,
    confirm: { ...confirm, plan: { status: 'ready', ...(note !== undefined ? { note } : {}) } },
    message: state.message === PLAN_PENDING ? undefined : state.message,
  });
}

/**
 * The status line once a resume or fork is cancelled: where the keys go now when that is the detail
 * panel (e pressed there), where j/k on the Overview tab seemed to do nothing.
 */
export function cancelledMessage(state: BrowserState, mode: RunMode): string {
  return state.focus === 'detail'
    ? `${mode} cancelled; keys go to the detail panel, tab to the tree`
    : `${mode} cancelled`;
}

/** What the status line says of Enter or `y` pressed before the resume's plan is shown. */
export const PLAN_PENDING = 'not yet: confirm once the plan below is shown (esc cancels)';

/** A key pressed while a resume or fork waits for confirmation. */
export function confirmKey(state: BrowserState, press: KeyPress): Update {
  const confirm = state.confirm!;
  if (press.name === 'escape' || press.input === 'n')
    return done({ ...state, confirm: undefined, message: cancelledMessage(state, confirm.mode) });
  if (press.name === 'return' || press.input === 'y') {
    // The plan is worked out after `e` (a store read): a `y` typed before it shows would start a paid
    // run the user has not seen the cost of (the older checkpoint's warning). Ignored, said why.
    if (confirm.plan?.status === 'checking') return done({ ...state, message: PLAN_PENDING });
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
  // A confirmation taller than the screen scrolls (see confirmPanel); its key line stays in view.
  const step =
    press.name === 'down' || press.input === 'j' ? 1 : press.name === 'up' || press.input === 'k' ? -1 : 0;
  if (step !== 0) {
    const scroll = Math.max(0, Math.min(confirmScrollLimit(state), (confirm.scroll ?? 0) + step));
    return done({ ...state, confirm: { ...confirm, scroll } });
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
