import { describe, expect, it } from 'vitest';
import { foreignLease, leaseHeldByOther, leaseHeldMessage, leaseLost, notTheHead } from './lease-refusals.js';

// What a lease fences is a lineage (the RUN column of `crewline checkpoint list`). Called "run", its
// id was read as a run id of `crewline runs list`, which does not know it.
describe('lease refusals name the lineage', () => {
  const refusals = {
    'held by another': leaseHeldByOther('provider-sqlite', 'L-1', 'crew Research', 5_000),
    'a new run where one is': notTheHead('provider-sqlite', 'L-1', null, 'c-9'),
    'no head': notTheHead('provider-sqlite', 'L-1', 'c-1', null),
    'not the head': notTheHead('provider-sqlite', 'L-1', 'c-1', 'c-9'),
    'lost to another': leaseLost(
      'provider-sqlite',
      'L-1',
      { held: true, mine: false, holder: 'crew Research', expiresInMs: 5_000 },
      'checkpoint "c-2" was not stored',
    ),
    'never held': leaseLost(
      'provider-sqlite',
      'L-1',
      { held: false, mine: false, holder: null, expiresInMs: null },
      'checkpoint "c-2" was not stored',
    ),
    'under a foreign lease': foreignLease('provider-sqlite', 'c-2', 'L-1', 'L-2'),
  };

  it.each(Object.entries(refusals))('%s', (_case, error) => {
    expect(error.message).toContain('lineage "L-1"');
    expect(error.message).not.toMatch(/\brun "L-\d"/);
  });

  it('a lease held by another: the holder, the time left and the advice, the note after the name', () => {
    expect(leaseHeldMessage('L-1', 'crew Research', 17_250, 'wait')).toBe(
      'lineage "L-1" is being continued by crew Research, whose lease has 17.2 s left; wait',
    );
    expect(leaseHeldMessage('L-1', 'crew Research', 17_250, 'wait', '(see the list)')).toBe(
      'lineage "L-1" (see the list) is being continued by crew Research, whose lease has 17.2 s left; wait',
    );
  });
});
