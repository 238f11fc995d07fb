import { describe, expect, it } from 'vitest';
import { TaskNumbering } from './task-numbering.js';

// Crew research (2 tasks) and crew alpha (2 tasks) in the checkpoint, as its view lists them.
const tasks = [
  { index: 0, indexInCrew: 0, crewId: 'research' },
  { index: 1, indexInCrew: 1, crewId: 'research' },
  { index: 2, indexInCrew: 0, crewId: 'alpha' },
  { index: 3, indexInCrew: 1, crewId: 'alpha' },
];

describe('TaskNumbering', () => {
  it('numbers the tasks of the checkpoint across its crews, as info does', () => {
    const numbering = new TaskNumbering(tasks);
    expect(numbering.label('alpha', 1)).toBe('task 4');
    expect(numbering.label('research', 0)).toBe('task 1');
    expect(numbering.label(undefined, 1)).toBeUndefined();
  });

  it('numbers a crew the checkpoint does not hold after every task, one crew after the other', () => {
    const numbering = new TaskNumbering(tasks);
    numbering.crewStarted('polish', 'polish');
    expect(numbering.label('polish', 0)).toBe('task 5');
    expect(numbering.label('polish', 1)).toBe('task 6');
    numbering.crewEnded('polish');
    // A crew without a start event (a crew continued from the checkpoint emits none) too.
    expect(numbering.label('review', 0)).toBe('task 7');
  });

  it('numbers within its crew, naming it, a new crew started while another new crew runs', () => {
    const numbering = new TaskNumbering(tasks);
    numbering.crewStarted('gamma', 'gamma');
    numbering.crewStarted('delta', 'delta');
    expect(numbering.label('gamma', 0)).toBe('task 5');
    expect(numbering.label('delta', 0)).toBe('task 1 of crew delta');
    expect(numbering.label('gamma', 1)).toBe('task 6');
  });
});
