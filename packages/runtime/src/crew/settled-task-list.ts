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

interface SettledList {
  settled: SettledValues;
  keys: TaskKey[];
  list: TaskData[];
}

// By the crew's own tasks array: a crew replaced or reordered its tasks gets a new list.
const lists = new WeakMap<readonly Task[], SettledList>();

function keyOf(task: Task): TaskKey {
  return {
    task,
    id: task.id,
    status: task.status,
    output: task.output,
    startedEmitted: task.startedEmitted,
  };
}

function unchanged(
  keys: readonly TaskKey[],
  tasks: readonly Task[],
  isSettled: (task: Task) => boolean,
): boolean {
  if (keys.length !== tasks.length) return false;
  for (let index = 0; index < tasks.length; index += 1) {
    const task = tasks[index]!;
    const key = keys[index]!;
    if (
      key.task !== task ||
      key.id !== task.id ||
      key.status !== task.status ||
      key.output !== task.output ||
      key.startedEmitted !== task.startedEmitted ||
      !isSettled(task)
    )
      return false;
  }
  return true;
}

/**
 * The stored forms of a crew's tasks, as one list settled in the run while every task is settled
 * (completed, or not started) and none changed since the list was built.
 *
 * Why: a flow of crews snapshots every crew of the run on every checkpoint, so each completed crew
 * cost a cache lookup and a settled check per task, and the unchanged-snapshot comparison walked
 * its whole task list again: per checkpoint, a cost that grew with every task the run had done
 * (flow-500 went from 0.15 ms to 0.24 ms per checkpoint over its 7,000 checkpoints). With one
 * settled list, a completed crew costs a few comparisons per task and the list is recognized at
 * once by the comparison, the redaction and the provider.
 */
export function settledTaskList(
  tasks: readonly Task[],
  settled: SettledValues,
  taskData: (task: Task) => TaskData,
  isSettled: (task: Task) => boolean,
): TaskData[] {
  const known = lists.get(tasks);
  // The list is settled again each time: a secret registered since has it scanned once more.
  if (known !== undefined && known.settled === settled && unchanged(known.keys, tasks, isSettled))
    return settled.settle(known.list);
  const list = tasks.map(taskData);
  if (!tasks.every(isSettled)) {
    lists.delete(tasks);
    return list;
  }
  lists.set(tasks, { settled, keys: tasks.map(keyOf), list });
  return settled.settle(list);
}
