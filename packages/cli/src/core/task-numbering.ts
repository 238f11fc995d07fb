/** What numbering needs of a task of the checkpoint continued (a `TaskView`). */
export interface NumberedTask {
  /** Position across all crews of the checkpoint, from 0. */
  index: number;
  /** Position within its crew, from 0. */
  indexInCrew: number;
  /** The crew's entity id: the `crewId` of its tasks' events. */
  crewId: string;
}

/**
 * Numbers the tasks of a running continuation's events the way `info`, the plan and `--set-output`
 * number them: across every crew of the checkpoint, in order, from 1. An event says only its crew
 * and its position in that crew ("task 2" of crew alpha was "task 4" in `info`).
 *
 * A crew the checkpoint does not hold yet is numbered after every task seen so far, from the moment
 * it starts, as the next checkpoint will list it. Two such crews running at once cannot be told
 * apart that way (which one the checkpoint lists first is not known before it is written): a task of
 * a crew that started while another new crew was still running keeps its number within its crew,
 * with the crew named (`task 1 of crew beta`).
 */
export class TaskNumbering {
  /** Crew id -> flat index of its first task, or undefined for a crew numbered within itself. */
  readonly #firstIndex = new Map<string, number | undefined>();
  /** Crew id -> name, from its start event (a task's event names no crew). */
  readonly #names = new Map<string, string>();
  /** New crews running now (started, neither completed nor failed). */
  readonly #running = new Set<string>();
  #next = 0;

  constructor(tasks: readonly NumberedTask[]) {
    for (const task of tasks) {
      if (!this.#firstIndex.has(task.crewId))
        this.#firstIndex.set(task.crewId, task.index - task.indexInCrew);
      this.#next = Math.max(this.#next, task.index + 1);
    }
  }

  /** A crew started: a crew the checkpoint does not hold gets the numbers after those seen so far. */
  crewStarted(crewId: string, crewName?: string): void {
    if (crewName) this.#names.set(crewId, crewName);
    if (this.#firstIndex.has(crewId)) return;
    this.#firstIndex.set(crewId, this.#running.size === 0 ? this.#next : undefined);
    this.#running.add(crewId);
  }

  /** A crew completed or failed. */
  crewEnded(crewId: string): void {
    this.#running.delete(crewId);
  }

  /**
   * The label of task `indexInCrew` (from 0) of crew `crewId`: `task 4`, or `task 1 of crew beta`
   * for a task of a crew numbered within itself. Undefined when the event names no crew.
   */
  label(crewId: string | undefined, indexInCrew: number): string | undefined {
    if (crewId === undefined) return undefined;
    if (!this.#firstIndex.has(crewId)) this.crewStarted(crewId);
    const first = this.#firstIndex.get(crewId);
    if (first === undefined) {
      const crewName = this.#names.get(crewId);
      return `task ${indexInCrew + 1}${crewName ? ` of crew ${crewName}` : ''}`;
    }
    this.#next = Math.max(this.#next, first + indexInCrew + 1);
    return `task ${first + indexInCrew + 1}`;
  }
}
