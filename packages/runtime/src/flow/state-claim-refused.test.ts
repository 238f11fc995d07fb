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

  it('says to kick a nested state off again, not to continue from its latest save (a nested kickoff starts it)', () => {
    const held = leaseHeldByOther('provider-sqlite', 'L-1', holder, 5_000, true);
    const said = stateClaimRefused('TideFlow', 'state-1', held, { nested: true }) as CrewlineError;
    expect(said.message).toContain('then kick off state "state-1" again, or fork instead');
    const moved = new CrewlineError('provider-sqlite', 'conflict', 'not the head', {
      details: { lineageId: 'L-1', headId: 'C-9' },
    });
    const movedSaid = stateClaimRefused('TideFlow', 'state-1', moved, { nested: true }) as CrewlineError;
    expect(movedSaid.message).toBe(
      '[flow] flow "TideFlow": state "state-1" was continued by another kickoff while this one claimed it (its latest save is now C-9); nothing was run: kick off state "state-1" again',
    );
    expect(movedSaid.details).toMatchObject({ headId: 'C-9', flowName: 'TideFlow', stateId: 'state-1' });
  });
});
