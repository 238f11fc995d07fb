import { describe, expect, it } from 'vitest';
import { type LaneShape, laneRows } from './lane-rows.js';

function lane(start: number, length: number, forks: LaneShape['forks'] = []): LaneShape {
  return { start, length, forks };
}

/** Every lane of the group with its parent, depth first. */
function allLanes(top: readonly LaneShape[]): { lane: LaneShape; parent?: LaneShape }[] {
  const found: { lane: LaneShape; parent?: LaneShape }[] = [];
  const visit = (shape: LaneShape, parent?: LaneShape) => {
    found.push(parent ? { lane: shape, parent } : { lane: shape });
    for (const fork of shape.forks) visit(fork.lane, shape);
  };
  for (const shape of top) visit(shape);
  return found;
}

/** A lineage the way forks make one: lanes forked from random nodes of lanes already there. */
function randomLineage(seed: number, laneCount: number): LaneShape[] {
  let state = seed;
  const random = (below: number) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % below;
  };
  const top = [lane(0, 1 + random(30))];
  const lanes = [...top];
  for (let index = 1; index < laneCount; index += 1) {
    if (random(8) === 0) {
      // A branch whose fork point was pruned: on the group's top level, from column 1.
      const orphan = lane(1, 1 + random(30));
      top.push(orphan);
      lanes.push(orphan);
      continue;
    }
    const parent = lanes[random(lanes.length)]!;
    const at = random(parent.length);
    const fork = lane(parent.start + at + 1, 1 + random(30));
    parent.forks.push({ at, lane: fork });
    lanes.push(fork);
  }
  return top;
}

describe('laneRows', () => {
  it('puts forks below their parent in the order of their fork points', () => {
    const late = lane(8, 3);
    const early = lane(3, 4);
    const main = lane(0, 10, [
      { at: 7, lane: late },
      { at: 2, lane: early },
    ]);
    const rows = laneRows([main]);
    expect(rows.get(main)).toBe(0);
    expect(rows.get(early)).toBe(1);
    expect(rows.get(late)).toBe(2);
  });

  it('never puts two lanes whose columns overlap in one row, and numbers rows from 0 without gaps', () => {
    for (let seed = 1; seed <= 40; seed += 1) {
      const top = randomLineage(seed, 2 + (seed % 25));
      const rows = laneRows(top);
      const lanes = allLanes(top);
      expect(rows.size).toBe(lanes.length);
      for (const { lane: first } of lanes)
        for (const { lane: second } of lanes) {
          if (first === second || rows.get(first) !== rows.get(second)) continue;
          const overlap =
            first.start < second.start + second.length && second.start < first.start + first.length;
          expect(overlap, `seed ${seed}: two overlapping lanes in row ${rows.get(first)}`).toBe(false);
        }
      for (const { lane: fork, parent } of lanes)
        if (parent) expect(rows.get(fork)!).toBeGreaterThan(rows.get(parent)!);
      const used = [...new Set(rows.values())].sort((a, b) => a - b);
      expect(used).toEqual(used.map((_, index) => index));
    }
  });
});
