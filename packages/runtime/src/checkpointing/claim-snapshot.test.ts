import type { EntitySnapshot } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { claimSnapshot, claimStartedFirst } from './claim-snapshot.js';

function crew(id: string, restoreKey?: string): EntitySnapshot {
  return { kind: 'crew', id, name: 'worker', data: restoreKey === undefined ? {} : { restoreKey } };
}

/** Saved crews "worker" one to three, the second under the key "pinned". */
function saved(): EntitySnapshot[] {
  return [crew('one'), crew('two', 'pinned'), crew('three')];
}

const ids = (snapshot: EntitySnapshot | undefined) => snapshot?.id;

describe('claimSnapshot', () => {
  it('hands out saved entities of a name in order, without rules', () => {
    const unclaimed = saved();
    expect([1, 2, 3, 4].map(() => ids(claimSnapshot(unclaimed, 'crew', 'worker')))).toEqual([
      'one',
      'two',
      'three',
      undefined,
    ]);
  });

  it('hands an execution run again what it had started first, in order', () => {
    const unclaimed = saved();
    const started = [
      { kind: 'crew' as const, name: 'worker', id: 'three' },
      { kind: 'crew' as const, name: 'worker', id: 'one' },
    ];
    const claimed = claimStartedFirst(started, () =>
      [1, 2, 3].map(() => ids(claimSnapshot(unclaimed, 'crew', 'worker'))),
    );
    expect(claimed).toEqual(['three', 'one', 'two']);
  });

  it("looks at a nested execution's list before the one around it", () => {
    const unclaimed = saved();
    const claimed = claimStartedFirst([{ kind: 'crew', name: 'worker', id: 'one' }], () =>
      claimStartedFirst([{ kind: 'crew', name: 'worker', id: 'three' }], () =>
        ids(claimSnapshot(unclaimed, 'crew', 'worker')),
      ),
    );
    expect(claimed).toBe('three');
  });

  it('lets an explicit key win over what the execution had started', () => {
    const unclaimed = saved();
    const claimed = claimStartedFirst([{ kind: 'crew', name: 'worker', id: 'one' }], () =>
      ids(claimSnapshot(unclaimed, 'crew', 'worker', 'pinned')),
    );
    expect(claimed).toBe('two');
  });

  it('leaves to their executions the entities reserved for them, when claiming by name', () => {
    const unclaimed = saved();
    const reserved = new Set(['one', 'two']);
    expect(ids(claimSnapshot(unclaimed, 'crew', 'worker', undefined, { reserved }))).toBe('three');
    expect(claimSnapshot(unclaimed, 'crew', 'worker', undefined, { reserved })).toBeUndefined();
    // The execution that had started them still gets them.
    const claimed = claimStartedFirst([{ kind: 'crew', name: 'worker', id: 'two' }], () =>
      ids(claimSnapshot(unclaimed, 'crew', 'worker', undefined, { reserved })),
    );
    expect(claimed).toBe('two');
  });
});
