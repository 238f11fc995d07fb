import { describe, expect, it } from 'vitest';
import { indentedJsonPieces, SettledTextCache } from './settled-text.js';

/** Settled objects by identity (what SettledValues answers for what it handed out). */
function settledSet(...values: object[]) {
  const set = new Set<object>(values);
  return { has: (value: object) => set.has(value) };
}

const completedTask = { status: 'completed', output: 'ünïcødé ✓ "quoted"\nsecond line', tools: [] };
const agent = { role: 'Researcher', tools: ['notes', 'search'], limits: { rpm: null, nested: [[], {}] } };

const samples: unknown[] = [
  {},
  [],
  { a: 1, b: 'two', c: null, d: true, e: [1, [2, [3]]], f: { g: {} } },
  { skipped: undefined, fn: () => 1, kept: 0, list: [undefined, () => 1, Number.NaN, -0, 1e21] },
  { when: new Date(0), boxed: Object.assign(Object.create(null), { x: 1 }) },
  { crew: { agents: [agent, agent], tasks: [completedTask, { status: 'running', output: null }] } },
  // The same settled object at three depths, and settled objects inside settled ones.
  { top: completedTask, deeper: { deeper: { task: completedTask } }, list: [[completedTask]] },
];

describe('indentedJsonPieces', () => {
  it('concatenates to exactly JSON.stringify(value, null, 2), settled parts or not', () => {
    for (const value of samples) {
      const expected = JSON.stringify(value, null, 2);
      for (const settled of [undefined, settledSet(), settledSet(completedTask, agent, agent.limits)]) {
        const pieces = indentedJsonPieces(value, settled, new SettledTextCache());
        expect(Buffer.concat(pieces).toString('utf8')).toBe(expected);
      }
    }
  });

  it('encodes a settled part once per depth and hands the same buffer to every later call', () => {
    const cache = new SettledTextCache();
    const settled = settledSet(completedTask);
    const entity = { tasks: [completedTask], summary: { last: completedTask } };
    const first = indentedJsonPieces(entity, settled, cache);
    const second = indentedJsonPieces({ ...entity, tasks: [completedTask, completedTask] }, settled, cache);
    const cached = cache.textOf(completedTask, 2);
    expect(first).toContain(cached);
    expect(second.filter((piece) => piece === cached)).toHaveLength(3);
    expect(cache.textOf(completedTask, 2)).toBe(cached);
    // At another depth, another text (indented differently).
    expect(cache.textOf(completedTask, 1)).not.toBe(cached);
  });
});
