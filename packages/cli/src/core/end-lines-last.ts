/** The events whose line says a crew, flow or agent ended. */
const endEvents = new Set(['crew_kickoff_completed', 'flow_finished', 'lite_agent_execution_completed']);

/**
 * Passes progress lines on, but holds the line of an end (`crew … completed`) until a line other
 * than a checkpoint's comes, or the run returns: a store that writes in the background (JSON,
 * Postgres) reports checkpoints as they land, after the crew ended, and the end is then said after
 * them instead of above them.
 */
export class EndLinesLast {
  readonly #write: (line: string) => void;
  #held: string[] = [];

  constructor(write: (line: string) => void) {
    this.#write = write;
  }

  add(line: string, type: string): void {
    if (type === 'checkpoint_completed' || type === 'checkpoint_failed') {
      this.#write(line);
      return;
    }
    this.end();
    if (endEvents.has(type)) this.#held.push(line);
    else this.#write(line);
  }

  /** Writes the held lines. */
  end(): void {
    const held = this.#held;
    this.#held = [];
    for (const line of held) this.#write(line);
  }
}
