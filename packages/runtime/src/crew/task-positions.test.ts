import { SettledValues } from '@crewline/runtime-state';
import type { CrewData } from '@crewline/runtime-state/internal';
import { describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { offlineModel } from '../models/offline/offline-model.js';
import { Task } from '../task/task.js';
import { Crew } from './crew.js';

/** A crew of `count` tasks, each with the one before it as context, run to the end. */
async function chainedCrew(count: number): Promise<Crew> {
  const agent = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Writes', llm: offlineModel() });
  const tasks: Task[] = [];
  for (let index = 0; index < count; index += 1) {
    const before = tasks.at(-1);
    tasks.push(
      new Task({
        description: `Part ${index}`,
        expectedOutput: 'A paragraph',
        agent,
        ...(before === undefined ? {} : { context: [before] }),
      }),
    );
  }
  const crew = new Crew({ agents: [agent], tasks, checkpoint: false });
  await crew.kickoff();
  return crew;
}

/** Puts a proxy of the crew's task list in its place, counting the members read from it. */
function countReads(crew: Crew): { reads: number } {
  const counter = { reads: 0 };
  const proxy = new Proxy(crew.tasks, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) counter.reads += 1;
      return Reflect.get(target, key, receiver);
    },
  });
  Object.defineProperty(crew, 'tasks', { value: proxy });
  return counter;
}

function contexts(crew: Crew, settled: SettledValues): unknown[] {
  return (crew.snapshotEntity(settled).data as unknown as CrewData).tasks.map((task) => task.context);
}

describe("a task's context in the crew's snapshot", () => {
  it('is found without scanning the task list once per task (a cost per checkpoint that grew with the square of the tasks)', async () => {
    const count = 80;
    const crew = await chainedCrew(count);
    const counter = countReads(crew);
    const settled = new SettledValues();
    contexts(crew, settled);
    for (let snapshot = 0; snapshot < 3; snapshot += 1) {
      counter.reads = 0;
      contexts(crew, settled);
      // The list walked a few times (its stored forms, the positions' check), never once per task.
      expect(counter.reads).toBeLessThanOrEqual(4 * count);
    }
  });

  it('is stored as the positions its tasks have now, after the list is reordered in place', async () => {
    const crew = await chainedCrew(4);
    const settled = new SettledValues();
    expect(contexts(crew, settled)).toEqual([null, [0], [1], [2]]);
    const [first, second] = [crew.tasks[0]!, crew.tasks[1]!];
    crew.tasks[0] = second;
    crew.tasks[1] = first;
    expect(contexts(crew, settled)).toEqual([[1], null, [0], [2]]);
    crew.tasks.push(crew.tasks.splice(2, 1)[0]!);
    expect(contexts(crew, settled)).toEqual([[1], null, [3], [0]]);
  });
});
