import { describe, expect, it } from 'vitest';
import { findRerunCheckpoint } from './rerun-point.js';

const save = (id: string, trigger: string, completed: string[]) => ({ id, trigger, completed });
const finished = 'method_execution_finished';

describe('findRerunCheckpoint', () => {
  const history = [
    save('1', finished, ['gather']),
    save('2', 'llm_call_completed', ['gather']),
    save('3', finished, ['gather', 'shape']),
    save('4', finished, ['gather', 'shape', 'publish']),
  ];

  it('picks the newest save before the method completed, one written as a method completed first', async () => {
    const point = await findRerunCheckpoint(history, (each) => each.completed.includes('shape'));
    expect(point?.id).toBe('1');
    expect(
      (await findRerunCheckpoint(history.slice(1), (each) => each.completed.includes('shape')))?.id,
    ).toBe('2');
    expect(await findRerunCheckpoint(history.slice(2), (each) => each.completed.includes('shape'))).toBe(
      undefined,
    );
  });

  it('asks about as few saves as it can, fewer still along one lineage', async () => {
    const asked: string[] = [];
    const hasCompleted = (each: (typeof history)[number]) => {
      asked.push(each.id);
      return each.completed.includes('publish');
    };
    expect((await findRerunCheckpoint(history, hasCompleted))?.id).toBe('3');
    expect(asked).toEqual(['4', '3']);
    asked.length = 0;
    const withLlmSave = [
      ...history.slice(0, 3),
      save('3b', 'llm_call_completed', ['gather', 'shape']),
      history[3]!,
    ];
    expect((await findRerunCheckpoint(withLlmSave, hasCompleted, { oneLineage: true }))?.id).toBe('3');
    expect(asked).toEqual(['4', '3b']);
  });

  it('keeps to saves without the method across branches, where completed methods do not only grow', async () => {
    // A re-run's branch: its save lacks `shape` after an older save that holds it.
    const branched = [
      save('1', finished, ['gather']),
      save('2', finished, ['gather', 'shape']),
      save('3', 'task_completed', ['gather']),
    ];
    const point = await findRerunCheckpoint(branched, (each) => each.completed.includes('shape'));
    expect(point?.id).toBe('1');
  });
});
