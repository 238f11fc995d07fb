import type { StoredCheckpoint } from '@crewline/runtime-state';
import type { DocumentView } from '../../core/document-view.js';
import type { TextBuffer } from './text-editor.js';
import type { GroupNode } from './tree.js';

export type Tab = 'overview' | 'tasks' | 'inputs';
export const tabs: readonly Tab[] = ['overview', 'tasks', 'inputs'];
export type Focus = 'tree' | 'detail';
export type RunMode = 'resume' | 'fork';

/** Changes made in the browser to one checkpoint, passed along when it is resumed or forked. */
export interface Edits {
  /** Flat task index -> new raw output. */
  outputs: Record<number, string>;
  /** Input key -> new value. */
  inputs: Record<string, unknown>;
}

export type EditTarget =
  | { kind: 'output'; index: number }
  | { kind: 'input'; key: string }
  | { kind: 'branch' }
  /** The answer to the question of a flow whose run ended paused. */
  | { kind: 'answer' };

export interface EditorState {
  target: EditTarget;
  buffer: TextBuffer;
}

/** The "run it?" panel shown after `e` or `f`. */
export interface ConfirmState {
  mode: RunMode;
  checkpointId: string;
  /** Fork only: the branch typed so far (empty: generated). */
  branch: string;
  /**
   * Resume only: what the runtime will do with it, worked out by the host (`load-plan`). A checkpoint
   * its run went past is continued on a new branch, and what the run did since runs again, paid for
   * again; said before the user confirms.
   */
  plan?: ResumePlanState;
  /** Rows scrolled past (j/k) when the panel is taller than the screen's room (80×14). Default 0. */
  scroll?: number;
}

/** What the resume confirmation says of the plan. */
export type ResumePlanState =
  | { status: 'checking' }
  /** `note`: the plan's words of resuming an older checkpoint, or why they could not be worked out; none for the run's latest. */
  | { status: 'ready'; note?: string };

/** What the host found for a resume's plan: the checkpoint, and the run's later latest checkpoint if there is one. */
export interface ResumePlanViews {
  view: DocumentView;
  /** The latest checkpoint of the run when it is not this one (`newerHeadOf`, as the runtime finds it). */
  newerHead?: { id: string; view: DocumentView };
}

export interface RunResult {
  branch: string;
  /** Reference (or id) of the last checkpoint the run wrote. */
  lastCheckpoint?: string;
  output: string;
  /** Set when the run ended paused: a flow waits for a person's answer. */
  pause?: RunPause;
}

/** What a paused flow asks, and the checkpoint to continue with the answer (when one was written). */
export interface RunPause {
  methodName: string;
  message: string;
  checkpoint?: { id: string; reference: string };
}

/** A resume or fork running (or finished) inside the browser. */
export interface RunState {
  mode: RunMode;
  checkpointId: string;
  status: 'running' | 'finished' | 'failed';
  /** Progress lines, newest last (kept to the last few hundred). */
  lines: string[];
  result?: RunResult;
  error?: string;
}

export interface DetailState {
  checkpointId: string;
  status: 'loading' | 'ready' | 'error';
  view?: DocumentView;
  error?: string;
}

/** Everything the checkpoint browser shows; changed only by `update`. */
export interface BrowserState {
  location: string;
  /** The location as shown in the title. */
  title: string;
  providerKind: string;
  listStatus: 'loading' | 'ready' | 'error';
  listError?: string;
  checkpoints: StoredCheckpoint[];
  tree: GroupNode[];
  /** Keys of collapsed nodes (everything else is expanded). */
  collapsed: Set<string>;
  selectedKey?: string;
  /** Select this checkpoint (id or reference) once it appears in the list (after a run). */
  selectAfterLoad?: string;
  focus: Focus;
  tab: Tab;
  /** Row of the detail tab under the cursor (a task, an input, or the overview scroll offset). */
  detailCursor: number;
  detail?: DetailState;
  /** By checkpoint id. */
  edits: Record<string, Edits>;
  editor?: EditorState;
  confirm?: ConfirmState;
  run?: RunState;
  showHelp: boolean;
  /** Between the terminal's bracketed-paste marks: every key read is pasted text. */
  pasting?: boolean;
  /**
   * An editor was saved by a carriage return read together with text, on a terminal without
   * bracketed paste: that may have been a line break of a paste cut into reads, whose next reads are
   * then the rest of it. Until a key is read on its own, reads of several characters with a line
   * break are dropped, not taken as keys (they could save, open or confirm), and reads without one are
   * keys that neither quit, undo an edit nor confirm a resume or fork, and an editor they open takes the reads
   * after them as text (no save, which would run an answer or confirm a fork): `kk` typed fast after
   * a line and its Enter were dropped on a terminal that had not marked a paste yet (task h2 #3).
   */
  pasteMayGoOn?: boolean;
  /**
   * The terminal has marked a paste (ESC [200~): it brackets pastes, so the guesses made for
   * terminals that do not (pasteMayGoOn, a read with a line break inside dropped) are off: on a fast
   * typist's reads they dropped keys nobody pasted.
   */
  bracketsPastes?: boolean;
  /**
   * A confirmation or editor open that a read of several keys opened, on a terminal that has not
   * marked a paste yet (see bracketsPastes): that read may have been the start of a paste cut into
   * reads, whose next read is the rest of it (`xe` then `xy` confirmed a resume, `zfoo` then `bar` and
   * a carriage return named a fork's branch and started it: paid runs). Until a key is read on its own
   * (which clears this), reads of several keys neither confirm it nor save it: the editor takes them
   * as text. `f` read alone, then `what-if` and Enter read together, is typing: it forks.
   */
  openedByKeysTogether?: boolean;
  /** A one-line notice in the status bar. */
  message?: string;
  /** The terminal's size, as last drawn (see the `resize` action): how far the confirmation scrolls. */
  screen?: { width: number; height: number };
}

/** The browser before anything is loaded. */
export function initialState(options: {
  location: string;
  title?: string;
  providerKind: string;
}): BrowserState {
  return {
    location: options.location,
    title: options.title ?? options.location,
    providerKind: options.providerKind,
    listStatus: 'loading',
    checkpoints: [],
    tree: [],
    collapsed: new Set(),
    focus: 'tree',
    tab: 'overview',
    detailCursor: 0,
    edits: {},
    showHelp: false,
  };
}

/** What to hand to `continueFromCheckpoint` for a run started in the browser. */
export interface RunRequest {
  mode: RunMode;
  checkpointId: string;
  reference: string;
  branch?: string;
  /** All kickoff inputs with the edits applied; absent when none were edited. */
  inputs?: Record<string, unknown>;
  /** Edited outputs by flat task index; absent when none were edited. */
  taskOutputs?: Record<number, string>;
  /** The answer for a paused flow. */
  humanInput?: string;
}

/** Work the browser asks its host to do; results come back as actions. */
export type Effect =
  | { type: 'load-list' }
  | { type: 'load-detail'; checkpointId: string; reference: string }
  /** Reads a checkpoint and the latest of its run when that is another one, to plan what a resume of it runs again. */
  | { type: 'load-plan'; checkpointId: string; reference: string }
  | { type: 'start-run'; request: RunRequest }
  | { type: 'interrupt-run' }
  | { type: 'exit' };

export type Action =
  | { type: 'key'; key: import('./key-press.js').KeyPress }
  | { type: 'list-loaded'; checkpoints: StoredCheckpoint[] }
  | { type: 'list-failed'; error: string }
  | { type: 'detail-loaded'; checkpointId: string; view: DocumentView }
  | { type: 'detail-failed'; checkpointId: string; error: string }
  | { type: 'plan-loaded'; checkpointId: string; plan: ResumePlanViews }
  | { type: 'plan-failed'; checkpointId: string; error: string }
  | { type: 'run-progress'; line: string }
  | { type: 'run-finished'; result: RunResult }
  | { type: 'run-failed'; error: string }
  /** The terminal's size, when the browser starts and on each resize. */
  | { type: 'resize'; width: number; height: number };

export interface Update {
  state: BrowserState;
  effects: Effect[];
}

/** An update with `state` and `effects` (none unless given). */
export const done = (state: BrowserState, effects: Effect[] = []): Update => ({ state, effects });
