import { SettledValues } from '@crewline/runtime-state';
import type { CrewData } from '@crewline/runtime-state/internal';
import { describe, expect, it } from 'vitest';
import { newConversation } from '../agent-loop/conversation.js';
import { threeTaskCrew } from '../e2e/support/fixtures.js';
import { offlineModel } from '../models/offline/offline-model.js';
import { ProjectRegistry } from '../project-config/project-config.js';
import { Task } from '../task/task.js';
import { TaskOutput } from '../task/task-output.js';
import { Crew } from './crew.js';

class Money {
  constructor(readonly cents: number) {}
}

function tasksOf(snapshot: { data: unknown }): CrewData['tasks'] {
  return (snapshot.data as CrewData).tasks;
}

describe('the tasks of a crew in its snapshot', () => {
  it('are one settled list while no task changes, so a completed crew is not walked task by task again', async () => {
    const { crew } = threeTaskCrew(offlineModel(), { checkpoint: false });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const settled = new SettledValues();
    const first = tasksOf(crew.snapshotEntity(settled));
    const second = tasksOf(crew.snapshotEntity(settled));
    expect(second).toBe(first);
    expect(settled.has(second)).toBe(true);
    expect(second.map((task) => task.status)).toEqual(['completed', 'completed', 'completed']);
  });

  it('is built again when a task changes, and holds the change', async () => {
    const { crew } = threeTaskCrew(offlineModel(), { checkpoint: false });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const settled = new SettledValues();
    const before = tasksOf(crew.snapshotEntity(settled));
    const task = crew.tasks[1]!;
    task.output = new TaskOutput({ ...task.output!, raw: 'edited answer', edited: true });
    const after = tasksOf(crew.snapshotEntity(settled));
    expect(after).not.toBe(before);
    expect(after[1]!.output?.raw).toBe('edited answer');
    expect(after[0]).toBe(before[0]);

    task.status = 'running';
    const running = tasksOf(crew.snapshotEntity(settled));
    expect(running[1]!.status).toBe('running');
    expect(settled.has(running)).toBe(false);
  });

  it('is not shared between runs', async () => {
    const { crew } = threeTaskCrew(offlineModel(), { checkpoint: false });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const one = new SettledValues();
    const other = new SettledValues();
    tasksOf(crew.snapshotEntity(one));
    const list = tasksOf(crew.snapshotEntity(other));
    expect(other.has(list)).toBe(true);
    expect(one.has(list)).toBe(false);
  });

  it('keeps the stored form of each unchanged task of a running crew without settling it again', async () => {
    const { crew } = threeTaskCrew(offlineModel(), { checkpoint: false });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const settled = new CountingSettle();
    crew.tasks[2]!.status = 'running';
    const before = tasksOf(crew.snapshotEntity(settled));
    settled.calls = 0;
    const after = tasksOf(crew.snapshotEntity(settled));
    expect(after).not.toBe(before);
    expect(after[0]).toBe(before[0]);
    expect(after[1]).toBe(before[1]);
    expect(after[2]!.status).toBe('running');
    // The crew's own parts (inputs, checkpoint setting, each agent and their list, probe usage,
    // knowledge) are settled on each snapshot; its two completed tasks are not.
    expect(settled.calls).toBeLessThanOrEqual(crew.agents.length + 5);
  });

  // A task whose form held is not read again while its revision and its crew's agents and tasks
  // stay the same: each of these changes leaves some task's revision alone and must still be seen.
  it("sees the crew's agents reordered in place, and its tasks", async () => {
    const { crew } = threeTaskCrew(offlineModel(), { checkpoint: false });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const settled = new SettledValues();
    expect(tasksOf(crew.snapshotEntity(settled)).map((task) => task.agent)).toEqual([0, 1, 2]);
    crew.agents.reverse();
    expect(tasksOf(crew.snapshotEntity(settled)).map((task) => task.agent)).toEqual([2, 1, 0]);

    const ids = crew.tasks.map((task) => task.id);
    crew.tasks.reverse();
    const reordered = tasksOf(crew.snapshotEntity(settled));
    expect(reordered.map((task) => task.id)).toEqual(ids.toReversed());
    expect(reordered.map((task) => task.agent)).toEqual([0, 1, 2]);
  });

  it('sees a completed task given to another agent, and a task id restored', async () => {
    const { crew } = threeTaskCrew(offlineModel(), { checkpoint: false });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const settled = new SettledValues();
    const before = tasksOf(crew.snapshotEntity(settled));
    crew.tasks[0]!.agent = crew.agents[2];
    crew.tasks[2]!.id = 'restored-id';
    const after = tasksOf(crew.snapshotEntity(settled));
    expect(after.map((task) => task.agent)).toEqual([2, 1, 2]);
    expect(after[2]!.id).toBe('restored-id');
    expect(after[1]).toBe(before[1]);
  });

  it('sees a class registered after the first snapshot: a structured output is encoded with it', async () => {
    const { crew } = threeTaskCrew(offlineModel(), { checkpoint: false });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const registry = new ProjectRegistry();
    crew.valueRegistry = registry;
    const task = crew.tasks[0]!;
    task.output = new TaskOutput({ ...task.output!, structured: { price: new Money(5) } });
    const settled = new SettledValues();
    const before = JSON.stringify(tasksOf(crew.snapshotEntity(settled))[0]!.output!.structured);
    registry.register({ classes: [{ class: Money, name: 'billing.Money' }] });
    const after = JSON.stringify(tasksOf(crew.snapshotEntity(settled))[0]!.output!.structured);
    expect(after).not.toBe(before);
    expect(after).toContain('billing.Money');
  });

  it("sees tasks swapped in place: a later task's context is stored by the new positions", async () => {
    const { researcher, writer, reviewer } = threeTaskCrew(offlineModel(), { checkpoint: false });
    const a = new Task({
      name: 'a',
      description: 'Research {topic}',
      expectedOutput: 'bullets',
      agent: researcher,
    });
    const b = new Task({
      name: 'b',
      description: 'Collect {topic}',
      expectedOutput: 'bullets',
      agent: writer,
    });
    const c = new Task({
      name: 'c',
      description: 'Write',
      expectedOutput: 'text',
      agent: reviewer,
      context: [a],
    });
    const crew = new Crew({
      name: 'context',
      agents: [researcher, writer, reviewer],
      tasks: [a, b, c],
      checkpoint: false,
    });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const settled = new SettledValues();
    expect(tasksOf(crew.snapshotEntity(settled))[2]!.context).toEqual([0]);
    crew.tasks[0] = b;
    crew.tasks[1] = a;
    expect(tasksOf(crew.snapshotEntity(settled))[2]!.context).toEqual([1]);
  });

  it('sees a delegation added in place to a task not started', () => {
    const { crew } = threeTaskCrew(offlineModel(), { checkpoint: false });
    const settled = new SettledValues();
    expect(tasksOf(crew.snapshotEntity(settled))[2]!.delegations).toEqual({});
    const conversation = newConversation();
    conversation.messages.push({ role: 'user', content: 'coworker work' });
    crew.tasks[2]!.delegations['call-1'] = conversation;
    expect(Object.keys(tasksOf(crew.snapshotEntity(settled))[2]!.delegations)).toEqual(['call-1']);
  });
});

/** SettledValues that counts what is handed to it to settle. */
class CountingSettle extends SettledValues {
  calls = 0;
  override settle<T>(value: T): T {
    this.calls += 1;
    return super.settle(value);
  }
}
