import { CrewlineError } from '@crewline/events';
import { leaseHeldByOther } from '@crewline/runtime-state/internal';
import { describe, expect, it } from 'vitest';
import { stateClaimRefused } from './state-claim-refused.js';

describe('stateClaimRefused', () => {
  const holder = 'crew Research on build-7, pid 4242';

  it('says that the holder pid is not running here when the store found so (provider-postgres: details.holderPid)', () => {
    const held = leaseHeldByOther('provider-postgres', 'L-1', holder, 5_000);
    const refusal = new CrewlineError('provider-postgres', 'conflict', held.message, {
      details: { ...held.details, holderNotRunningHere: true, holderPid: 4242 },
    });
    const said = stateClaimRefused('TideFlow', 'state-1', refusal) as CrewlineError;
    expect(said.message).toContain('pid 4242 on this machine is not running');
    expect(said.message).toContain('its lease runs out then, not sooner');
    expect(said.message).not.toContain('wait for it to end');
    expect(said.details).toMatchObject({ holderPid: 4242, flowName: 'TideFlow', stateId: 'state-1' });
  });

  it('says to wait for a holder that may be alive', () => {
    const refusal = leaseHeldByOther('provider-sqlite', 'L-1', holder, 5_000, true);
    const said = stateClaimRefused('TideFlow', 'state-1', refusal) as CrewlineError;
    expect(said.message).toContain(
      'wait for it to end (its process is running on this machine), then kick off state "state-1" again',
    );
  });
});
