import type { TerminalStyle, TextOutput } from './terminal-style.js';
import { type Paint, paint } from './terminal-style.js';

/** The fields of an event the view reads (a live event from @crewline/events has them all). */
export interface ProgressEvent {
  type: string;
  context?: { taskIndex?: number; taskName?: string; agentRole?: string };
  usage?: { totalTokens?: number };
  [field: string]: unknown;
}

export interface ProgressViewOptions {
  output: TextOutput;
  style: TerminalStyle;
  /** Labels of the crew's tasks, in order (for "task 2 of 2: write"). */
  taskLabels: readonly string[];
  /** Milliseconds now. Default `performance.now`. */
  now?: () => number;
  /** Time between spinner frames when animating. Default 80 ms. */
  frameMs?: number;
}

const spinnerFrames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** `12.3 s` under a minute, `2 min 05 s` above. */
export function formatElapsed(milliseconds: number): string {
  const seconds = Math.max(0, milliseconds) / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${String(Math.floor(seconds % 60)).padStart(2, '0')} s`;
}

/**
 * Shows a crew's progress from its events: task n of m, elapsed time and tokens. On a terminal a
 * status line with a spinner is redrawn in place and finished steps are printed above it; elsewhere
 * every step is one plain line and nothing is redrawn.
 */
export class ProgressView {
  readonly #output: TextOutput;
  readonly #style: TerminalStyle;
  readonly #paint: Paint;
  readonly #labels: readonly string[];
  readonly #now: () => number;
  readonly #frameMs: number;
  readonly #startedAt: number;
  #taskStartedAt = 0;
  #currentTask: number | undefined;
  #currentRole: string | undefined;
  #tokens = 0;
  #taskTokens = 0;
  #modelCalls = 0;
  #waiting = false;
  #frame = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #statusShown = false;

  constructor(options: ProgressViewOptions) {
    this.#output = options.output;
    this.#style = options.style;
    this.#paint = paint(options.style.color);
    this.#labels = options.taskLabels;
    this.#now = options.now ?? (() => performance.now());
    this.#frameMs = options.frameMs ?? 80;
    this.#startedAt = this.#now();
  }

  /** Tokens of every model call seen so far. */
  get tokens(): number {
    return this.#tokens;
  }

  /** Model calls completed so far. */
  get modelCalls(): number {
    return this.#modelCalls;
  }

  /** Milliseconds since the view was created. */
  get elapsedMs(): number {
    return this.#now() - this.#startedAt;
  }

  /** "task 2 of 2: write" for a task index. */
  taskTitle(index: number): string {
    const label = this.#labels[index];
    return `task ${index + 1} of ${this.#labels.length}${label ? `: ${label}` : ''}`;
  }

  /** Updates the view for one event of the run. */
  handle(event: ProgressEvent): void {
    const index = event.context?.taskIndex;
    switch (event.type) {
      case 'task_started':
        if (index === undefined) return;
        this.#currentTask = index;
        this.#currentRole = event.context?.agentRole;
        this.#taskStartedAt = this.#now();
        this.#taskTokens = 0;
        this.line(
          `${this.#paint.cyan('▶')} ${capitalize(this.taskTitle(index))}${this.#currentRole ? ` (${this.#currentRole})` : ''} started`,
        );
        this.#startAnimation();
        break;
      case 'llm_call_started':
        this.#waiting = true;
        this.#redraw();
        break;
      case 'llm_call_completed': {
        this.#waiting = false;
        this.#modelCalls += 1;
        const tokens = event.usage?.totalTokens ?? 0;
        this.#tokens += tokens;
        this.#taskTokens += tokens;
        if (!this.#style.animate) {
          this.line(
            `  model answered (${tokens} tokens; ${this.#tokens} in total, ${formatElapsed(this.elapsedMs)} elapsed)`,
          );
        }
        this.#redraw();
        break;
      }
      case 'task_completed': {
        if (index === undefined) return;
        const took = formatElapsed(this.#now() - this.#taskStartedAt);
        this.#currentTask = undefined;
        this.line(
          `${this.#paint.green('✔')} ${capitalize(this.taskTitle(index))} completed in ${took}, ${this.#taskTokens} tokens ${this.#paint.dim(`(${formatElapsed(this.elapsedMs)} elapsed, ${this.#tokens} tokens in total)`)}`,
        );
        break;
      }
      case 'task_failed':
        if (index === undefined) return;
        this.#currentTask = undefined;
        this.line(
          `${this.#paint.red('✘')} ${capitalize(this.taskTitle(index))} failed: ${String(event.error)}`,
        );
        break;
      default:
        break;
    }
  }

  /** Prints a line (above the status line when animating). */
  line(text: string): void {
    this.#clearStatus();
    this.#output.write(`${text}\n`);
    this.#redraw();
  }

  /** Stops the spinner and removes the status line; later lines print normally. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#clearStatus();
    this.#currentTask = undefined;
  }

  /** The status line as it is drawn now (without control characters). */
  statusText(): string | undefined {
    if (this.#currentTask === undefined) return undefined;
    const frame = spinnerFrames[this.#frame % spinnerFrames.length];
    const activity = this.#waiting ? `${this.#currentRole ?? 'agent'} is waiting for the model` : 'working';
    return `${frame} ${capitalize(this.taskTitle(this.#currentTask))} · ${activity} · ${formatElapsed(this.elapsedMs)} · ${this.#tokens} tokens`;
  }

  #startAnimation(): void {
    if (!this.#style.animate || this.#timer !== undefined) return;
    this.#timer = setInterval(() => {
      this.#frame += 1;
      this.#redraw();
    }, this.#frameMs);
    // The spinner never keeps the process alive on its own.
    this.#timer.unref?.();
  }

  #redraw(): void {
    if (!this.#style.animate) return;
    const status = this.statusText();
    if (status === undefined) {
      this.#clearStatus();
      return;
    }
    this.#output.write(`\r\u001b[2K${this.#paint.dim(status)}`);
    this.#statusShown = true;
  }

  #clearStatus(): void {
    if (!this.#statusShown) return;
    this.#output.write('\r\u001b[2K');
    this.#statusShown = false;
  }
}

function capitalize(text: string): string {
  return text.length === 0 ? text : text[0]!.toUpperCase() + text.slice(1);
}
