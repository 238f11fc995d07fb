import type { EventBus } from '@crewline/events';
import type { CheckpointConfigInput, CheckpointProvider, CheckpointSetting } from '@crewline/runtime-state';
import type { FlowState, StateInit } from './flow-state.js';

/** Options of a flow instance. */
export interface FlowOptions<State extends object = Record<string, unknown>> {
  /**
   * Checkpointing: `true` = defaults (`./.checkpoints`, on `task_completed`), an object = custom
   * config, `false` = off and not inherited, `undefined` = inherit (off for a flow that is not inside
   * another run). Default `undefined`.
   */
  checkpoint?: CheckpointSetting;
  /** State values that override the class's `initialState` for this instance. Default: none. */
  initialState?: Partial<StateInit<State>>;
  /** How often one method may run in one kickoff before `FlowMethodCallLimitError`. Default 100. */
  maxMethodCalls?: number;
  /**
   * The bus events go through. Default: the bus of the run the flow is created or kicked off in (a
   * flow in another flow's method joins that run), else the process-wide `eventBus`.
   */
  bus?: EventBus;
  /** The flow's name in events and checkpoints. Default: `static flowName`, else the class name. */
  name?: string;
}

/** Options of `Flow.kickoff`. */
export interface KickoffOptions {
  /** Values merged into the state (`id` picks the state id; with `@persist()` it restores that state). */
  inputs?: Record<string, unknown>;
  /** Continue from a checkpoint (`restoreFrom` names it) instead of starting fresh. */
  fromCheckpoint?: CheckpointConfigInput;
  /**
   * Run this method again, and everything after it, for the saved state `inputs.id` (or the id in
   * `initialState`): the state is restored from its save made before the method first completed,
   * so the methods before it are not run (nor paid for) again. Looked up where the flow persists or
   * checkpoints (see `findRerunPoint`). Default: none.
   */
  rerunFrom?: string;
  /**
   * Stops the flow from outside (a cancel, a timeout, a worker handing the run back): no method
   * starts after it is aborted, and the crews and agents working inside the flow's methods stop
   * before their next model call (the one in flight is aborted). `kickoff` then rejects with an
   * `aborted` error; continue from the latest checkpoint (`fromCheckpoint: { restoreFrom }`): the
   * stopped method runs again and its crews continue their saved work, so no checkpointed model call
   * is made twice. To stop only between calls, abort it right after an `llm_call_completed` event.
   * Default: none.
   */
  abortSignal?: AbortSignal;
}

/** Options of `flow.resume(answer, options)`. */
export interface ResumeOptions {
  /** Merged into the state as kickoff inputs are. Default: none. */
  inputs?: Record<string, unknown>;
  /** As {@link KickoffOptions.abortSignal}. Default: none. */
  abortSignal?: AbortSignal;
}

/**
 * Where `Flow.resume` continues from: a checkpoint reference (`result.pause.resumeFrom`), the
 * same with the provider to read it through, or the id of a persisted state (looked up where the
 * flow persists, or at `location`).
 */
export type ResumeTarget =
  | string
  | { restoreFrom: string; provider?: CheckpointProvider }
  | { id: string; location?: string; provider?: CheckpointProvider };

/** What a paused flow waits for and how to continue it. */
export interface FlowPauseInfo {
  methodName: string;
  message: string;
  kind: 'feedback' | 'input';
  /** Reference of the checkpoint written when the flow paused (absent when nothing is stored). */
  resumeFrom: string | undefined;
  /** One line telling a person how to continue. */
  hint: string;
}

interface FlowResultBase<State extends object> {
  stateId: string;
  state: FlowState<State>;
  /** Output of the method that completed last. */
  output: unknown;
  /** The method that completed last. */
  methodName: string | undefined;
  completedMethods: readonly string[];
  /** Reference of the last checkpoint written by this kickoff, if any. */
  checkpoint: string | undefined;
}

/** The outcome of a kickoff: finished, or paused waiting for a person. */
export type FlowResult<State extends object = Record<string, unknown>> =
  | (FlowResultBase<State> & { status: 'completed'; pause?: undefined })
  | (FlowResultBase<State> & { status: 'paused'; pause: FlowPauseInfo });
