import { describe, expect, it } from 'vitest';
import { diffStructure } from './state-diff.js';

describe('diffStructure', () => {
  it('lists what was added, removed or changed inside a flow state, by path', () => {
    const before = { topic: 'tides', plan: { steps: ['read', 'write'], done: false }, 'odd key': 1 };
    const after = { topic: 'tides', plan: { steps: ['read', 'draft', 'write'], done: true }, score: 3 };
    expect(diffStructure(before, after)).toEqual([
      { path: 'plan.steps[1]', change: 'changed', from: 'write', to: 'draft' },
      { path: 'plan.steps[2]', change: 'added', to: 'write' },
      { path: 'plan.done', change: 'changed', from: false, to: true },
      { path: '"odd key"', change: 'removed', from: 1 },
      { path: 'score', change: 'added', to: 3 },
    ]);
    expect(diffStructure({ a: 1 }, { a: 1 })).toEqual([]);
    expect(diffStructure('x', 'y')).toEqual([{ path: '(state)', change: 'changed', from: 'x', to: 'y' }]);
  });
});
