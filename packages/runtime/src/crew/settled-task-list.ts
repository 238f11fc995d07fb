import { redactionGeneration } from '@crewline/events';
import type { SettledValues } from '@crewline/runtime-state';
import type { TaskData } from '@crewline/runtime-state/internal';
import type { Agent } from '../agent/agent.js';
import { runValueCodec } from '../checkpointing/run-value-codec.js';
import type { Settle } from '../checkpointing/snapshot-values.js';
import { type Task, taskRevision } from '../task/task.js';
import type { CrewParts } from './crew-parts.js';
import { sameMembers, TaskPositions } from './task-positions.js';
import {
  hasDelegations,
  type KeptTaskData,
  keptTaskData,
  taskData,
  taskDataHolds,
} from './task-stored-form.js';

/** One crew's task list as last built: per task, its stored form and, when settled, the kept form it came from. */
interface TaskList {
  settled: SettledValues;
  /** The redaction generation the stored forms were settled under. */
  generation: number;
  kept: (KeptTaskData | undefined)[];
  /** Per task, its revision when its kept form was last found to hold. */
  revisions: number[];
  items: TaskData[];
  /** What a task's stored form reads from its crew, as when the forms were last checked. */
  agents: readonly Agent[];
  members: readonly Task[];
  codec: unknown;
  /** The whole list, settled, while every task is. */
  list: TaskData[] | undefined;
}

// By the crew's own tasks array: a crew replaced or reordered its tasks gets a new list.
const lists = new WeakMap<readonly Task[], TaskList>();

/**
 * The stored forms of a crew's tasks: each settled task's (completed, or not started) kept from the
 * last list while it does not change, and the whole list settled in the run while every task is.
 * Whether a task changed is asked of its kept stored form (`taskDataHolds`), which compares every
 * value the form is built from: this list keeps no key of its own.
 *
 * Why: a flow of crews snapshots every crew of the run on every checkpoint, so each completed crew
 * cost a cache lookup and a settled check per task, and the unchanged-snapshot comparison walked
 * its whole task list again: per checkpoint, a cost that grew with every task the run had done
 * (flow-500 went from 0.15 ms to 0.24 ms per checkpoint over its 7,000 checkpoints). With one
 * settled list, a completed crew costs a few comparisons per task and the list is recognized at
 * once by the comparison, the redaction and the provider. A running crew rebuilds only the task
 * under way: each of the others costs a few comparisons, not a cache lookup.
 *
 * And the few comparisons still grew with the run (some 75 ns a task, reading the 14 values a form
 * is built from), so a task whose form held is not asked again while its revision
 * ({@link taskRevision}: every assignment to a task moves it) and what its form reads from the crew
 * (the crew's agents and tasks, in order, and the value codec) stay the same.
 */
export function settledTaskList(crew: CrewParts, settled: SettledValues, settle: Settle): TaskData[] {
  const tasks = crew.tasks;
  const generation = redactionGeneration();
  let known = lists.get(tasks);
  // A secret registered since has every stored form scanned again, through settle.
  if (
    known === undefined ||
    known.settled !== settled ||
    known.generation !== generation ||
    known.kept.length !== tasks.length
  ) {
    known = {
      settled,
      generation,
      kept: new Array(tasks.length),
      revisions: new Array(tasks.length),
      items: new Array(tasks.length),
      list: undefined,
      agents: [],
      members: [],
      codec: undefined,
    };
    lists.set(tasks, known);
  }
  const codec = runValueCodec(crew.valueRegistry);
  const crewSame =
    known.codec === codec && sameMembers(known.agents, crew.agents) && sameMembers(known.members, tasks);
  if (!crewSame) {
    known.agents = crew.agents.slice();
    known.members = tasks.slice();
    known.codec = codec;
  }
  const context = { crew, positions: new TaskPositions(tasks) };
  let changed = known.list === undefined;
  let allSettled = true;
  for (let index = 0; index < tasks.length; index += 1) {
    const task = tasks[index]!;
    const revision = taskRevision(task);
    const kept = known.kept[index];
    if (
      crewSame &&
      kept !== undefined &&
      known.revisions[index] === revision &&
      // A task not started is settled while it has no delegation, and delegations are added in place.
      (task.status === 'completed' || !hasDelegations(task.delegations))
    )
      continue;
    known.revisions[index] = revision;
    if (taskDataHolds(kept, task, context)) continue;
    changed = true;
    const next = keptTaskData(context, task, settle);
    known.kept[index] = next;
    if (next !== undefined) known.items[index] = settle(next.stored);
    else {
      known.items[index] = taskData(context, task, settle);
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
