import { hostname } from 'node:os';
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

  it('says to kick a nested state off again, not to continue from its latest save, and offers no fork (a nested kickoff starts it; its id is in the parent)', async () => {
    const held = leaseHeldByOther('provider-sqlite', 'L-1', holder, 5_000, true);
    const said = stateClaimRefused('TideFlow', 'state-1', held, {
      kickoff: 'nested',
      hasSave: true,
    }) as CrewlineError;
    expect(said.message).toBe(
      '[flow] flow "TideFlow": state "state-1" is being run by crew Research on build-7, pid 4242, whose lease has 5.0 s left; wait for it to end (its process is running on this machine), then kick off state "state-1" again',
    );
    expect(said.details).toMatchObject({ lineageId: 'L-1', flowName: 'TideFlow', stateId: 'state-1' });
    const moved = new CrewlineError('provider-sqlite', 'conflict', 'not the head', {
      details: { lineageId: 'L-1', headId: 'C-9' },
    });
    const movedSaid = stateClaimRefused('TideFlow', 'state-1', moved, { kickoff: 'nested' }) as CrewlineError;
    expect(movedSaid.message).toBe(
      '[flow] flow "TideFlow": state "state-1" was run by another kickoff while this one claimed it (its latest save is now C-9); nothing was run: kick off state "state-1" again',
    );
    expect(movedSaid.details).toMatchObject({ headId: 'C-9', flowName: 'TideFlow', stateId: 'state-1' });
  });

  it('names no lineage id nobody gave, and offers a fork only of a save the state has', () => {
    const held = leaseHeldByOther('provider-sqlite', 'L-1', holder, 5_000, true);
    const fresh = stateClaimRefused('TideFlow', 'state-1', held) as CrewlineError;
    expect(fresh.message).not.toContain('L-1');
    expect(fresh.message).not.toContain('fork');
    expect(fresh.message).toContain('state "state-1" is being run by crew Research on build-7, pid 4242');
    const saved = stateClaimRefused('TideFlow', 'state-1', held, { hasSave: true }) as CrewlineError;
    expect(saved.message).toContain(
      'then kick off state "state-1" again to continue from its latest save, or fork its latest save instead (TideFlow.fork({ restoreFrom }), under a new state id)',
    );
    const continued = stateClaimRefused('TideFlow', 'state-1', held, {
      kickoff: 'continued',
      hasSave: true,
    }) as CrewlineError;
    expect(continued.message).toContain(
      'then continue from that checkpoint again, or fork that checkpoint instead (TideFlow.fork({ restoreFrom }), under a new state id)',
    );
    // `Flow.resume({ id }, answer)`: the user gave the state id, not a checkpoint.
    const resumed = stateClaimRefused('TideFlow', 'state-1', held, {
      kickoff: 'resumed',
      hasSave: true,
    }) as CrewlineError;
    expect(resumed.message).toContain(
      'then resume state "state-1" again, or fork its latest save instead (TideFlow.fork({ restoreFrom }), under a new state id)',
    );
  });

  it('says when the holder is this very process', () => {
    const mine = `flow Report in flow Desk on ${hostname()}, pid ${process.pid}`;
    const held = leaseHeldByOther('provider-json', 'L-1', mine, 5_000, true);
    const said = stateClaimRefused('Report', 'r-1', held, { kickoff: 'nested' }) as CrewlineError;
    expect(said.message).toBe(
      `[flow] flow "Report": state "r-1" is being run by ${mine} (this process), whose lease has 5.0 s left; wait for that kickoff to end, then kick off state "r-1" again`,
    );
    // Not seen running here by the store (a container with the same host name and pid): not said.
    const elsewhere = leaseHeldByOther('provider-postgres', 'L-1', mine, 5_000);
    expect((stateClaimRefused('Report', 'r-1', elsewhere) as CrewlineError).message).not.toContain(
      'this process',
    );
  });
});
