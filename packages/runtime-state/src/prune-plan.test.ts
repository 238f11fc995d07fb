import { describe, expect, it } from 'vitest';
import { type PruneCandidate, planPrune, pruneOptionsProblem } from './prune-plan.js';

/** A linear run: `ids` in order, each the parent of the next. */
function run(lineageId: string, ids: readonly string[], branch = 'main', firstParent: string | null = null) {
  return ids.map(
    (id, index): PruneCandidate => ({
      id,
      createdAt: `2026-01-01T00:00:0${id.slice(-1)}.000Z`,
      lineageId,
      parentId: index === 0 ? firstParent : ids[index - 1]!,
      branch,
    }),
  );
}

const idsOf = (entries: readonly PruneCandidate[]) => entries.map((entry) => entry.id);

describe('planPrune', () => {
  it('counts per run, not per branch', () => {
    const all = [...run('a', ['c1', 'c3', 'c5']), ...run('b', ['c2', 'c4'])];
    expect(idsOf(planPrune(all, { keep: 1 }))).toEqual(['c1', 'c2', 'c3']);
    expect(idsOf(planPrune(all, { keep: 1, lineageId: 'b' }))).toEqual(['c2']);
  });

  it('keeps fork points found on other branches, and every head of a run', () => {
    const all = [
      ...run('a', ['c1', 'c2', 'c3', 'c4']),
      ...run('fork', ['c5'], 'fork/x', 'c2'),
      ...run('a', ['c6'], 'main', 'c1'),
    ];
    // c2 is the fork's origin; c4 and c6 are both heads of run a.
    expect(idsOf(planPrune(all, { keep: 1 }))).toEqual(['c1', 'c3']);
    expect(idsOf(planPrune(all, { keep: 1, branch: 'main' }))).toEqual(['c1', 'c3']);
  });

  it("keeps a fork's first checkpoint, the one naming its fork point, whatever the fork's retention", () => {
    const origin = run('a', ['c1', 'c2', 'c4', 'c7']);
    const fork = run('fork', ['c3', 'c5', 'c6'], 'fork/x', 'c2');
    // The fork prunes itself (maxCheckpoints) while its origin is stored: c3 stays, and with it c2.
    expect(idsOf(planPrune([...origin, ...fork], { keep: 1, lineageId: 'fork' }))).toEqual(['c5']);
    const afterFork = [...origin, ...fork.filter((entry) => entry.id !== 'c5')];
    expect(idsOf(planPrune(afterFork, { keep: 1, lineageId: 'a' }))).toEqual(['c1', 'c4']);
    expect(idsOf(planPrune(afterFork, { keep: 1 }))).toEqual(['c1', 'c4']);
    // Forks of forks: a fork of the fork's first checkpoint keeps it as a fork point too.
    const forkOfFork = run('fork-2', ['c8', 'c9'], 'fork/y', 'c3');
    expect(idsOf(planPrune([...afterFork, ...forkOfFork], { keep: 1 }))).toEqual(['c1', 'c4']);
  });

  it('removes nothing without keep or olderThan, and accepts entries in any order', () => {
    const all = run('a', ['c1', 'c2', 'c3']);
    expect(planPrune(all, {})).toEqual([]);
    expect(idsOf(planPrune([...all].reverse(), { keep: 2 }))).toEqual(['c1']);
  });

  it('names what is wrong with invalid options', () => {
    expect(pruneOptionsProblem({ keep: 0 })).toMatch(/keep must be a whole number of at least 1/);
    expect(pruneOptionsProblem({ keep: 1.5 })).toMatch(/got 1.5/);
    expect(pruneOptionsProblem({ olderThan: new Date('nope') })).toMatch(/valid Date/);
    expect(pruneOptionsProblem({ keep: 3, olderThan: new Date() })).toBeUndefined();
  });
});
