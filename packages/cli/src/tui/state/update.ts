import { type Action, type BrowserState, done, type Effect, tabs, type Update } from './browser-state.js';
import { confirmScrollLimit } from './confirm-panel.js';
import { detailKey, saveEditor } from './detail-edits.js';
import type { KeyPress } from './key-press.js';
import { askToRun, cancelledMessage, confirmKey, resumePlanned } from './run-requests.js';
import { listLoaded, selectedCheckpoint } from './selection.js';
import { editText, pasteText, textBuffer } from './text-editor.js';
import { treeKey } from './tree-keys.js';

/** How many progress lines a run keeps (older ones scroll away). */
export const RUN_LINES_KEPT = 500;

/**
 * A key in the open editor. `confirms`: false when the read that holds this key also opened the
 * editor: `fwhat-if` and Enter read together name the branch, the fork waits for Enter; `approve` and
 * Enter read together on a paused run's panel type the answer, which waits for Enter (sent, it
 * continues the flow: a paid run).
 */
function editorKey(state: BrowserState, press: KeyPress, confirms: boolean): Update {
  const editor = state.editor!;
  const outcome = editText(editor.buffer, press);
  if (outcome.type === 'edit') return done({ ...state, editor: { ...editor, buffer: outcome.buffer } });
  if (outcome.type === 'save') {
    if (editor.target.kind === 'answer' && !confirms)
      return done({
        ...state,
        editor: { ...editor, buffer: outcome.buffer },
        message: 'enter read with other keys (maybe pasted text) does not send the answer: press it alone',
      });
    const saved = saveEditor({ ...state, editor: { ...editor, buffer: outcome.buffer } });
    // Saved by a carriage return read with text: maybe a line break of a paste (see pasteMayGoOn),
    // unless the terminal marks its pastes (then it was typed).
    if (press.name !== 'return' && !state.bracketsPastes)
      saved.state = { ...saved.state, pasteMayGoOn: true };
    // Enter in the fork's branch field also confirms the fork.
    if (editor.target.kind === 'branch' && saved.state.confirm && confirms)
      return confirmKey(saved.state, { input: '', name: 'return' });
    return saved;
  }
  if (outcome.type === 'cancel') {
    if (editor.target.kind === 'answer')
      return done({ ...state, editor: undefined, message: 'answer cancelled' });
    if (editor.target.kind === 'branch')
      return done({
        ...state,
        editor: undefined,
        confirm: undefined,
        message: cancelledMessage(state, 'fork'),
      });
    return done({ ...state, editor: undefined, message: 'edit cancelled' });
  }
  return done(state);
}

function runKey(state: BrowserState, press: KeyPress, confirms: boolean): Update {
  const run = state.run!;
  if (run.status === 'running') {
    if (press.ctrl && press.input === 'c')
      return done({ ...state, message: 'interrupting the run...' }, [{ type: 'interrupt-run' }]);
    return done({ ...state, message: 'a run is in progress; Ctrl+C interrupts it' });
  }
  if (state.editor) return editorKey(state, press, confirms);
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

/** What the status line says of pasted text dropped outside an editor. */
const PASTE_DROPPED = 'pasted text dropped: paste into an editor (enter on a task output or an input)';

/**
 * A key read between the terminal's bracketed-paste marks: text for the open editor (a carriage
 * return a line break, never Enter), dropped elsewhere (as keys it could quit or start a run). Ctrl+C
 * and keys a paste does not hold (arrows, Esc) end it: a terminal that lost the end mark must not
 * leave the browser deaf.
 */
function pastedKey(state: BrowserState, press: KeyPress): Update {
  const text = press.name === undefined || ['return', 'newline', 'tab'].includes(press.name);
  if ((press.ctrl && press.input === 'c') || !text) return keyChunk({ ...state, pasting: false }, press);
  const editor = state.editor;
  if (editor && state.run?.status !== 'running')
    return done({ ...state, editor: { ...editor, buffer: pasteText(editor.buffer, press) } });
  return done({ ...state, message: PASTE_DROPPED });
}

/** True for a press that is Enter or `y`: what confirms a resume or fork. */
const confirming = (press: KeyPress) => press.name === 'return' || press.input === 'y';

/**
 * Why a key of a read of several was not taken (the status line says it: the key looked lost), or
 * undefined when it is taken. Such a read may be (the end of) a paste cut into reads: it does not
 * confirm a resume or fork it opened, or one an earlier read of several keys opened before a key came
 * alone (`confirms` false: a paid run), nor, after an editor saved on a line read with text
 * (`cautious`, see pasteMayGoOn), quit or undo an edit (the edits are in memory only).
 */
function heldKey(
  state: BrowserState,
  single: KeyPress,
  confirms: boolean,
  cautious: boolean,
): string | undefined {
  if (state.editor) return undefined;
  if (state.confirm !== undefined && !confirms && confirming(single)) {
    const name = single.name === 'return' ? 'enter' : 'y';
    return `${name} read with other keys (maybe pasted text) does not ${state.confirm.mode}: press it alone`;
  }
  if (!cautious || state.confirm !== undefined || state.run !== undefined) return undefined;
  if (single.input === 'q')
    return 'q read with other keys (maybe the end of a paste) does not quit: press it alone';
  if (single.input === 'u')
    return 'u read with other keys (maybe the end of a paste) does not undo: press it alone';
  return undefined;
}

/**
 * Characters that arrive in one read (a held key, a slow SSH link, a script driving the terminal) are
 * separate key presses: `jjj` moves three rows, and a carriage return that ends them is Enter (Ink
 * reports Enter only for a read that is exactly \r). Once one of them opens an editor, the rest of
 * the read is text typed into it, kept whole (see editText). A paste on a terminal without bracketed
 * paste is no keys: a read with a line break before its end, or a read with a line break after an
 * editor saved on a line break read with text (see pasteMayGoOn), is dropped; not once the terminal
 * has marked a paste (see bracketsPastes). A read without a line break is always keys. Keys later in
 * a read never confirm a resume or fork that read opened, nor send an answer whose editor it opened:
 * it runs the crew, paid for. Before the terminal has marked a paste, what such a read opened waits
 * for a key read alone (see openedByKeysTogether): the next read may be the rest of the paste.
 */
function keyChunk(state: BrowserState, press: KeyPress): Update {
  if (press.name === 'paste-start')
    return done({
      ...state,
      pasting: true,
      pasteMayGoOn: false,
      openedByKeysTogether: false,
      bracketsPastes: true,
    });
  if (press.name === 'paste-end') return done({ ...state, pasting: false });
  if (state.pasting) return pastedKey(state, press);
  const characters = Array.from(press.input);
  if (press.name !== undefined || press.ctrl || characters.length < 2) {
    // A key read alone is typed: the guesses about a paste going on are off.
    const typed =
      state.pasteMayGoOn || state.openedByKeysTogether
        ? { ...state, pasteMayGoOn: false, openedByKeysTogether: false }
        : state;
    return keyPress(typed, press, true);
  }
  // Only a line break makes a read pasted text: keys read together without one (`jj`, a held key)
  // are never dropped, also right after an editor saved on a line read with text (pasteMayGoOn).
  // Still, such a read may be the end of a paste cut into reads: it neither quits nor undoes an edit
  // (the edits are in memory only) nor confirms a resume or fork (a paid run); those wait for a key
  // read alone (see heldKey). Nor does an editor opened by it or by an earlier read of several keys
  // save on a later read's line break (an answer runs the flow, a branch name confirms the fork):
  // that read is text.
  const guessing = !state.bracketsPastes;
  const cautious = guessing && state.pasteMayGoOn === true;
  const waitsForKeyAlone = guessing && state.openedByKeysTogether === true;
  if (state.editor) {
    if ((cautious || waitsForKeyAlone) && state.run?.status !== 'running') {
      const editor = { ...state.editor, buffer: pasteText(state.editor.buffer, press) };
      // Said, so that an Enter typed with the text does not look lost (it became a line break).
      const message = /[\r\n]/.test(press.input)
        ? 'enter read with other keys (maybe pasted text) is taken as text: press it alone to save'
        : state.message;
      return done({ ...state, editor, message });
    }
    return keyPress(state, press, true);
  }
  const lineBreakInside = /[\r\n]/.test(press.input.slice(0, -1));
  const lineBreak = /[\r\n]/.test(press.input);
  const mayBePaste = guessing && (lineBreakInside || (state.pasteMayGoOn === true && lineBreak));
  if (mayBePaste && state.run?.status !== 'running') return done({ ...state, message: PASTE_DROPPED });
  let current = state;
  let openedEditor = false;
  let openedConfirm = false;
  let held: string | undefined;
  const effects: Effect[] = [];
  for (const [index, character] of characters.entries()) {
    const rest = current.editor ? characters.slice(index).join('') : character;
    const single: KeyPress = rest === '\r' ? { input: '', name: 'return' } : { input: rest };
    const confirms =
      !cautious && !waitsForKeyAlone && state.confirm !== undefined && current.confirm === state.confirm;
    const reason = heldKey(current, single, confirms, cautious);
    held = reason ?? held;
    // An editor open here was opened by this read: what it saves neither confirms nor runs.
    const next = reason === undefined ? keyPress(current, single, false) : done(current);
    openedEditor ||= current.editor === undefined && next.state.editor !== undefined;
    openedConfirm ||= current.confirm === undefined && next.state.confirm !== undefined;
    current = next.state;
    effects.push(...next.effects);
    if (rest !== character || effects.some((effect) => effect.type === 'exit')) break;
  }
  // Unless a later key of the read said something, the status line says why a key was not taken.
  if (held !== undefined && current.message === state.message) current = { ...current, message: held };
  // What this read opened (or what an earlier one did, still open) waits for a key read alone.
  const opened = openedEditor || (openedConfirm && current.confirm !== undefined);
  const stillOpen = current.confirm !== undefined || current.editor !== undefined;
  const waits = guessing && stillOpen && (opened || waitsForKeyAlone);
  if (waits !== (current.openedByKeysTogether === true))
    current = { ...current, openedByKeysTogether: waits };
  return done(current, effects);
}

function keyPress(state: BrowserState, press: KeyPress, confirms: boolean): Update {
  if (state.run) return runKey(state, press, confirms);
  if (press.ctrl && press.input === 'c') return done(state, [{ type: 'exit' }]);
  if (state.showHelp) return done({ ...state, showHelp: false });
  if (state.editor) return editorKey(state, press, confirms);
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
    case 'plan-loaded':
      return resumePlanned(state, action.checkpointId, action.plan);
    case 'plan-failed':
      return resumePlanned(state, action.checkpointId, { error: action.error });
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
    case 'resize': {
      const resized = { ...state, screen: { width: action.width, height: action.height } };
      // A confirmation scrolled further than the new size lets it: k moves it at once.
      const scroll = resized.confirm?.scroll;
      if (resized.confirm === undefined || scroll === undefined) return done(resized);
      return done({
        ...resized,
        confirm: { ...resized.confirm, scroll: Math.min(scroll, confirmScrollLimit(resized)) },
      });
    }
  }
}
