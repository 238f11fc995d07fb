import type { BaseEvent } from '@crewline/events';
import type { ProviderRegistry } from '@crewline/runtime-state';
import { EndLinesLast } from './end-lines-last.js';
import { truncate } from './format.js';
import { type ProgressEvent, progressLine } from './progress.js';
import { loadProject } from './project-config.js';
import { type NumberedTask, TaskNumbering } from './task-numbering.js';

export interface ContinueRequest {
  /** The exact reference of the checkpoint (as the provider lists it). */
  reference: string;
  mode: 'resume' | 'fork';
  /** Fork only: the new branch (generated when absent). */
  branch?: string;
  /** All kickoff inputs with changes applied; re-templates tasks that have not run yet. */
  inputs?: Record<string, unknown>;
  /** Flat task index -> new raw output; every later task runs again. */
  taskOutputs?: Record<number, string>;
  /** The answer a paused flow waits for. */
  humanInput?: string;
  /** When another process is continuing the same run: refuse (default) or continue on a new branch. */
  onConflict?: 'error' | 'fork';
  /** The checkpoint was the latest of its run when the command read it (see the runtime's `ContinueOptions.readAsLatest`). */
  readAsLatest?: boolean;
  /**
   * A re-run: the flow method it runs again (`flows rerun --from`), whose executions start from
   * scratch rather than continue work saved while it ran beside another method, on a new branch it
   * asks for (not warned about).
   */
  rerunFrom?: string;
  /** Project directory: its crewline.config.ts is loaded first. */
  cwd: string;
  /** The registry the checkpoint was opened with: the run finds and rebuilds its providers there. */
  providers?: ProviderRegistry;
  /** Receives one line per notable event while the run goes on. */
  onLine?: (line: string) => void;
  /** Told of each checkpoint the run writes (where a run stopped by Ctrl+C can be continued). */
  onCheckpoint?: (checkpoint: WrittenCheckpoint) => void;
  /**
   * The tasks of the checkpoint continued (its view's `tasks`): progress lines then number tasks
   * across the checkpoint, as `info`, the plan and `--set-output` do. Default: numbered within
   * their crew.
   */
  tasks?: readonly NumberedTask[];
  /** Width progress lines are cut to. Default 100. */
  width?: number;
}

/** A checkpoint the continuation wrote: its id, branch and location. */
export interface WrittenCheckpoint {
  id: string;
  branch: string;
  location: string;
}

export interface ContinueOutcome {
  kind: string;
  name: string;
  output: string;
  branch: string;
  lastCheckpoint?: string;
  /** Set when the run stopped to ask a person (a flow's `ask()`). */
  pause?: { methodName: string; message: string; resumeFrom?: string };
}

// A progress line before it is cut to the width asked for: cut after redaction, so that no part of a
// credential near the cut is left behind.
const uncutWidth = Number.MAX_SAFE_INTEGER;

/**
 * Resumes or forks a checkpoint for real through the runtime's `continueFromCheckpoint`, after
 * registering the project's crewline.config.ts. The runtime is imported here, not at start-up, so
 * listing commands never load it.
 *
 * What it hands back to print (progress lines, the output, a pause's message) is redacted: they are
 * the live run's text, which only its checkpoints had been redacted from, and every command, the
 * browser and the explorer print them.
 */
export async function continueRun(request: ContinueRequest): Promise<ContinueOutcome> {
  await loadProject(request.cwd);
  const [{ continueFromCheckpoint }, { redactSecretsInText }] = await Promise.all([
    import('@crewline/runtime'),
    import('@crewline/events'),
  ]);
  const { onCheckpoint } = request;
  const lines = request.onLine && new EndLinesLast(request.onLine);
  const onLine = lines && ((line: string, type: string) => lines.add(line, type));
  const numbering = request.tasks && new TaskNumbering(request.tasks);
  const onEvent =
    onLine || onCheckpoint
      ? (event: BaseEvent) => {
          if (onCheckpoint && event.type === 'checkpoint_completed') {
            const written = event as unknown as { checkpointId: string; branch: string; location: string };
            onCheckpoint({ id: written.checkpointId, branch: written.branch, location: written.location });
          }
          if (!onLine) return;
          const line = progressLine(
            event as unknown as ProgressEvent,
            uncutWidth,
            numbering,
            redactSecretsInText,
          );
          if (line !== undefined)
            onLine(truncate(redactSecretsInText(line), request.width ?? 100), event.type);
        }
      : undefined;
  try {
    const outcome = await continueFromCheckpoint({
      reference: request.reference,
      mode: request.mode,
      ...(request.branch !== undefined ? { branch: request.branch } : {}),
      ...(request.inputs !== undefined ? { inputs: request.inputs } : {}),
      ...(request.taskOutputs !== undefined ? { taskOutputs: request.taskOutputs } : {}),
      ...(request.humanInput !== undefined ? { humanInput: request.humanInput } : {}),
      ...(request.onConflict !== undefined ? { onConflict: request.onConflict } : {}),
      ...(request.readAsLatest === true ? { readAsLatest: true } : {}),
      ...(request.rerunFrom !== undefined ? { rerunFrom: request.rerunFrom } : {}),
      ...(request.providers ? { providers: request.providers } : {}),
      ...(onEvent ? { onEvent } : {}),
    });
    return {
      ...outcome,
      output: redactSecretsInText(outcome.output),
      ...(outcome.pause
        ? { pause: { ...outcome.pause, message: redactSecretsInText(outcome.pause.message) } }
        : {}),
    };
  } finally {
    lines?.end();
  }
}
