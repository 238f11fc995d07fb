import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { forkOnConflictMessage } from './fork-on-conflict.js';

// A lease fences a lineage (the RUN of `crewline checkpoint list`): the warning of a run that forks
// instead names it so, as the store's refusal does, not as a run id a queue would know.
describe('forkOnConflictMessage names the lineage', () => {
  it('from the refusal of a lease held by another', () => {
    const refusal = new CrewlineError('provider-sqlite', 'conflict', 'held', {
      details: { lineageId: 'L-1', holder: 'crew Research', expiresInMs: 5_000 },
    });
    expect(forkOnConflictMessage(refusal, 'c-1', 'fork/a')).toBe(
      'lineage "L-1" is being continued by crew Research, whose lease has 5.0 s left; continuing on a new branch, fork/a, so nothing of that lineage is overwritten',
    );
  });

  it('from a store that says less', () => {
    const refusal = new CrewlineError('provider-custom', 'conflict', 'held');
    expect(forkOnConflictMessage(refusal, 'c-1', 'fork/a')).toMatch(
      /^the lineage of checkpoint c-1 is held by another process \(provider-custom refused/,
    );
  });
});
