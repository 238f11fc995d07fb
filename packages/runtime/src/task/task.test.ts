import { describe, expect, it } from 'vitest';
import { Task, taskRevision } from './task.js';

function newTask(context?: Task[]): Task {
  return new Task({ description: 'Research {topic}', expectedOutput: 'bullets', name: 'research', context });
}

describe("a task's revision", () => {
  it('moves on every assignment to a field', () => {
    const task = newTask();
    const prototype = Object.getPrototypeOf(task) as object;
    const settable = Object.entries(Object.getOwnPropertyDescriptors(prototype)).filter(
      ([, descriptor]) => descriptor.set !== undefined,
    );
    expect(settable.map(([name]) => name).sort()).toEqual(
      [
        'agent',
        'conversation',
        'delegations',
        'id',
        'output',
        'startedEmitted',
        'status',
        'systemPrompt',
      ].sort(),
    );
    for (const [name] of settable) {
      const before = taskRevision(task);
      // The same value again still counts: a snapshot reads the task once more, and finds it unchanged.
      (task as unknown as Record<string, unknown>)[name] = (task as unknown as Record<string, unknown>)[name];
      expect(taskRevision(task), name).not.toBe(before);
    }
  });

  // A field added later as a plain property would change without moving the revision, and a
  // snapshot would keep storing its old value.
  it('has no field outside it: a task has no own property', () => {
    expect(Object.keys(newTask())).toEqual([]);
    expect(Object.getOwnPropertyNames(newTask())).toEqual([]);
  });

  it('keeps what it was constructed with: those fields cannot be reassigned, and its context is a frozen copy', () => {
    const earlier = newTask();
    const given = [earlier];
    const task = newTask(given);
    for (const name of ['name', 'description', 'expectedOutput', 'context', 'outputSchema']) {
      expect(() => {
        (task as unknown as Record<string, unknown>)[name] = undefined;
      }, name).toThrow(TypeError);
    }
    expect(task.context).toEqual([earlier]);
    expect(task.context).not.toBe(given);
    expect(() => (task.context as Task[]).push(newTask())).toThrow(TypeError);
    given.push(newTask());
    expect(task.context).toHaveLength(1);
    expect(Object.isFrozen(given)).toBe(false);
  });
});
