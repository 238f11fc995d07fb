import { redactionGeneration } from '@crewline/events';
import type { SettledValues } from '@crewline/runtime-state';
import type { TaskData } from '@crewline/runtime-state/internal';
import type { Task } from '../task/task.js';

/** What a settled task's stored form was built from: while all of it holds, so does the stored form. */
interface TaskKey {
  task: Task;
  id: string;
  status: Task['status'];
  output: Task['output'];
  startedEmitted: boolean;
}

/** One crew's task list as last built: per task, its stored form and, when settled, its key. */
interface TaskList {
  settled: SettledValues;
  /** The redaction generation the stored forms were settled under. */
  generation: number;
  keys: (TaskKey | undefined)[];
  items: TaskData[];
  /** The whole list, settled, while every task is. */
  list: TaskData[] | undefined;
}

// By the crew's own tasks array: a crew replaced or reordered its tasks gets a new list.
const lists = new WeakMap<readonly Task[], TaskList>();

function keyOf(task: Task): TaskKey {
  return {
    task,
    id: task.id,
    status: task.status,
    output: task.output,
    startedEmitted: task.startedEmitted,
  };
}

function unchanged(key: TaskKey | undefined, task: Task, isSettled: (task: Task) => boolean): boolean {
  return (
    key !== undefined &&
    key.task === task &&
    key.id === task.id &&
    key.status === task.status &&
    key.output === task.output &&
    key.startedEmitted === task.startedEmitted &&
    // A completed task kept its status and output, all that made it settled: asked again only for one
    // not started, which starting changes in ways the key does not hold (a conversation).
    (key.status === 'completed' || isSettled(task))
  );
}

/**
 * The stored forms of a crew's tasks: each settled task's (completed, or not started) kept from the
 * last list while it does not change, and the whole list settled in the run while every task is.
 *
 * Why: a flow of crews snapshots every crew of the run on every checkpoint, so each completed crew
 * cost a cache lookup and a settled check per task, and the unchanged-snapshot comparison walked
 * its whole task list again: per checkpoint, a cost that grew with every task the run had done
 * (flow-500 went from 0.15 ms to 0.24 ms per checkpoint over its 7,000 checkpoints). With one
 * settled list, a completed crew costs a few comparisons per task and the list is recognized at
 * once by the comparison, the redaction and the provider. A running crew rebuilds only the task
 * under way: each of the others costs a few comparisons, not a cache lookup and a settled check
 * (most of what a 500-task crew's snapshot cost).
 */
export function settledTaskList(
  tasks: readonly Task[],
  settled: SettledValues,
  taskData: (task: Task) => TaskData,
  isSettled: (task: Task) => boolean,
): TaskData[] {
  const generation = redactionGeneration();
  let known = lists.get(tasks);
  // A secret registered since has every stored form scanned again, through taskData's settle.
  if (
    known === undefined ||
    known.settled !== settled ||
    known.generation !== generation ||
    known.keys.length !== tasks.length
  ) {
    known = {
      settled,
      generation,
      keys: new Array(tasks.length),
      items: new Array(tasks.length),
      list: undefined,
    };
    lists.set(tasks, known);
  }
  let changed = known.list === undefined;
  let allSettled = true;
  for (let index = 0; index < tasks.length; index += 1) {
    const task = tasks[index]!;
    if (unchanged(known.keys[index], task, isSettled)) continue;
    changed = true;
    known.items[index] = taskData(task);
    if (isSettled(task)) known.keys[index] = keyOf(task);
    else {
      known.keys[index] = undefined;
      allSettled = false;
    }
  }
  if (!changed) return known.list!;
  if (!allSettled) {
    known.list = undefined;
    return known.items.slice();
  }
  known.list = settled.settle(known.items.slice());
  return known.list;
}
