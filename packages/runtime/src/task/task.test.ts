import { encodeValue } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { runValueCodec } from '../checkpointing/run-value-codec.js';
import { Task, taskRevision } from './task.js';
import { TaskOutput } from './task-output.js';

function newTask(context?: Task[]): Task {
  return new Task({ description: 'Research {topic}', expectedOutput: 'bullets', name: 'research', context });
}

const settableFields = [
  'agent',
  'conversation',
  'delegations',
  'id',
  'output',
  'startedEmitted',
  'status',
  'systemPrompt',
];

describe("a task's revision", () => {
  it('moves on every assignment to a field', () => {
    const task = newTask();
    const settable = Object.entries(Object.getOwnPropertyDescriptors(task)).filter(
      ([, descriptor]) => descriptor.set !== undefined,
    );
    expect(settable.map(([name]) => name).sort()).toEqual(settableFields);
    for (const [name] of settable) {
      const before = taskRevision(task);
      // The same value again still counts: a snapshot reads the task once more, and finds it unchanged.
      (task as unknown as Record<string, unknown>)[name] = (task as unknown as Record<string, unknown>)[name];
      expect(taskRevision(task), name).not.toBe(before);
    }
  });

  // A field added later as a plain property would change without moving the revision, and a
  // snapshot would keep storing its old value.
  it('has no field outside it: every own property of a task is an accessor', () => {
    for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(newTask()))) {
      expect(descriptor.get, name).toBeDefined();
      expect(descriptor.configurable, name).toBe(false);
    }
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
    expect(task.context).toHaveLength(1);
    expect(task.context?.[0]).toBe(earlier);
    expect(task.context).not.toBe(given);
    expect(() => (task.context as Task[]).push(newTask())).toThrow(TypeError);
    given.push(newTask());
    expect(task.context).toHaveLength(1);
    expect(Object.isFrozen(given)).toBe(false);
  });

  // A subclass field would be a plain property hiding the accessor: the revision would not see it.
  it('refuses a subclass that declares one of its fields as a field of its own', () => {
    class ReportTask extends Task {
      constructor() {
        super({ description: 'Report', expectedOutput: 'a report' });
        Object.defineProperty(this, 'output', { value: undefined, writable: true, enumerable: true });
      }
    }
    expect(() => new ReportTask()).toThrow(TypeError);
  });
});

describe('a task as a value', () => {
  it('shows every field to JSON, a spread and a stored value, as its plain fields did', () => {
    const task = newTask();
    expect(JSON.parse(JSON.stringify(task))).toMatchObject({
      description: 'Research {topic}',
      status: 'pending',
    });
    expect({ ...task }.expectedOutput).toBe('bullets');
    expect(JSON.stringify(encodeValue({ task }, runValueCodec()))).toContain('Research {topic}');
    expect(newTask()).not.toEqual(Object.assign(newTask(), { status: 'completed' }));
  });

  it("has an output that cannot be changed in place (a checkpoint keeps a completed task's output while it is the same object)", () => {
    const output = new TaskOutput({
      taskId: 't',
      name: undefined,
      description: 'd',
      expectedOutput: 'e',
      agentRole: 'r',
      raw: 'answer',
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, cachedInputTokens: 0 },
    });
    expect(() => {
      (output as unknown as { structured: unknown }).structured = { price: 5 };
    }).toThrow(TypeError);
  });
});
