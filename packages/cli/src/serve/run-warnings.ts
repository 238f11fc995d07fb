import { AsyncLocalStorage } from 'node:async_hooks';
import { type LogRecord, type LogSink, setLogSink } from '@crewline/events';

/**
 * The runtime's warnings of a run started from the page, added to that run's lines as the terminal
 * prints them (`warn [runtime] checkpoint … is not the latest of its run …`): the page's user does
 * not read the server's terminal. crewline's log sink is one per process, so the records go on to
 * the sink that was there (the terminal still gets them); each is given to the run whose async
 * context logged it, so that runs going at once each get their own.
 */
export class RunWarnings {
  readonly #context = new AsyncLocalStorage<(line: string) => void>();
  #installed: { sink: LogSink; previous: LogSink | null } | undefined;
  #active = 0;

  /** Runs `work` with the warnings logged inside it handed to `onLine`. */
  async capture<T>(onLine: (line: string) => void, work: () => Promise<T>): Promise<T> {
    this.#install();
    this.#active += 1;
    try {
      return await this.#context.run(onLine, work);
    } finally {
      this.#active -= 1;
      if (this.#active === 0) this.#uninstall();
    }
  }

  #install(): void {
    if (this.#installed) return;
    // The sink it replaces is kept by this closure, not looked up: code that took this sink as its
    // own previous one (a test's captureLogs) may put it back after it was uninstalled, and it must
    // still pass records on then.
    let previous: LogSink | null = null;
    const sink: LogSink = (record: LogRecord) => {
      const onLine = this.#context.getStore();
      if (onLine && (record.level === 'warn' || record.level === 'error'))
        onLine(`${record.level} [${record.component}] ${record.message}${errorSuffix(record.error)}`);
      previous?.(record);
    };
    previous = setLogSink(sink);
    this.#installed = { sink, previous };
  }

  /** Puts the sink back, unless someone replaced this one since (theirs stays). */
  #uninstall(): void {
    const installed = this.#installed;
    if (!installed) return;
    this.#installed = undefined;
    const current = setLogSink(installed.previous);
    if (current !== installed.sink) setLogSink(current);
  }
}

/**
 * What the terminal's sink adds after a record's message: its error's message (redacted already by
 * the logger). Without it the page said "saving state … failed" and not why (review).
 */
function errorSuffix(error: unknown): string {
  if (error instanceof Error) return `: ${error.message}`;
  return error === undefined || error === null ? '' : `: ${String(error)}`;
}
