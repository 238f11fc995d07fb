import { CrewlineError } from '@crewline/events';
import { leaseHeldByOther } from '@crewline/runtime-state/internal';
import { describe, expect, it } from 'vitest';
import { leaseHeld, leaseWordsOfBrowser } from './lease-held.js';

describe('leaseHeld', () => {
  it("says the browser's keys, not the library's option, and keeps the code and details", () => {
    const refusal = leaseHeldByOther('provider-sqlite', 'L-1', 'crew Research', 5_000, true);
    const said = leaseHeld(refusal, leaseWordsOfBrowser);
    expect(said?.message).toBe(
      '[cli] lineage "L-1" is being continued by crew Research, whose lease has 5.0 s left; wait for it to end (its process is running on this machine) and press e again, or fork instead (press f on the checkpoint to continue it on a new branch at once)',
    );
    expect(said?.code).toBe('conflict');
    expect(said?.details).toEqual(refusal.details);
  });

  it('says a holder whose pid is not running on this machine keeps its lease until it runs out (provider-postgres sets details.holderNotRunningHere and details.holderPid)', () => {
    // The pid is the store's, not read out of the holder's text (which names another).
    const held = leaseHeldByOther('provider-postgres', 'L-1', 'crew Research on build-7, pid 9999', 5_000);
    const refusal = new CrewlineError('provider-postgres', 'conflict', held.message, {
      details: { ...held.details, holderNotRunningHere: true, holderPid: 4242 },
    });
    const said = leaseHeld(refusal, leaseWordsOfBrowser);
    expect(said?.message).toBe(
      '[cli] lineage "L-1" is being continued by crew Research on build-7, pid 9999, whose lease has 5.0 s left; pid 4242 on this machine is not running; its lease runs out then, not sooner (a container with the same host name may run that pid): wait for that and press e again, or fork instead (press f on the checkpoint to continue it on a new branch at once)',
    );
    expect(said?.message).not.toContain('wait for it to end');
    expect(said?.details).toEqual(refusal.details);
  });

  it('leaves any other error alone, a conflict without the lease details too', () => {
    expect(leaseHeld(new CrewlineError('runtime', 'conflict', 'branch taken'), leaseWordsOfBrowser)).toBe(
      undefined,
    );
    expect(leaseHeld(new Error('x'), leaseWordsOfBrowser)).toBe(undefined);
  });
});
