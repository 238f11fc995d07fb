import { type BaseEvent, CheckpointCompletedEvent, eventBus, SigIntEvent } from '@crewline/events';
import type { Crew, CrewOutput } from '@crewline/runtime';
import { callReport } from './call-report.js';
import { tutorialOfflineModel } from './offline-model.js';
import { formatElapsed, ProgressView } from './progress/progress-view.js';
import { paint, type TerminalStyle, type TextOutput } from './progress/terminal-style.js';
import { displayPath, shellQuote } from './storage.js';
import { capitalize, indent, plural } from './text.js';

export interface TutorialIO {
  stdout: TextOutput;
  env: Readonly<Record<string, string | undefined>>;
  /** The directory the user typed the command in: relative paths and `./.checkpoints` are resolved there. */
  baseDirectory: string;
}

/** One crew run in this process: progress, checkpoint notes, and what to type after Ctrl+C. */
export class RunSession {
  readonly #io: TutorialIO;
  readonly #style: TerminalStyle;
  #view: ProgressView | undefined;
  #lastCheckpoint: string | undefined;
  #lastCheckpointDone = 0;
  #stopReported = false;
  /** A task of this run started: before that, a failure is the store's or the setup's, said by its error alone. */
  #taskStarted = false;
  /** Requests the offline model had received before this run. */
  #callsBefore = 0;
  /** The first checkpoint this process wrote (shown relative to where the command was typed). */
  firstCheckpoint: string | undefined;

  constructor(io: TutorialIO, style: TerminalStyle) {
    this.#io = io;
    this.#style = style;
  }

  async run(crew: Crew, kickoff: () => Promise<CrewOutput>): Promise<CrewOutput> {
    const view = new ProgressView({
      output: this.#io.stdout,
      style: this.#style,
      taskLabels: crew.tasks.map((task) => task.name ?? task.description),
    });
    this.#view = view;
    this.#callsBefore = tutorialOfflineModel().calls.length;
    const colors = paint(this.#style.color);
    // Tasks this process has seen start, or has already reported as restored.
    const noted = new Set<number>();
    const noteSkipped = (upTo: number) => {
      crew.tasks.slice(0, upTo).forEach((task, index) => {
        if (task.status !== 'completed' || noted.has(index)) return;
        noted.add(index);
        const how = task.output?.edited
          ? 'was edited before this run: the edited output is used'
          : 'was done in the checkpoint: its saved output is used';
        view.line(
          `${colors.green('↷')} ${capitalize(view.taskTitle(index))} (${task.agent?.role ?? 'agent'}) ${how}, it is not run again`,
        );
      });
    };
    const offAny = eventBus.onAny((_source: unknown, event: BaseEvent) => {
      if (event.type === 'task_started') this.#taskStarted = true;
      if (event.type === 'task_started' && event.context.taskIndex !== undefined) {
        noteSkipped(event.context.taskIndex);
        noted.add(event.context.taskIndex);
      }
      view.handle(event as unknown as Parameters<ProgressView['handle']>[0]);
    });
    const offCheckpoint = eventBus.on(
      CheckpointCompletedEvent,
      (_source: unknown, event: CheckpointCompletedEvent) => {
        const shown = displayPath(event.reference, this.#io.baseDirectory);
        this.#lastCheckpoint = shown;
        this.firstCheckpoint ??= shown;
        const done = crew.tasks.filter((task) => task.status === 'completed').length;
        this.#lastCheckpointDone = done;
        view.line(`  ${colors.cyan('●')} Checkpoint saved: ${shown} (branch ${event.branch})`);
        if (done < crew.tasks.length) {
          view.line(
            colors.dim(`    If you stop now, continue with: pnpm demo --resume ${shellQuote(shown)}`),
          );
        }
      },
    );
    const offSignal = eventBus.on(SigIntEvent, () =>
      this.#stopped(crew, 'Interrupted (Ctrl+C).', 'interrupted'),
    );
    try {
      const output = await kickoff();
      noteSkipped(crew.tasks.length);
      return output;
    } catch (error) {
      // A failed model call (rate limit, network, a bad key) ends the run like Ctrl+C does: what was
      // checkpointed is kept, so say how to continue before the error is reported. A run refused
      // before its first task (the store cannot be reached, asks for a password) has nothing to
      // continue, and running it again as it is cannot help: its error is the whole story.
      if (this.#taskStarted || this.#lastCheckpoint !== undefined) {
        this.#stopped(crew, 'The run failed (the error is below).', 'failed');
      }
      throw error;
    } finally {
      view.stop();
      offAny();
      offCheckpoint();
      offSignal();
    }
  }

  /**
   * After Ctrl+C (the runtime is about to end the process) or a failure: say exactly how to continue.
   * Said once, even when a failure follows the interrupt.
   */
  #stopped(crew: Crew, headline: string, how: 'interrupted' | 'failed'): void {
    if (this.#stopReported) return;
    this.#stopReported = true;
    this.#view?.stop();
    const colors = paint(this.#style.color);
    const out = (line = '') => this.#io.stdout.write(`${line}\n`);
    out('');
    out(colors.yellow(headline));
    if (this.#lastCheckpoint === undefined) {
      out(
        how === 'interrupted'
          ? 'No checkpoint was written by this run: its first task had not finished. Run it again.'
          : 'No checkpoint was written by this run: its first task had not finished. Run it again once the error below is dealt with.',
      );
      return;
    }
    const reference = shellQuote(this.#lastCheckpoint);
    out(
      `The last checkpoint, ${this.#lastCheckpoint}, has ${this.#lastCheckpointDone} of ${crew.tasks.length} tasks done; the work after it is not saved.`,
    );
    out('Continue from it (finished tasks are not run again) with either:');
    out(`  pnpm demo --resume ${reference}`);
    out(`  pnpm crewline checkpoint resume ${reference}`);
  }

  finish(crew: Crew, output: CrewOutput): void {
    const view = this.#view;
    const colors = paint(this.#style.color);
    const out = (line = '') => this.#io.stdout.write(`${line}\n`);
    const branch = crew.lastRun?.state.lineage.branch ?? 'main';
    out('');
    out(
      colors.green(
        `Crew finished in ${formatElapsed(view?.elapsedMs ?? 0)}: ${plural(view?.modelCalls ?? 0, 'model call')}, ${view?.tokens ?? 0} tokens in this run.`,
      ),
    );
    const calls = callReport(tutorialOfflineModel()).calls.slice(this.#callsBefore);
    if (calls.length > 0) {
      const byRole = new Map<string, number>();
      for (const call of calls) {
        const role = call.agentRole ?? 'unknown';
        byRole.set(role, (byRole.get(role) ?? 0) + 1);
      }
      const roles = crew.agents.map((agent) => `${agent.role} ${byRole.get(agent.role) ?? 0}`).join(', ');
      out(`Requests the offline model received in this run: ${calls.length} (${roles}).`);
    }
    out(`The Writer's result on branch ${branch}:`);
    out(indent(output.raw));
    out(
      this.#lastCheckpoint !== undefined
        ? `Last checkpoint: ${this.#lastCheckpoint}`
        : colors.dim('(this run wrote no checkpoint)'),
    );
  }
}
